#pragma once
// Reservoir memories of Deep CFR (deep-cfr.md §3): samples stored contiguously, struct of arrays
// (no object per sample), growing to `capacity` and then following the exact reservoir rule:
// with `seen` samples offered so far (this one included), draw j uniform in [0, seen) and replace
// slot j if j < capacity. Batches are drawn uniformly without replacement (a partial
// Fisher–Yates shuffle of a persistent index permutation: no allocation per batch) straight into
// caller-owned row-major buffers, ready to wrap as tensors.
//
// Thread-safety: one writer or reader at a time (the trainer thread owns its memories).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <istream>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/core/game.h"
#include "engine/core/rng.h"
#include "engine/traversal/traversal_context.h"

namespace cfr {

/// What a network trains on: rows of (input, target, legal mask, weight column). The weight column
/// is a raw sample's iteration, or a merged row's total weight (MergedSamples).
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  /// Rows a batch can draw from.
  virtual std::int64_t rows() const noexcept = 0;
  /// Draws n distinct rows (1 ≤ n ≤ rows()) into row-major buffers: inputs n×input_width,
  /// targets n×target_width, legal n×target_width (1/0), weights n.
  virtual void sample(int n, Rng& rng, std::span<float> inputs, std::span<float> targets, std::span<float> legal,
                      std::span<float> weights) = 0;
};

class ReservoirMemory final : public BatchSource {
 public:
  ReservoirMemory(std::int64_t capacity, int input_width, int target_width, std::uint64_t seed)
      : capacity_(capacity), in_w_(input_width), out_w_(target_width), rng_(seed), id_(next_id()) {
    CFR_CHECK(capacity > 0, "reservoir capacity {}", capacity);
    // The whole capacity is reserved at once (address space only: pages are touched as samples
    // arrive), so that growing never reallocates: a reallocation copies the memory so far,
    // stalls the inserting thread (and with it, through back-pressure, the traversals) and
    // needs twice the memory while it lasts.
    const auto n = static_cast<std::size_t>(capacity);
    inputs_.reserve(n * static_cast<std::size_t>(in_w_));
    targets_.reserve(n * static_cast<std::size_t>(out_w_));
    masks_.reserve(n);
    iterations_.reserve(n);
    order_.reserve(n);
    stamps_.reserve(n);
  }
  // Neither copyable nor movable: a copy, or a moved-from memory filled again, would share this
  // memory's id() and stamps with other content (and a memory is gigabytes: it stays in place).
  ReservoirMemory(const ReservoirMemory&) = delete;
  ReservoirMemory& operator=(const ReservoirMemory&) = delete;

  /// Offers one sample (input_width + target_width floats, a legal mask, its iteration).
  void insert(const float* input, const float* target, ActionMask legal, std::int32_t iteration) {
    ++seen_;
    std::int64_t slot;
    if (size_ < capacity_) {
      slot = size_++;
      inputs_.resize(static_cast<std::size_t>(size_ * in_w_));
      targets_.resize(static_cast<std::size_t>(size_ * out_w_));
      masks_.resize(static_cast<std::size_t>(size_));
      iterations_.resize(static_cast<std::size_t>(size_));
      stamps_.resize(static_cast<std::size_t>(size_));
      order_.push_back(slot);
    } else {
      const std::uint64_t j = rng_.below64(static_cast<std::uint64_t>(seen_));
      if (j >= static_cast<std::uint64_t>(capacity_)) return;
      slot = static_cast<std::int64_t>(j);
    }
    std::copy_n(input, in_w_, inputs_.data() + slot * in_w_);
    std::copy_n(target, out_w_, targets_.data() + slot * out_w_);
    masks_[static_cast<std::size_t>(slot)] = legal;
    iterations_[static_cast<std::size_t>(slot)] = iteration;
    stamps_[static_cast<std::size_t>(slot)] = ++writes_;
  }

