#include "python/states.h"

#include <array>
#include <concepts>
#include <span>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "engine/core/json_input.h"
#include "engine/core/rng.h"
#include "engine/games/games.h"
#include "engine/games/replay.h"

namespace cfr::py {

namespace {

using nlohmann::json;

inline constexpr int kTerminalPlayer = -4;  // OpenSpiel's kTerminalPlayerId

// --- per-game text ----------------------------------------------------------------------------

std::string lc_action_text(const lc::State& s, int a) {
  const lc::Rules& r = s.rules();
  const int me = s.current_player();
  if (a < 0 || a >= r.action_size()) return fmt::format("action {} (out of range)", a);
  if (a < r.draw_deck_action()) {
    const int slot = a / 2;
    const char* verb = a % 2 == 0 ? "play" : "discard";
    if (slot >= s.hand_size(me)) return fmt::format("{} slot {} (empty)", verb, slot);
    return fmt::format("{} {}", verb, lc::card_name(r, s.hand_card(me, slot)));
  }
  if (a == r.draw_deck_action()) return "draw deck";
  const int color = a - r.draw_deck_action() - 1;
  if (s.pile_size(color) == 0) return fmt::format("take c{} (empty pile)", color);
  return fmt::format("take {}", lc::card_name(r, s.pile_top(color)));
}

std::string lc_view(const lc::State& s, int p) {
  const lc::Rules& r = s.rules();
  std::string out = fmt::format("player {} view; to move: player {}, {} phase; deck {}; scores {} {}\n", p, s.current_player(),
                                s.phase() == lc::Phase::kCard ? "CARD" : "DRAW", s.deck_size(), s.total(0), s.total(1));
  out += "hand:";
  for (int i = 0; i < s.hand_size(p); ++i) {
    out += ' ';
    out += lc::card_name(r, s.hand_card(p, i));
  }
  out += fmt::format("\nopponent hand: {} cards\n", s.hand_size(1 - p));
  for (int q = 0; q < 2; ++q) {
    out += fmt::format("expeditions {}:", q);
    for (int c = 0; c < r.n_colors; ++c) {
      out += fmt::format(" c{}[", c);
      for (int i = 0; i < s.expedition_card_count(q, c); ++i) {
        const lc::Card card = s.expedition_card(q, c, i);
        if (i > 0) out += ' ';
        out += card.is_wager() ? std::string("W") : std::to_string(r.face(card.rank()));
      }
      out += "]";
    }
    out += "\n";
  }
  out += "piles:";
  for (int c = 0; c < r.n_colors; ++c)
    out +=
        s.pile_size(c) == 0 ? fmt::format(" c{}:-", c) : fmt::format(" {}({})", lc::card_name(r, s.pile_top(c)), s.pile_size(c));
  if (s.pending_color() != lc::State::kNoColor) out += fmt::format("\ndiscarded this turn: c{}", s.pending_color());
  return out;
}

constexpr const char* kKuhnCards[] = {"J", "Q", "K"};
constexpr const char* kLeducCards[] = {"J1", "J2", "Q1", "Q2", "K1", "K2"};

template <class S>
std::string small_action_text(const S& s, int a) {
  if constexpr (std::same_as<S, kuhn::State>) {
    if (s.is_chance_node()) return a >= 0 && a < kuhn::kNumCards ? fmt::format("deal {}", kKuhnCards[a]) : "deal ?";
    return a == kuhn::kPass ? "pass" : a == kuhn::kBet ? "bet" : fmt::format("action {} (out of range)", a);
  } else if constexpr (std::same_as<S, leduc::State>) {
    if (s.is_chance_node()) return a >= 0 && a < leduc::kNumCards ? fmt::format("deal {}", kLeducCards[a]) : "deal ?";
    return a == leduc::kFold    ? "fold"
           : a == leduc::kCall  ? "call"
           : a == leduc::kRaise ? "raise"
                                : fmt::format("action {} (out of range)", a);
  } else {
    return fmt::format("action {}", a);
  }
}

template <class S>
std::string small_state_text(const S& s) {
  if constexpr (std::same_as<S, kuhn::State>) {
    std::string h;
    for (int i = 0; i < s.history_size(); ++i) h += s.history(i) == kuhn::kPass ? 'p' : 'b';
    const auto card = [&](int p) { return s.card(p) < 0 ? "?" : kKuhnCards[s.card(p)]; };
    return fmt::format("cards {} {}; history '{}'", card(0), card(1), h);
  } else if constexpr (std::same_as<S, leduc::State>) {
    const auto card = [](int c) { return c < 0 ? "?" : kLeducCards[c]; };
    return fmt::format("private {} {}; public {}; round {}; pot {} {}", card(s.private_card(0)), card(s.private_card(1)),
                       card(s.public_card()), s.round() + 1, s.contribution(0), s.contribution(1));
  } else {
    return std::string(S::kName);
  }
}

// --- the state ---------------------------------------------------------------------------------

template <class S>
class StateImpl final : public AnyState {
 public:
  static constexpr bool kLc = std::same_as<S, lc::State>;
  static constexpr bool kEnum = EnumerableGame<S>;

