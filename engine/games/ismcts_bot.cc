#include "engine/games/ismcts_bot.h"

#include <algorithm>
#include <array>
#include <bit>
#include <bitset>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/core/spec_query.h"

namespace cfr::lc {

namespace {

constexpr std::string_view kWhat = "ismcts?";
constexpr std::string_view kKeys = "iters, c, rollout, cap, value, scale, bias";
constexpr int kMaxIters = 200'000;

// A move as every deal names it. Card-phase action ids name hand slots, and the same slot holds
// other cards in other deals (the opponent's unknown cards, the cards drawn from the deck), so
// the tree keys a card move by the card and play/discard: Card's byte (color·16 + rank) · 2 +
// discard, below 256; a draw by 256 + (its id − 2·hand_size): the deck or a pile, the same in
// every deal. Identical cards (wagers of one colour) are one move.
constexpr int kDrawKeys = 256;
constexpr int kMaxKeys = kDrawKeys + 1 + kMaxColors;
static_assert((((kMaxColors - 1) << 4) | kMaxRanks) * 2 + 1 < kDrawKeys, "card keys must stay below the draw keys");
using KeySet = std::bitset<kMaxKeys>;

int move_key(const State& d, int action) noexcept {
  const int h2 = 2 * d.rules().hand_size;
  if (d.phase() != Phase::kCard) return kDrawKeys + (action - h2);
  return d.hand_card(d.current_player(), action / 2).v * 2 + (action & 1);
}

// The legal moves of d by key, each with one action that makes it (the lowest slot's).
struct LegalMoves {
  std::array<int, kMaxActionsAnyGame> key{};
  std::array<int, kMaxActionsAnyGame> action{};
  int n = 0;
  KeySet keys;

  explicit LegalMoves(const State& d) noexcept {
    for (ActionMask m = d.legal_mask(); m != 0; m &= m - 1) {
      const int a = std::countr_zero(m);
      const int k = move_key(d, a);
      if (keys.test(static_cast<std::size_t>(k))) continue;
      keys.set(static_cast<std::size_t>(k));
      key[static_cast<std::size_t>(n)] = k;
      action[static_cast<std::size_t>(n)] = a;
      ++n;
    }
  }
  int action_of(int k) const noexcept {
    for (int i = 0; i < n; ++i)
      if (key[static_cast<std::size_t>(i)] == k) return action[static_cast<std::size_t>(i)];
    return -1;
  }
};

// One tree node: the move that leads to it from its parent (its key), the seat that chose it, and
// the statistics of the iterations through it (their rewards for that seat).
struct Node {
  int first_child = -1;
  int next_sibling = -1;
  int key = -1;
  int mover = 0;
  std::uint32_t visits = 0;
  std::uint32_t avail = 0;  // iterations in which this move was legal when its parent was selected from
  double reward = 0;
  KeySet expanded;  // the moves that have a child
};

class IsmctsBot final : public Bot {
 public:
  IsmctsBot(const Rules& rules, IsmctsParams params, std::string name)
      : p_(std::move(params)), name_(std::move(name)), rollout_(make_bot(p_.rollout, rules)) {}

  std::string_view name() const noexcept override { return name_; }
  bool deterministic() const noexcept override { return false; }

  int choose_action(const State& s, Rng& rng) override {
    CFR_CHECK(!s.is_terminal(), "no legal action (terminal state)");
    // The tree lives in members: traversal threads sharing one opponent bot take turns. Nothing
    // carries over between decisions, so the order they take changes no move.
    const std::lock_guard lock(mu_);
    const LegalMoves root(s);
    if (root.n == 1) return root.action[0];
    const int me = s.current_player();
    nodes_.clear();
    nodes_.reserve(static_cast<std::size_t>(p_.iters) + 1);
    nodes_.push_back(Node{});
    for (int it = 0; it < p_.iters; ++it) {
      State d = s;
      d.resample_hidden(me, rng);
      path_.clear();
      path_.push_back(0);
      descend(d, rng);
      for (int m = 0; m < p_.cap && !d.is_terminal(); ++m) d.apply_action(rollout_->choose_action(d, rng));
      const double r0 = reward_for_seat0(d);
      for (const int n : path_) {
        Node& node = nodes_[static_cast<std::size_t>(n)];
        ++node.visits;
        node.reward += node.mover == 0 ? r0 : 1.0 - r0;
      }
    }
    // The most visited child of the root; ties to the higher mean reward, then the lower key.
    int best = -1;
    for (int ch = nodes_[0].first_child; ch >= 0; ch = nodes_[static_cast<std::size_t>(ch)].next_sibling) {
      const Node& c = nodes_[static_cast<std::size_t>(ch)];
      if (best < 0) {
        best = ch;
        continue;
      }
      const Node& b = nodes_[static_cast<std::size_t>(best)];
      const double cm = c.reward / c.visits, bm = b.reward / b.visits;
      if (c.visits > b.visits || (c.visits == b.visits && (cm > bm || (cm == bm && c.key < b.key)))) best = ch;
    }
    return root.action_of(nodes_[static_cast<std::size_t>(best)].key);
  }