  /// Offers every sample of a buffer, in order (only those of `player` when player ≥ 0).
  void insert_all(const SampleBuffer& b, int player = -1) {
    for (int i = 0; i < b.size(); ++i)
      if (player < 0 || b.players[static_cast<std::size_t>(i)] == player)
        insert(b.input(i), b.target(i), b.masks[static_cast<std::size_t>(i)], b.iterations[static_cast<std::size_t>(i)]);
  }

  std::int64_t rows() const noexcept override { return size_; }

  /// Draws n distinct samples (n ≤ size()) into row-major buffers: inputs n×input_width,
  /// targets n×target_width, legal n×target_width (1/0), iterations n.
  void sample(int n, Rng& rng, std::span<float> inputs, std::span<float> targets, std::span<float> legal,
              std::span<float> iterations) override {
    CFR_CHECK(n >= 1 && n <= size_, "batch of {} from a memory of {}", n, size_);
    for (int k = 0; k < n; ++k) {
      const std::int64_t r = k + static_cast<std::int64_t>(rng.below64(static_cast<std::uint64_t>(size_ - k)));
      std::swap(order_[static_cast<std::size_t>(k)], order_[static_cast<std::size_t>(r)]);
      const std::int64_t s = order_[static_cast<std::size_t>(k)];
      std::copy_n(inputs_.data() + s * in_w_, in_w_, inputs.data() + static_cast<std::int64_t>(k) * in_w_);
      std::copy_n(targets_.data() + s * out_w_, out_w_, targets.data() + static_cast<std::int64_t>(k) * out_w_);
      const ActionMask m = masks_[static_cast<std::size_t>(s)];
      for (int a = 0; a < out_w_; ++a) legal[static_cast<std::size_t>(k * out_w_ + a)] = mask_has(m, a) ? 1.0F : 0.0F;
      iterations[static_cast<std::size_t>(k)] = static_cast<float>(iterations_[static_cast<std::size_t>(s)]);
    }
  }

  /// Binary state (for checkpoints): widths, capacity, counts, RNG and every array.
  void save(std::ostream& out) const {
    const std::int64_t head[5] = {capacity_, in_w_, out_w_, size_, seen_};
    out.write(reinterpret_cast<const char*>(head), sizeof head);
    const auto st = rng_.state();
    out.write(reinterpret_cast<const char*>(st.w), sizeof st.w);
    write_vec(out, inputs_);
    write_vec(out, targets_);
    write_vec(out, masks_);
    write_vec(out, iterations_);
    write_vec(out, order_);
  }
  /// Restores what save() wrote; throws InputError (prefixed by `where`) on a truncated or
  /// corrupt stream, a memory of another shape, or one holding more samples than this memory's
  /// capacity. Nothing is allocated beyond what the stream holds; on error the memory is empty.
  void load(std::istream& in, const std::string& where) {
    clear();
    std::int64_t head[5];
    in.read(reinterpret_cast<char*>(head), sizeof head);
    if (!in) throw InputError(where + ": truncated reservoir header");
    if (head[1] != in_w_ || head[2] != out_w_)
      throw InputError(fmt::format("{}: memory of samples {}→{}, this run needs {}→{}", where, head[1], head[2], in_w_, out_w_));
    if (head[0] < 1 || head[3] < 0 || head[3] > head[0] || head[4] < head[3])
      throw InputError(
          fmt::format("{}: corrupt reservoir header (capacity {}, size {}, seen {})", where, head[0], head[3], head[4]));
    if (head[3] > capacity_)
      throw InputError(
          fmt::format("{}: the memory holds {} samples, more than the configured capacity {}", where, head[3], capacity_));
    Rng::StateWords st{};
    in.read(reinterpret_cast<char*>(st.w), sizeof st.w);
    if (!in) throw InputError(where + ": truncated reservoir header");
    const auto n = static_cast<std::size_t>(head[3]);
    try {
      read_vec(in, inputs_, n * static_cast<std::size_t>(in_w_), where);
      read_vec(in, targets_, n * static_cast<std::size_t>(out_w_), where);
      read_vec(in, masks_, n, where);
      read_vec(in, iterations_, n, where);
      read_vec(in, order_, n, where);
      std::vector<bool> hit(n);
      for (const std::int64_t s : order_) {
        if (s < 0 || s >= head[3] || hit[static_cast<std::size_t>(s)])
          throw InputError(fmt::format("{}: corrupt reservoir (batch order is not a permutation)", where));
        hit[static_cast<std::size_t>(s)] = true;
      }
    } catch (...) {
      clear();
      throw;
    }
    size_ = head[3];
    seen_ = head[4];
    rng_.set_state(st);
    stamps_.resize(n);
    for (auto& stamp : stamps_) stamp = ++writes_;
  }

