#pragma once

namespace cfr {

/// How a trained strategy network plays Lost Cities: greedily (argmax over the legal logits,
/// lowest id on ties; a deterministic bot) or by sampling the softmax over the legal logits (the
/// average strategy Deep CFR learned, a mixed strategy), from each game's own RNG stream.
enum class PlayMode { kGreedy, kSampled };

}  // namespace cfr