 private:
  // Selection by UCB among the children legal in d, down to a node with an untried legal move:
  // one is added (drawn uniformly; the rollout bot's move first under a progressive bias) and
  // played. Stops at the end of the game too.
  void descend(State& d, Rng& rng) {
    int node = 0;
    while (!d.is_terminal()) {
      const LegalMoves legal(d);
      const KeySet fresh = legal.keys & ~nodes_[static_cast<std::size_t>(node)].expanded;
      // The rollout bot's move here, when its progressive bias is on: tried first, then favoured.
      const int hint = p_.bias > 0 ? move_key(d, rollout_->choose_action(d, rng)) : -1;
      if (fresh.any()) {
        int k = hint;
        if (k < 0 || !fresh.test(static_cast<std::size_t>(k))) {
          // The j-th fresh move in the order of the legal list.
          int j = static_cast<int>(rng.below(static_cast<std::uint32_t>(fresh.count())));
          for (int i = 0; i < legal.n; ++i)
            if (fresh.test(static_cast<std::size_t>(legal.key[static_cast<std::size_t>(i)])) && j-- == 0) {
              k = legal.key[static_cast<std::size_t>(i)];
              break;
            }
        }
        const int child = static_cast<int>(nodes_.size());
        Node n;
        n.key = k;
        n.mover = d.current_player();
        n.avail = 1;
        n.next_sibling = nodes_[static_cast<std::size_t>(node)].first_child;
        nodes_[static_cast<std::size_t>(node)].first_child = child;
        nodes_[static_cast<std::size_t>(node)].expanded.set(static_cast<std::size_t>(k));
        nodes_.push_back(n);
        d.apply_action(legal.action_of(k));
        path_.push_back(child);
        return;
      }
      int best = -1;
      double best_u = -std::numeric_limits<double>::infinity();
      for (int ch = nodes_[static_cast<std::size_t>(node)].first_child; ch >= 0;
           ch = nodes_[static_cast<std::size_t>(ch)].next_sibling) {
        Node& c = nodes_[static_cast<std::size_t>(ch)];
        if (!legal.keys.test(static_cast<std::size_t>(c.key))) continue;
        ++c.avail;
        const double u = c.reward / c.visits + p_.c * std::sqrt(std::log(static_cast<double>(c.avail)) / c.visits) +
                         (c.key == hint ? p_.bias / (c.visits + 1.0) : 0.0);
        if (u > best_u) {
          best_u = u;
          best = ch;
        }
      }
      d.apply_action(legal.action_of(nodes_[static_cast<std::size_t>(best)].key));
      path_.push_back(best);
      node = best;
    }
  }

  double reward_for_seat0(const State& d) const noexcept {
    const double diff = d.returns(0);
    if (p_.value == "win") return diff > 0 ? 1.0 : diff < 0 ? 0.0 : 0.5;
    return std::clamp(0.5 + diff / (2 * p_.scale), 0.0, 1.0);
  }

  IsmctsParams p_;
  std::string name_;
  std::unique_ptr<Bot> rollout_;
  std::vector<Node> nodes_;  // the tree, reused from decision to decision
  std::vector<int> path_;    // the nodes of one iteration's descent
  std::mutex mu_;            // one decision at a time
};

}  // namespace

bool names_ismcts(std::string_view name) noexcept { return name == "ismcts" || name.starts_with(kIsmctsPrefix); }

IsmctsParams parse_ismcts_params(std::string_view query) {
  IsmctsParams p;
  for (const QueryPair& kv : split_spec_query(query, kWhat, kKeys)) {
    if (kv.key == "iters") {
      p.iters = static_cast<int>(spec_number(kWhat, kv, 1, kMaxIters, true));
    } else if (kv.key == "c") {
      p.c = spec_number(kWhat, kv, 0, 100);
    } else if (kv.key == "cap") {
      p.cap = static_cast<int>(spec_number(kWhat, kv, 0, 10000, true));
    } else if (kv.key == "bias") {
      p.bias = spec_number(kWhat, kv, 0, 100);
    } else if (kv.key == "scale") {
      p.scale = spec_number(kWhat, kv, 1, 10000);
    } else if (kv.key == "value") {
      if (kv.value != "diff" && kv.value != "win")
        throw InputError(fmt::format("{}: value={}: must be diff or win", kWhat, kv.value));
      p.value = std::string(kv.value);
    } else if (kv.key == "rollout") {
      if (names_ismcts(kv.value) || !names_bot(kv.value))
        throw InputError(fmt::format("{}: rollout={}: must be a rule bot ({}, or heuristic_expert?key=value)", kWhat, kv.value,
                                     join_names(bot_names())));
      p.rollout = std::string(kv.value);
    } else {
      throw InputError(fmt::format("{}: unknown key '{}' (keys: {})", kWhat, kv.key, kKeys));
    }
  }
  return p;
}

std::unique_ptr<Bot> make_ismcts_bot(const Rules& rules, IsmctsParams params, std::string name) {
  rules.validate();
  CFR_CHECK(params.iters >= 1 && params.iters <= kMaxIters, "ismcts: iters out of range");
  return std::make_unique<IsmctsBot>(rules, std::move(params), std::move(name));
}

}  // namespace cfr::lc