  /// Forgets every sample and restarts the reservoir's draws from `seed` (a memory refilled from
  /// nothing every iteration, whose draws must not depend on earlier iterations).
  void reset(std::uint64_t seed) noexcept {
    clear();
    rng_.reseed(seed);
  }
  /// Forgets every sample (the capacity and RNG stay).
  void clear() noexcept {
    size_ = seen_ = 0;
    inputs_.clear();
    targets_.clear();
    masks_.clear();
    iterations_.clear();
    order_.clear();
    stamps_.clear();
  }

  std::int64_t size() const noexcept { return size_; }
  std::int64_t seen() const noexcept { return seen_; }
  std::int64_t capacity() const noexcept { return capacity_; }
  int input_width() const noexcept { return in_w_; }
  int target_width() const noexcept { return out_w_; }
  /// Bytes held by the samples (what a full memory needs: bytes_per_sample() · capacity).
  std::size_t bytes() const noexcept { return static_cast<std::size_t>(size_) * bytes_per_sample(in_w_, out_w_); }
  static std::size_t bytes_per_sample(int in_w, int out_w) noexcept {
    return sizeof(float) * static_cast<std::size_t>(in_w + out_w) + sizeof(ActionMask) + sizeof(std::int32_t) +
           sizeof(std::int64_t) + sizeof(std::uint64_t);
  }
  const float* input(std::int64_t i) const noexcept { return inputs_.data() + i * in_w_; }
  const float* target(std::int64_t i) const noexcept { return targets_.data() + i * out_w_; }
  ActionMask mask(std::int64_t i) const noexcept { return masks_[static_cast<std::size_t>(i)]; }
  std::int32_t iteration(std::int64_t i) const noexcept { return iterations_[static_cast<std::size_t>(i)]; }
  /// When slot i was last written: distinct for every write to this memory (inserts and loads
  /// alike) and never 0, so equal stamps mean an unchanged slot. With id(), unique to this memory
  /// object in the process, it lets MergedSamples revisit only the slots written since its last
  /// rebuild.
  std::uint64_t stamp(std::int64_t i) const noexcept { return stamps_[static_cast<std::size_t>(i)]; }
  std::uint64_t id() const noexcept { return id_; }

 private:
  static std::uint64_t next_id() noexcept {
    static std::atomic<std::uint64_t> ids{0};
    return ++ids;
  }
  template <class T>
  static void write_vec(std::ostream& out, const std::vector<T>& v) {
    const auto n = static_cast<std::int64_t>(v.size());
    out.write(reinterpret_cast<const char*>(&n), sizeof n);
    out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  }
  template <class T>
  static void read_vec(std::istream& in, std::vector<T>& v, std::size_t expected, const std::string& where) {
    std::int64_t n = 0;
    in.read(reinterpret_cast<char*>(&n), sizeof n);
    if (!in || n < 0 || static_cast<std::size_t>(n) != expected)
      throw InputError(fmt::format("{}: corrupt reservoir (array of {} where {} expected)", where, n, expected));
    // Allocate only what the stream can still deliver (a corrupt count is not an allocation).
    const std::istream::pos_type here = in.tellg();
    if (here != std::istream::pos_type(-1)) {
      in.seekg(0, std::ios::end);
      const std::istream::pos_type end = in.tellg();
      in.seekg(here);
      if (end != std::istream::pos_type(-1) &&
          static_cast<std::uint64_t>(end - here) / sizeof(T) < static_cast<std::uint64_t>(expected))
        throw InputError(where + ": truncated reservoir data");
    }
    v.resize(expected);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(expected * sizeof(T)));
    if (!in) throw InputError(where + ": truncated reservoir data");
  }

  std::int64_t capacity_;
  int in_w_, out_w_;
  Rng rng_;
  std::int64_t size_ = 0, seen_ = 0;
  std::vector<float> inputs_, targets_;
  std::vector<ActionMask> masks_;
  std::vector<std::int32_t> iterations_;
  std::vector<std::int64_t> order_;  // a permutation of [0, size): batches draw from its prefix
  std::uint64_t id_, writes_ = 0;
  std::vector<std::uint64_t> stamps_;  // per slot: the value of writes_ that wrote it
};