  StateImpl(S s, std::vector<int> deck, std::optional<std::uint64_t> chance_seed)
      : s_(std::move(s)), deck_(std::move(deck)), chance_seed_(chance_seed) {
    if (chance_seed_) chance_rng_ = Rng(*chance_seed_);
    resolve_chance();
  }

  std::unique_ptr<AnyState> clone() const override { return std::make_unique<StateImpl>(*this); }

  int current_player() const override { return s_.is_terminal() ? kTerminalPlayer : s_.current_player(); }
  bool is_terminal() const override { return s_.is_terminal(); }
  bool is_chance_node() const override {
    if constexpr (kEnum) return s_.is_chance_node();
    return false;
  }
  std::vector<std::pair<int, double>> chance_outcomes() const override {
    std::vector<std::pair<int, double>> v;
    if constexpr (kEnum) {
      if (s_.is_chance_node()) {
        std::array<ChanceOutcome, kMaxChanceOutcomes> out{};
        const int k = s_.chance_outcomes(out);
        for (int i = 0; i < k; ++i) v.emplace_back(out[i].action, out[i].prob);
      }
    }
    return v;
  }
  ActionMask legal_mask() const override { return s_.legal_mask(); }
  int num_distinct_actions() const override { return s_.num_distinct_actions(); }
  double returns(int p) const override { return s_.returns(p); }
  int info_state_size() const override { return s_.info_state_size(); }
  void encode(int p, float* out) const override {
    s_.encode_info_state(p, std::span<float>(out, static_cast<std::size_t>(s_.info_state_size())));
  }
  void apply_action(int a) override {
    s_.apply_action(a);  // throws IllegalActionError and changes nothing for an illegal action
    history_.push_back(a);
    resolve_chance();
  }
  std::string action_to_string(int a) const override {
    if constexpr (kLc)
      return lc_action_text(s_, a);
    else
      return small_action_text(s_, a);
  }
  std::string observation_string(int p) const override { return information_state_string(p); }
  std::string information_state_string(int p) const override {
    if constexpr (kLc) {
      return lc_view(s_, p);
    } else if constexpr (kEnum) {
      try {
        return s_.info_state_key(p);
      } catch (const CheckError& e) {  // e.g. before the player's card is dealt: the caller's input
        throw InputError(e.what());
      }
    } else {
      return to_string();
    }
  }
  std::string to_string() const override {
    if constexpr (kLc)
      return s_.to_string();
    else
      return small_state_text(s_);
  }
  std::unique_ptr<AnyState> resample_hidden(int p, std::uint64_t seed) const override {
    auto copy = std::make_unique<StateImpl>(*this);
    copy->apply_resample({.step = static_cast<int>(history_.size()), .player = p, .seed = seed});
    return copy;
  }
  std::string serialize() const override {
    json j;
    if constexpr (kLc) {
      if (deck_.empty()) throw InputError("this state came from a match without its deck and history: it cannot be serialized");
      j = json::parse(lc::transcript_line(0, s_.rules(), deck_, history_, {}));
      j.erase("game");
    } else {
      j = {{"game", std::string(S::kName)}, {"history", history_}};
      if (chance_seed_) j["seed"] = *chance_seed_;
    }
    if (!resamples_.empty()) {
      json r = json::array();
      for (const Resample& x : resamples_) r.push_back({x.step, x.player, x.seed});
      j["resamples"] = r;
    }
    return j.dump();
  }
  const std::vector<int>& history() const override { return history_; }
  const std::vector<Resample>& resamples() const override { return resamples_; }
  bool equals(const AnyState& other) const override {
    const auto* o = dynamic_cast<const StateImpl*>(&other);
    return o != nullptr && o->s_ == s_;
  }
  std::pair<int, int> scores() const override {
    if constexpr (kLc)
      return {s_.total(0), s_.total(1)};
    else
      throw InputError(fmt::format("scores() is Lost Cities' own; {} has returns() only", S::kName));
  }

