#include "apps/checkpoint_policy.h"

#include <filesystem>

#include <fmt/format.h>

#include "apps/algorithms/algorithms.h"
#include "apps/algorithms/deep_cfr/evaluation.h"
#include "apps/checkpoint_format.h"
#include "apps/deep_cfr.h"
#include "engine/core/errors.h"
#include "engine/core/files.h"
#include "engine/tabular/game_tree.h"
#include "engine/traversal/traversal.h"
#include "engine/traversal/traversal_games.h"
#include "nets/networks.h"

namespace cfr {

struct LoadedCheckpoint {
  std::unique_ptr<NetworkSet> nets;
  LostCitiesTraversalGame game;
};

namespace {

class StrategyBatchBot final : public lc::BatchBot {
 public:
  StrategyBatchBot(Evaluator& net, const LostCitiesTraversalGame& game, PlayMode play, std::shared_ptr<void> keep_alive)
      : net_(net), game_(game), play_(play), keep_(std::move(keep_alive)) {}
  std::string_view name() const noexcept override {
    return play_ == PlayMode::kSampled ? "checkpoint-sampled" : "checkpoint";
  }
  void choose_actions(std::span<const lc::State* const> states, std::span<Rng* const> rngs,
                      std::span<int> actions) override {
    const std::size_t n = states.size(), W = static_cast<std::size_t>(game_.input_width()),
                      A = static_cast<std::size_t>(game_.num_actions());
    in_.resize(n * W);
    out_.resize(n * A);
    legal_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      legal_[i] = states[i]->legal_mask();
      game_.encode(*states[i], states[i]->current_player(), in_.data() + i * W);
    }
    net_.evaluate(in_, legal_, out_);
    for (std::size_t i = 0; i < n; ++i) {
      const float* o = out_.data() + i * A;
      if (play_ == PlayMode::kSampled) {  // the average strategy itself: softmax over the legal logits
        float probs[kMaxTraversalActions];
        masked_softmax(o, legal_[i], static_cast<int>(A), probs);
        actions[i] = sample_action(probs, legal_[i], *rngs[i]);
        continue;
      }
      int best = std::countr_zero(legal_[i]);
      for (ActionMask m = legal_[i]; m != 0; m &= m - 1) {
        const int a = std::countr_zero(m);
        if (o[a] > o[best]) best = a;
      }
      actions[i] = best;
    }
  }

 private:
  Evaluator& net_;
  const LostCitiesTraversalGame& game_;
  PlayMode play_;
  std::shared_ptr<void> keep_;
  std::vector<float> in_, out_;
  std::vector<ActionMask> legal_;
};

}  // namespace

std::unique_ptr<lc::BatchBot> make_strategy_batch_bot(Evaluator& strategy, const LostCitiesTraversalGame& game,
                                                      PlayMode play, std::shared_ptr<void> keep_alive) {
  return std::make_unique<StrategyBatchBot>(strategy, game, play, std::move(keep_alive));
}

std::unique_ptr<lc::BatchBot> CheckpointPolicy::batch_bot(PlayMode play) const {
  if (config.run.game != "lost_cities")
    throw InputError(fmt::format("a {} checkpoint cannot play Lost Cities", config.run.game));
  return make_strategy_batch_bot(state->nets->evaluator(kStrategyNet), state->game, play, state);
}

CheckpointPolicy load_checkpoint_policy(const std::string& path) {
  namespace fs = std::filesystem;
  if (!fs::exists(path)) throw InputError(fmt::format("{}: no such checkpoint or run directory", path));
  require_directory(path, "checkpoint or run directory");
  std::string ck = path;
  if (fs::exists(fs::path(path) / "checkpoints")) ck = latest_checkpoint_dir(path);
  // The config a checkpoint was trained with is inside it (verified with its other files).
  // Checkpoints without one (older formats) are refused by their meta.json's version below.
  fs::path config = fs::path(ck) / "config.toml";
  if (!fs::exists(config)) config = fs::path(ck).parent_path().parent_path() / "config.toml";
  if (!fs::exists(config))
    throw InputError(fmt::format("{}: not a checkpoint directory (no config.toml in it or in its run directory)", ck));
  (void)verify_checkpoint(ck);  // its files are the bytes written, checked once, before any is read
  CheckpointPolicy p;
  p.config = load_config(config.string());
  const auto [W, A] = game_widths(p.config);
  p.state = std::make_shared<LoadedCheckpoint>();
  p.state->nets = std::make_unique<NetworkSet>(
      algorithm_networks(algorithm_from_name(p.config.algorithm.name), W, A),
      NetworkConfig{.hidden_size = p.config.network.hidden_size, .num_layers = p.config.network.num_layers,
                    .activation = p.config.network.activation, .device = "cpu"},
      0);
  // Verified above: compared with the config and the network set only (no second hashing).
  const std::string meta = (fs::path(ck) / "meta.json").string();
  p.iteration = parse_checkpoint_meta(read_text_file(meta), meta, checkpoint_shape(p.config), p.state->nets->specs()).iteration;
  p.state->nets->load((fs::path(ck) / "nets.pt").string());
  p.state->game.rules = p.config.rules;
  p.state->game.encoding = p.config.encoding;
  return p;
}

TabularPolicy CheckpointPolicy::tabular(const GameTree& tree) const {
  return strategy_policy(tree, state->nets->evaluator(kStrategyNet));
}

AnyPlayer make_any_player(const std::string& name, const lc::Rules& rules) {
  static constexpr std::string_view kGreedy = "checkpoint:", kSampled = "checkpoint-sampled:";
  AnyPlayer out;
  const bool greedy = name.rfind(kGreedy, 0) == 0, sampled = name.rfind(kSampled, 0) == 0;
  if (greedy || sampled) {
    const PlayMode play = sampled ? PlayMode::kSampled : PlayMode::kGreedy;
    const CheckpointPolicy p = load_checkpoint_policy(name.substr((sampled ? kSampled : kGreedy).size()));
    if (p.config.run.game != "lost_cities")
      throw InputError(fmt::format("{}: a {} checkpoint cannot play Lost Cities", name, p.config.run.game));
    if (!(p.config.rules == rules))
      throw InputError(fmt::format("{}: the checkpoint was trained with other Lost Cities rules", name));
    out.batch = p.batch_bot(play);
    return out;
  }
  out.bot = lc::make_bot(name, rules);
  return out;
}

}  // namespace cfr