/// A memory's samples merged per distinct input (`memory.merge_duplicates`): one row per input
/// with the weighted mean of its samples' targets and their total weight (the sum of their
/// iterations with linear weights, else their count). A weighted loss over the rows equals the
/// weighted loss over the raw samples up to a constant (the spread of the targets within an
/// input; true of the masked MSE and of the soft-label cross-entropy, both linear or quadratic in
/// the target), so it has the same minimiser; but a drawn row carries every sample of its input,
/// so the targets' noise per input is averaged exactly instead of over many noisy SGD steps.
/// Rao–Blackwellised batches, for games whose inputs repeat: Kuhn and Leduc hold a few hundred
/// distinct inputs against a million samples. Where inputs never repeat (Lost Cities) the rows
/// are a copy of the samples and nothing is gained.
///
/// rebuild() reads the memory's current content (rows in the order of their first sample's
/// slot: a function of the content, so a resumed run draws the same batches). Rows are drawn
/// uniformly without replacement; the weight column is the row's total weight.
///
/// Rebuilding is one pass over the memory, hashing only the inputs of slots written since the
/// last rebuild from the same memory: a dictionary of the distinct inputs seen (and each slot's
/// entry in it, checked by the slot's write stamp) persists across rebuilds. The rows, their
/// order and their sums are exactly those of a rebuild from nothing (same pass, same order of
/// additions); the dictionary is forgotten when it holds twice as many inputs as the memory has
/// samples (inputs no sample holds any more).
class MergedSamples final : public BatchSource {
 public:
  /// What a view keeps per memory slot (its dictionary entry and write stamp); its rows and
  /// dictionary add about twice an input's bytes per distinct input.
  static constexpr std::size_t kBytesPerSlot = sizeof(std::uint32_t) + sizeof(std::uint64_t);

  void rebuild(const ReservoirMemory& memory, bool linear) {
    const auto n = static_cast<std::size_t>(memory.size());
    if (memory.id() != memory_id_ || index_.size() > 2 * n + 4096) {
      index_.clear();
      slot_entry_.clear();
      slot_stamp_.clear();
      memory_id_ = memory.id();
    }
    in_w_ = memory.input_width();
    out_w_ = memory.target_width();
    slot_entry_.resize(n);
    slot_stamp_.resize(n, 0);  // 0: no stamp (a memory's stamps start at 1)
    row_of_entry_.assign(index_.size(), -1);
    inputs_.clear();
    masks_.clear();
    sums_.clear();
    weights_.clear();
    const auto bytes = static_cast<std::size_t>(in_w_) * sizeof(float);
    for (std::size_t k = 0; k < n; ++k) {
      const auto slot = static_cast<std::int64_t>(k);
      if (slot_stamp_[k] != memory.stamp(slot)) {
        const std::string_view key(reinterpret_cast<const char*>(memory.input(slot)), bytes);
        auto found = index_.find(key);
        if (found == index_.end()) {
          CFR_CHECK(index_.size() < 0xFFFFFFFFU, "{} distinct inputs", index_.size());
          found = index_.emplace(std::string(key), static_cast<std::uint32_t>(index_.size())).first;
          row_of_entry_.push_back(-1);
        }
        slot_entry_[k] = found->second;
        slot_stamp_[k] = memory.stamp(slot);
      }
      std::int64_t& row = row_of_entry_[slot_entry_[k]];
      if (row < 0) {
        row = static_cast<std::int64_t>(masks_.size());
        inputs_.insert(inputs_.end(), memory.input(slot), memory.input(slot) + in_w_);
        masks_.push_back(memory.mask(slot));
        sums_.resize(sums_.size() + static_cast<std::size_t>(out_w_), 0.0);
        weights_.push_back(0.0);
      }
      const auto r = static_cast<std::size_t>(row);
      CFR_CHECK(masks_[r] == memory.mask(slot), "samples of one input with legal masks {:#x} and {:#x}", masks_[r],
                memory.mask(slot));
      const double w = linear ? memory.iteration(slot) : 1.0;
      const float* t = memory.target(slot);
      double* sum = sums_.data() + r * static_cast<std::size_t>(out_w_);
      for (int a = 0; a < out_w_; ++a) sum[a] += w * t[a];
      weights_[r] += w;
    }
    order_.resize(masks_.size());
    for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<std::int64_t>(i);
  }

