#include "engine/games/replay.h"

#include <zlib.h>

#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "engine/core/files.h"
#include "engine/core/json_input.h"
#include "engine/games/bots.h"

namespace cfr::lc {

namespace {

using nlohmann::json;

Rules rules_from_json(const json& j, std::string_view where) {
  if (!j.is_object()) throw InputError(fmt::format("{}: field 'rules' must be an object", where));
  Rules r;
  struct Knob {
    const char* name;
    int Rules::*field;
  };
  static constexpr Knob kKnobs[] = {{"n_colors", &Rules::n_colors},
                                    {"n_ranks", &Rules::n_ranks},
                                    {"min_rank", &Rules::min_rank},
                                    {"n_handshakes", &Rules::n_handshakes},
                                    {"hand_size", &Rules::hand_size},
                                    {"expedition_penalty", &Rules::expedition_penalty},
                                    {"bonus_threshold", &Rules::bonus_threshold},
                                    {"bonus_amount", &Rules::bonus_amount}};
  for (const auto& [key, value] : j.items()) {
    const Knob* k = nullptr;
    for (const auto& kk : kKnobs)
      if (key == kk.name) k = &kk;
    if (k == nullptr) {
      std::vector<std::string> valid;
      for (const auto& kk : kKnobs) valid.emplace_back(kk.name);
      throw InputError(fmt::format("{}: unknown rules knob '{}'; valid knobs: {}", where, key, join_names(valid)));
    }
    r.*(k->field) = json_int(value, "rules." + key, where);
  }
  try {
    r.validate();
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", where, e.what()));
  }
  return r;
}

std::vector<int> int_array(const json& j, const char* field, std::string_view where) {
  if (!j.is_array()) throw InputError(fmt::format("{}: field '{}' must be an array", where, field));
  std::vector<int> v;
  v.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    v.push_back(json_int(j[i], fmt::format("{}[{}]", field, i), where));
  }
  return v;
}

}  // namespace

Rules rules_from_json_text(std::string_view text, std::string_view where) {
  return rules_from_json(parse_json_input(text, where), where);
}

ReplayGame parse_replay_line(std::string_view text, int line, int index, std::string_view file) {
  const std::string where = fmt::format("{}:{}", file, line);
  const json j = parse_json_input(text, where);
  if (!j.is_object()) throw InputError(fmt::format("{}: a game must be a JSON object", where));
  static constexpr const char* kFields[] = {"game", "rules",        "deck",     "actions", "bot0",
                                            "bot1", "legal_counts", "terminal", "totals"};
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* f : kFields) known = known || key == f;
    if (!known) throw InputError(fmt::format("{}: unknown field '{}'", where, key));
  }
  ReplayGame g;
  g.line = line;
  g.game = index;
  if (j.contains("game")) {
    if (!j["game"].is_number_integer()) throw InputError(fmt::format("{}: field 'game' must be an integer", where));
    g.game = json_int(j["game"], "field 'game'", where);
  }
  g.rules = j.contains("rules") ? rules_from_json(j["rules"], where) : Rules{};
  if (!j.contains("deck")) throw InputError(fmt::format("{}: missing field 'deck'", where));
  if (!j.contains("actions")) throw InputError(fmt::format("{}: missing field 'actions'", where));
  g.deck = int_array(j["deck"], "deck", where);
  g.actions = int_array(j["actions"], "actions", where);
  for (int b = 0; b < 2; ++b) {
    const std::string key = fmt::format("bot{}", b);
    if (!j.contains(key)) continue;
    if (!j[key].is_string()) throw InputError(fmt::format("{}: field '{}' must be a string", where, key));
    g.bots[b] = j[key].get<std::string>();
    try {
      (void)make_bot(*g.bots[b], g.rules);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: field '{}': {}", where, key, e.what()));
    }
  }
  if (j.contains("legal_counts")) g.legal_counts = int_array(j["legal_counts"], "legal_counts", where);
  if (j.contains("terminal")) {
    if (!j["terminal"].is_boolean()) throw InputError(fmt::format("{}: field 'terminal' must be true or false", where));
    g.terminal = j["terminal"].get<bool>();
  }
  if (j.contains("totals")) {
    auto t = int_array(j["totals"], "totals", where);
    if (t.size() != 2) throw InputError(fmt::format("{}: field 'totals' must hold 2 integers", where));
    g.totals = std::array<int, 2>{t[0], t[1]};
  }
  try {
    (void)State::from_deck(g.rules, g.deck);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: field 'deck': {}", where, e.what()));
  }
  return g;
}

std::string rules_json_text(const Rules& r) {
  return json{{"n_colors", r.n_colors},
              {"n_ranks", r.n_ranks},
              {"min_rank", r.min_rank},
              {"n_handshakes", r.n_handshakes},
              {"hand_size", r.hand_size},
              {"expedition_penalty", r.expedition_penalty},
              {"bonus_threshold", r.bonus_threshold},
              {"bonus_amount", r.bonus_amount}}
      .dump();
}

