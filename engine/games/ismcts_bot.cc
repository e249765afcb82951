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

}  // namespace

// The search's state: its tree (reused from decision to decision), one descent's path, and the
// root's prior by move key while a decision has one.
struct IsmctsSearch::Impl {
  IsmctsParams p;
  std::unique_ptr<Bot> rollout;
  std::vector<Node> nodes;
  std::vector<int> path;
  std::array<float, kMaxKeys> root_prior{};
  double root_weight = 0;  // 0: the root is biased like every node (toward the rollout bot's move)

  Impl(const Rules& rules, IsmctsParams params) : p(std::move(params)), rollout(make_bot(p.rollout, rules)) {}

  int decide(const State& s, Rng& rng, const float* prior, double weight) {
    CFR_CHECK(!s.is_terminal(), "no legal action (terminal state)");
    const LegalMoves root(s);
    if (root.n == 1) return root.action[0];
    root_weight = prior != nullptr ? weight : 0;
    if (prior != nullptr) {  // by key: identical cards (wagers) in two slots are one move, their mass summed
      root_prior.fill(0);
      for (ActionMask m = s.legal_mask(); m != 0; m &= m - 1) {
        const int a = std::countr_zero(m);
        if (std::isfinite(prior[a]) && prior[a] > 0) root_prior[static_cast<std::size_t>(move_key(s, a))] += prior[a];
      }
    }
    const int me = s.current_player();
    nodes.clear();
    nodes.reserve(static_cast<std::size_t>(p.iters) + 1);
    nodes.push_back(Node{});
    for (int it = 0; it < p.iters; ++it) {
      State d = s;
      d.resample_hidden(me, rng);
      path.clear();
      path.push_back(0);
      descend(d, rng);
      for (int m = 0; m < p.cap && !d.is_terminal(); ++m) d.apply_action(rollout->choose_action(d, rng));
      const double r0 = reward_for_seat0(d);
      for (const int n : path) {
        Node& node = nodes[static_cast<std::size_t>(n)];
        ++node.visits;
        node.reward += node.mover == 0 ? r0 : 1.0 - r0;
      }
    }
    // The most visited child of the root; ties to the higher mean reward, then the lower key.
    int best = -1;
    for (int ch = nodes[0].first_child; ch >= 0; ch = nodes[static_cast<std::size_t>(ch)].next_sibling) {
      const Node& c = nodes[static_cast<std::size_t>(ch)];
      if (best < 0) {
        best = ch;
        continue;
      }
      const Node& b = nodes[static_cast<std::size_t>(best)];
      const double cm = c.reward / c.visits, bm = b.reward / b.visits;
      if (c.visits > b.visits || (c.visits == b.visits && (cm > bm || (cm == bm && c.key < b.key)))) best = ch;
    }
    return root.action_of(nodes[static_cast<std::size_t>(best)].key);
  }

  // Selection by UCB among the children legal in d, down to a node with an untried legal move:
  // one is added (drawn uniformly; the rollout bot's move first under a progressive bias, at a
  // root with a prior its most probable move) and played. Stops at the end of the game too.
  void descend(State& d, Rng& rng) {
    int node = 0;
    while (!d.is_terminal()) {
      const LegalMoves legal(d);
      const KeySet fresh = legal.keys & ~nodes[static_cast<std::size_t>(node)].expanded;
      const bool prior_here = node == 0 && root_weight > 0;
      // The rollout bot's move here, when its progressive bias is on: tried first, then favoured.
      int hint = -1;
      if (prior_here) {
        float top = -1;
        for (int i = 0; i < legal.n; ++i) {
          const int k = legal.key[static_cast<std::size_t>(i)];
          if (fresh.test(static_cast<std::size_t>(k)) && root_prior[static_cast<std::size_t>(k)] > top) {
            top = root_prior[static_cast<std::size_t>(k)];
            hint = k;
          }
        }
      } else if (p.bias > 0) {
        hint = move_key(d, rollout->choose_action(d, rng));
      }
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
        const int child = static_cast<int>(nodes.size());
        Node n;
        n.key = k;
        n.mover = d.current_player();
        n.avail = 1;
        n.next_sibling = nodes[static_cast<std::size_t>(node)].first_child;
        nodes[static_cast<std::size_t>(node)].first_child = child;
        nodes[static_cast<std::size_t>(node)].expanded.set(static_cast<std::size_t>(k));
        nodes.push_back(n);
        d.apply_action(legal.action_of(k));
        path.push_back(child);
        return;
      }
      int best = -1;
      double best_u = -std::numeric_limits<double>::infinity();
      for (int ch = nodes[static_cast<std::size_t>(node)].first_child; ch >= 0;
           ch = nodes[static_cast<std::size_t>(ch)].next_sibling) {
        Node& c = nodes[static_cast<std::size_t>(ch)];
        if (!legal.keys.test(static_cast<std::size_t>(c.key))) continue;
        ++c.avail;
        const double bias = prior_here      ? root_weight * root_prior[static_cast<std::size_t>(c.key)] / (c.visits + 1.0)
                            : c.key == hint ? p.bias / (c.visits + 1.0)
                                            : 0.0;
        const double u = c.reward / c.visits + p.c * std::sqrt(std::log(static_cast<double>(c.avail)) / c.visits) + bias;
        if (u > best_u) {
          best_u = u;
          best = ch;
        }
      }
      d.apply_action(legal.action_of(nodes[static_cast<std::size_t>(best)].key));
      path.push_back(best);
      node = best;
    }
  }

  double reward_for_seat0(const State& d) const noexcept {
    const double diff = d.returns(0);
    if (p.value == "win") return diff > 0 ? 1.0 : diff < 0 ? 0.0 : 0.5;
    return std::clamp(0.5 + diff / (2 * p.scale), 0.0, 1.0);
  }
};

IsmctsSearch::IsmctsSearch(const Rules& rules, IsmctsParams params) {
  rules.validate();
  CFR_CHECK(params.iters >= 1 && params.iters <= kMaxIters, "ismcts: iters out of range");
  impl_ = std::make_unique<Impl>(rules, std::move(params));
}
IsmctsSearch::~IsmctsSearch() = default;
IsmctsSearch::IsmctsSearch(IsmctsSearch&&) noexcept = default;
IsmctsSearch& IsmctsSearch::operator=(IsmctsSearch&&) noexcept = default;

int IsmctsSearch::decide(const State& s, Rng& rng, const float* root_prior, double root_weight) {
  return impl_->decide(s, rng, root_prior, root_weight);
}

namespace {

class IsmctsBot final : public Bot {
 public:
  IsmctsBot(const Rules& rules, IsmctsParams params, std::string name)
      : name_(std::move(name)), search_(rules, std::move(params)) {}

  std::string_view name() const noexcept override { return name_; }
  bool deterministic() const noexcept override { return false; }

  int choose_action(const State& s, Rng& rng) override {
    // The tree lives in the search: traversal threads sharing one opponent bot take turns. Nothing
    // carries over between decisions, so the order they take changes no move.
    const std::lock_guard lock(mu_);
    return search_.decide(s, rng);
  }

 private:
  std::string name_;
  IsmctsSearch search_;
  std::mutex mu_;  // one decision at a time
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
  return std::make_unique<IsmctsBot>(rules, std::move(params), std::move(name));
}

}  // namespace cfr::lc