  const lc::State* lc_state() const override {
    if constexpr (kLc)
      return &s_;
    else
      return nullptr;
  }

  void apply_resample(const Resample& r) {
    if (r.player != 0 && r.player != 1) throw InputError(fmt::format("resample player {} is not 0 or 1", r.player));
    Rng rng(r.seed);
    s_.resample_hidden(r.player, rng);
    resamples_.push_back(r);
  }

 private:
  void resolve_chance() {
    if constexpr (kEnum) {
      if (!chance_seed_) return;
      while (s_.is_chance_node()) {
        std::array<ChanceOutcome, kMaxChanceOutcomes> out{};
        const int k = s_.chance_outcomes(out);
        const int a =
            pick_chance_outcome(std::span<const ChanceOutcome>(out.data(), static_cast<std::size_t>(k)), chance_rng_.uniform());
        s_.apply_action(a);
        history_.push_back(a);
      }
    }
  }

  S s_;
  std::vector<int> deck_;  // Lost Cities: the deck it was dealt from (public ids, top last)
  std::optional<std::uint64_t> chance_seed_;
  Rng chance_rng_{0};
  std::vector<int> history_;
  std::vector<Resample> resamples_;
};

std::vector<Resample> resamples_from_json(const json& j) {
  std::vector<Resample> out;
  if (!j.is_array()) throw InputError("serialized state: 'resamples' must be an array of [step, player, seed]");
  for (std::size_t i = 0; i < j.size(); ++i) {
    const json& r = j[i];
    if (!r.is_array() || r.size() != 3 || !r[0].is_number_integer() || !r[1].is_number_integer() || !r[2].is_number_unsigned())
      throw InputError(fmt::format("serialized state: resamples[{}] must be [step, player, seed], got {}", i, json_brief(r)));
    out.push_back({.step = json_int(r[0], fmt::format("resamples[{}][0] (step)", i), "serialized state"),
                   .player = json_int(r[1], fmt::format("resamples[{}][1] (player)", i), "serialized state"),
                   .seed = r[2].get<std::uint64_t>()});
  }
  return out;
}

/// Replays `actions` on `st` (whose history may already hold auto-resolved chance outcomes),
/// applying each resample when the history reaches its step.
template <class Impl>
void replay_into(Impl& st, const std::vector<int>& actions, const std::vector<Resample>& resamples) {
  std::size_t next_resample = 0;
  const auto due = [&] {
    while (next_resample < resamples.size() && resamples[next_resample].step == static_cast<int>(st.history().size()))
      st.apply_resample(resamples[next_resample++]);
  };
  for (std::size_t i = 0; i < actions.size(); ++i) {
    if (i < st.history().size()) {  // a chance outcome the state resolved itself
      if (st.history()[i] != actions[i])
        throw InputError(
            fmt::format("serialized state: history[{}] is {}, but the seed deals {}", i, actions[i], st.history()[i]));
      continue;
    }
    due();
    try {
      st.apply_action(actions[i]);
    } catch (const IllegalActionError& e) {
      throw InputError(fmt::format("serialized state: history[{}]: {}", i, e.what()));
    }
  }
  due();
  if (next_resample != resamples.size())
    throw InputError(fmt::format("serialized state: resamples[{}] is at step {}, beyond the history ({} actions)", next_resample,
                                 resamples[next_resample].step, st.history().size()));
}

}  // namespace

std::vector<std::string> registered_games() { return game_names(); }

std::unique_ptr<AnyState> wrap_lost_cities_state(const lc::State& s) {
  return std::make_unique<StateImpl<lc::State>>(s, std::vector<int>{}, std::nullopt);
}

Game::Game(const std::string& name, const std::string& rules_json) : name_(name) {
  visit_registered_game(name, [&]<class R>(R) {
    using S = typename R::State;
    enumerable_ = R::kEnumerable;
    const bool no_rules = rules_json.empty() || rules_json == "{}" || rules_json == "null";
    if constexpr (std::same_as<S, lc::State>) {
      if (!no_rules) rules_ = lc::rules_from_json_text(rules_json, "rules");
      num_actions_ = rules_.action_size();
      info_size_ = lc::encoding_size(rules_, lc::EncodingOptions{});
    } else {
      if (!no_rules) throw InputError(fmt::format("rules: game '{}' has no rules; got {}", name, rules_json));
      const auto widths = traversal_widths(name, GameSettings{});
      info_size_ = widths.first;
      num_actions_ = widths.second;
    }
  });
}

std::string Game::rules_json() const { return name_ == lc::State::kName ? lc::rules_json_text(rules_) : "{}"; }

std::unique_ptr<AnyState> Game::new_initial_state(std::optional<std::uint64_t> seed,
                                                  const std::optional<std::vector<int>>& deck) const {
  return visit_registered_game(name_, [&]<class R>(R) -> std::unique_ptr<AnyState> {
    using S = typename R::State;
    if constexpr (std::same_as<S, lc::State>) {
      if (seed && deck) throw InputError("new_initial_state: give a seed or a deck, not both");
      std::vector<int> ids;
      if (deck) {
        ids = *deck;
      } else {
        std::array<int, lc::kMaxDeck> buf{};
        const int n = lc::State::shuffled_deck(rules_, seed.value_or(0), buf);
        ids.assign(buf.begin(), buf.begin() + n);
      }
      lc::State s = lc::State::from_deck(rules_, ids);  // InputError naming what is wrong with the deck
      return std::make_unique<StateImpl<S>>(std::move(s), std::move(ids), std::nullopt);
    } else if constexpr (R::kEnumerable) {
      if (deck) throw InputError(fmt::format("new_initial_state: game '{}' has no deck; give a seed or nothing", name_));
      return std::make_unique<StateImpl<S>>(S::initial(), std::vector<int>{}, seed);
    } else {
      if (deck) throw InputError(fmt::format("new_initial_state: game '{}' has no deck", name_));
      Rng rng(seed.value_or(0));
      return std::make_unique<StateImpl<S>>(R::Adapter::from_settings(GameSettings{}).new_game(rng), std::vector<int>{},
                                            std::nullopt);
    }
  });
}

std::unique_ptr<AnyState> Game::deserialize_state(const std::string& text) const {
  json j = parse_json_input(text, "serialized state");  // nested at most kMaxJsonDepth: dump() below is bounded
  if (!j.is_object()) throw InputError("serialized state: not a JSON object");
  std::vector<Resample> resamples;
  if (j.contains("resamples")) {
    resamples = resamples_from_json(j["resamples"]);
    j.erase("resamples");
  }
  return visit_registered_game(name_, [&]<class R>(R) -> std::unique_ptr<AnyState> {
    using S = typename R::State;
    if constexpr (std::same_as<S, lc::State>) {
      // A transcript line (engine/games/replay.h): its own reader's checks and messages.
      if (!j.contains("game")) j["game"] = 0;
      const lc::ReplayGame g = lc::parse_replay_line(j.dump(), 1, 0, "serialized state");
      if (!(g.rules == rules_))
        throw InputError(fmt::format("serialized state: its rules {} are not this game's {}", lc::rules_json_text(g.rules),
                                     lc::rules_json_text(rules_)));
      StateImpl<S> st(lc::State::from_deck(rules_, g.deck), g.deck, std::nullopt);
      replay_into(st, g.actions, resamples);
      if (g.totals && resamples.empty()) {
        const auto sc = st.scores();
        if (sc.first != (*g.totals)[0] || sc.second != (*g.totals)[1])
          throw InputError(fmt::format("serialized state: totals [{}, {}] recorded, the actions give [{}, {}]", (*g.totals)[0],
                                       (*g.totals)[1], sc.first, sc.second));
      }
      return std::make_unique<StateImpl<S>>(std::move(st));
    } else if constexpr (R::kEnumerable) {
      for (const auto& [key, value] : j.items())
        if (key != "game" && key != "history" && key != "seed")
          throw InputError(fmt::format("serialized state: unknown field '{}'", key));
      if (!j.contains("game") || j["game"] != name_)
        throw InputError(fmt::format("serialized state: field 'game' must be \"{}\"", name_));
      std::optional<std::uint64_t> seed;
      if (j.contains("seed")) {
        if (!j["seed"].is_number_unsigned()) throw InputError("serialized state: 'seed' must be an unsigned integer");
        seed = j["seed"].get<std::uint64_t>();
      }
      std::vector<int> actions;
      if (!j.contains("history") || !j["history"].is_array())
        throw InputError("serialized state: field 'history' must be an array of actions");
      const json& history = j["history"];
      for (std::size_t i = 0; i < history.size(); ++i)
        actions.push_back(json_int(history[i], fmt::format("history[{}]", i), "serialized state"));
      StateImpl<S> st(S::initial(), {}, seed);
      replay_into(st, actions, resamples);
      return std::make_unique<StateImpl<S>>(std::move(st));
    } else {
      throw InputError(fmt::format("serialized state: game '{}' cannot be deserialized", name_));
    }
  });
}

}  // namespace cfr::py