std::string transcript_line(int game, const Rules& rules, std::span<const int> deck, std::span<const int> actions,
                            const std::array<std::optional<std::string>, 2>& bots) {
  State s = State::from_deck(rules, deck);
  for (const int a : actions) s.apply_action(a);
  json j = {{"game", game},
            {"rules", json::parse(rules_json_text(rules))},
            {"deck", std::vector<int>(deck.begin(), deck.end())},
            {"actions", std::vector<int>(actions.begin(), actions.end())},
            {"terminal", s.is_terminal()},
            {"totals", {s.total(0), s.total(1)}}};
  for (int b = 0; b < 2; ++b)
    if (bots[b]) j[fmt::format("bot{}", b)] = *bots[b];
  return j.dump();
}

std::vector<std::string> read_lines(const std::string& path) {
  require_readable_file(path);
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw InputError(fmt::format("{}: cannot open file", path));
  std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(f, gzclose);
  std::vector<std::string> lines;
  std::string cur;
  char buf[1 << 16];
  std::size_t total = 0;
  for (;;) {
    const int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int err = 0;
      throw InputError(fmt::format("{}: read error: {}", path, gzerror(f, &err)));
    }
    if (n == 0) break;
    total += static_cast<std::size_t>(n);
    if (total > kMaxTextBytes)
      throw InputError(fmt::format("{}: more than {} MiB of text{}: over the limit of a file read whole; split it", path,
                                   kMaxTextBytes >> 20, gzdirect(f) ? "" : " once decompressed"));
    for (int i = 0; i < n; ++i) {
      if (buf[i] == '\n') {
        lines.push_back(std::move(cur));
        cur.clear();
      } else {
        cur.push_back(buf[i]);
      }
    }
  }
  if (!cur.empty()) lines.push_back(std::move(cur));
  return lines;
}

std::vector<ReplayGame> read_replay_file(const std::string& path) {
  const auto lines = read_lines(path);
  std::vector<ReplayGame> games;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find_first_not_of(" \t\r") == std::string::npos) continue;
    games.push_back(parse_replay_line(lines[i], static_cast<int>(i + 1), static_cast<int>(games.size()), path));
  }
  return games;
}

void replay_game(const ReplayGame& g, const ReplayOptions& opts, std::string_view file,
                 const std::function<void(const ReplayStep&, const State&)>& on_step) {
  const std::string where = fmt::format("{}:{}: game {}", file, g.line, g.game);
  State s = State::from_deck(g.rules, g.deck);
  std::array<std::unique_ptr<Bot>, 2> bots;
  if (opts.check_bots)
    for (int b = 0; b < 2; ++b)
      if (g.bots[b]) {
        auto bot = make_bot(*g.bots[b], g.rules);
        if (bot->deterministic()) bots[b] = std::move(bot);
      }
  if (g.legal_counts && g.legal_counts->size() != g.actions.size())
    throw InputError(
        fmt::format("{}: 'legal_counts' has {} entries for {} actions", where, g.legal_counts->size(), g.actions.size()));
  Rng unused(0);
  for (std::size_t i = 0; i < g.actions.size(); ++i) {
    const int a = g.actions[i];
    ReplayStep st;
    st.step = static_cast<int>(i);
    st.player = s.current_player();
    st.phase = s.phase();
    st.legal = s.legal_mask();
    st.action = a;
    if (s.is_terminal()) throw InputError(fmt::format("{} step {}: action {} after the game ended", where, i, a));
    if (g.legal_counts && (*g.legal_counts)[i] != mask_count(st.legal))
      throw InputError(fmt::format("{} step {}: {} legal actions, the file records {}\nstate: {}", where, i, mask_count(st.legal),
                                   (*g.legal_counts)[i], s.to_string()));
    if (auto& bot = bots[st.player]) {
      const int mine = bot->choose_action(s, unused);
      if (mine != a)
        throw InputError(fmt::format("{} step {}: {} (player {}) chooses action {} but the file has {}\nstate: {}", where, i,
                                     bot->name(), st.player, mine, a, s.to_string()));
    }
    try {
      s.apply_action(a);
    } catch (const IllegalActionError& e) {
      throw InputError(fmt::format("{} step {}: {}\nstate: {}", where, i, e.what(), s.to_string()));
    }
    st.totals = {s.total(0), s.total(1)};
    st.terminal = s.is_terminal();
    if (on_step) on_step(st, s);
  }
  if (g.terminal && *g.terminal != s.is_terminal())
    throw InputError(fmt::format("{}: the game {} terminal after its actions, the file says terminal = {}", where,
                                 s.is_terminal() ? "is" : "is not", *g.terminal));
  if (g.totals && ((*g.totals)[0] != s.total(0) || (*g.totals)[1] != s.total(1)))
    throw InputError(fmt::format("{}: final totals {} {}, the file records {} {}", where, s.total(0), s.total(1), (*g.totals)[0],
                                 (*g.totals)[1]));
}

}  // namespace cfr::lc