  std::int64_t rows() const noexcept override { return static_cast<std::int64_t>(masks_.size()); }
  /// Samples merged into row i: total weight and weighted mean target.
  double weight(std::int64_t i) const noexcept { return weights_[static_cast<std::size_t>(i)]; }
  double mean_target(std::int64_t i, int a) const noexcept {
    const double w = weights_[static_cast<std::size_t>(i)];
    return w > 0 ? sums_[static_cast<std::size_t>(i * out_w_ + a)] / w : 0.0;
  }
  const float* input(std::int64_t i) const noexcept { return inputs_.data() + i * in_w_; }
  /// Distinct inputs in the dictionary kept across rebuilds (those of the memory and some it held).
  std::size_t dictionary_size() const noexcept { return index_.size(); }
  /// The row of an input (input_width floats), or −1 if no sample has it.
  std::int64_t find(const float* input) const {
    const auto found =
        index_.find(std::string_view(reinterpret_cast<const char*>(input), static_cast<std::size_t>(in_w_) * sizeof(float)));
    return found == index_.end() ? -1 : row_of_entry_[found->second];
  }

  void sample(int n, Rng& rng, std::span<float> inputs, std::span<float> targets, std::span<float> legal,
              std::span<float> weights) override {
    CFR_CHECK(n >= 1 && n <= rows(), "batch of {} from {} merged rows", n, rows());
    const std::int64_t size = rows();
    for (int k = 0; k < n; ++k) {
      const std::int64_t r = k + static_cast<std::int64_t>(rng.below64(static_cast<std::uint64_t>(size - k)));
      std::swap(order_[static_cast<std::size_t>(k)], order_[static_cast<std::size_t>(r)]);
      const std::int64_t s = order_[static_cast<std::size_t>(k)];
      std::copy_n(input(s), in_w_, inputs.data() + static_cast<std::int64_t>(k) * in_w_);
      for (int a = 0; a < out_w_; ++a) targets[static_cast<std::size_t>(k * out_w_ + a)] = static_cast<float>(mean_target(s, a));
      const ActionMask m = masks_[static_cast<std::size_t>(s)];
      for (int a = 0; a < out_w_; ++a) legal[static_cast<std::size_t>(k * out_w_ + a)] = mask_has(m, a) ? 1.0F : 0.0F;
      weights[static_cast<std::size_t>(k)] = static_cast<float>(weights_[static_cast<std::size_t>(s)]);
    }
  }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  int in_w_ = 0, out_w_ = 0;
  std::uint64_t memory_id_ = 0;
  // Persistent across rebuilds from one memory: input bytes → dictionary entry; per slot, its
  // entry and the stamp of the write it was read at. Per rebuild: entry → row (−1: none).
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> index_;
  std::vector<std::uint32_t> slot_entry_;
  std::vector<std::uint64_t> slot_stamp_;
  std::vector<std::int64_t> row_of_entry_;
  std::vector<float> inputs_;
  std::vector<ActionMask> masks_;
  std::vector<double> sums_, weights_;
  std::vector<std::int64_t> order_;
};

}  // namespace cfr
