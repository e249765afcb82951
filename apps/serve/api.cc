#include "apps/serve/api.h"

#include <bit>

#include <fmt/format.h>

#include "engine/games/external_player.h"  // action_name

namespace cfr::serve {

using nlohmann::json;

namespace {

json parse_object(std::string_view body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw ApiError(400, "the body is not valid JSON");
  if (!j.is_object()) throw ApiError(400, "the body must be a JSON object");
  return j;
}

void only_fields(const json& j, std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : j.items()) {
    bool ok = false;
    for (const auto a : allowed) ok = ok || key == a;
    if (!ok) throw ApiError(400, fmt::format("unknown field '{}'", key));
  }
}

}  // namespace

NewGameRequest parse_new_game(std::string_view body) {
  const json j = parse_object(body);
  only_fields(j, {"opponent", "seat", "seed"});
  NewGameRequest r;
  const auto opp = j.find("opponent");
  if (opp == j.end() || !opp->is_string() || opp->get<std::string>().empty())
    throw ApiError(400, "field 'opponent' must be a non-empty string (a bot's name or checkpoint:PATH)");
  r.opponent = opp->get<std::string>();
  if (const auto seat = j.find("seat"); seat != j.end()) {
    if (!seat->is_number_integer() || (seat->get<std::int64_t>() != 0 && seat->get<std::int64_t>() != 1))
      throw ApiError(400, "field 'seat' must be 0 (you move first) or 1");
    r.seat = seat->get<int>();
  }
  if (const auto seed = j.find("seed"); seed != j.end() && !seed->is_null()) {
    if (!seed->is_number_unsigned() || seed->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      throw ApiError(400, "field 'seed' must be an integer in [0, 2^63 - 1]");
    r.seed = seed->get<std::uint64_t>();
  }
  return r;
}

int parse_move(std::string_view body, int action_size) {
  const json j = parse_object(body);
  only_fields(j, {"action"});
  const auto a = j.find("action");
  if (a == j.end() || !a->is_number_integer() || a->get<std::int64_t>() < 0 || a->get<std::int64_t>() >= action_size)
    throw ApiError(400, fmt::format("field 'action' must be an action id in [0, {})", action_size));
  return a->get<int>();
}

Target parse_target(std::string_view target) {
  Target t;
  if (target.empty() || target.front() != '/') throw ApiError(400, "the request target must start with '/'");
  if (const auto q = target.find('?'); q != std::string_view::npos) {
    t.query = target.substr(q + 1);
    target = target.substr(0, q);
  }
  for (const char c : target)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\' || c == '%')
      throw ApiError(400, "the request path has a character that is not served (control, '\\' or '%')");
  std::size_t i = 1;
  while (i <= target.size()) {
    const std::size_t slash = std::min(target.find('/', i), target.size());
    const std::string_view seg = target.substr(i, slash - i);
    if (seg == "." || seg == "..") throw ApiError(400, "the request path may not contain '.' or '..' segments");
    if (seg.empty() && slash != target.size()) throw ApiError(400, "the request path has an empty segment");
    if (!seg.empty()) t.segments.emplace_back(seg);
    i = slash + 1;
  }
  return t;
}

std::optional<std::string> query_value(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const std::size_t amp = std::min(query.find('&'), query.size());
    const std::string_view kv = query.substr(0, amp);
    const std::size_t eq = kv.find('=');
    if (kv.substr(0, eq) == key) return std::string(eq == std::string_view::npos ? std::string_view{} : kv.substr(eq + 1));
    query = amp == query.size() ? std::string_view{} : query.substr(amp + 1);
  }
  return std::nullopt;
}

json card_json(const lc::Rules& rules, lc::Card card) {
  return {{"name", lc::card_name(rules, card)},
          {"color", card.color()},
          {"face", rules.face(card.rank())},
          {"wager", card.is_wager()}};
}

namespace {

json expeditions_json(const lc::State& s, int p) {
  json out = json::array();
  for (int c = 0; c < s.rules().n_colors; ++c) {
    json cards = json::array();
    for (int i = 0; i < s.expedition_card_count(p, c); ++i) cards.push_back(card_json(s.rules(), s.expedition_card(p, c, i)));
    out.push_back({{"cards", std::move(cards)}, {"score", s.expedition(p, c).score}});
  }
  return out;
}

json hand_json(const lc::State& s, int p) {
  json out = json::array();
  for (int i = 0; i < s.hand_size(p); ++i) out.push_back(card_json(s.rules(), s.hand_card(p, i)));
  return out;
}

json piles_json(const lc::State& s) {
  json out = json::array();
  for (int c = 0; c < s.rules().n_colors; ++c)
    out.push_back({{"top", s.pile_size(c) > 0 ? card_json(s.rules(), s.pile_top(c)) : json(nullptr)}, {"size", s.pile_size(c)}});
  return out;
}

json legal_json(const lc::State& s) {
  json out = json::array();
  for (ActionMask m = s.legal_mask(); m != 0; m &= m - 1) {
    const int a = std::countr_zero(m);
    out.push_back({{"id", a}, {"name", lc::action_name(s, a)}});
  }
  return out;
}

json common_json(const lc::State& s) {
  return {{"phase", s.phase() == lc::Phase::kCard ? "card" : "draw"},
          {"deck", s.deck_size()},
          {"piles", piles_json(s)},
          {"blocked_pile", s.phase() == lc::Phase::kDraw && s.pending_color() != lc::State::kNoColor ? json(s.pending_color())
                                                                                                     : json(nullptr)},
          {"moves", s.move_count()},
          {"turn", s.turn_count()},
          {"n_colors", s.rules().n_colors},
          {"hand_size", s.rules().hand_size},
          {"over", s.is_terminal()}};
}

}  // namespace

json score_breakdown(const lc::State& s, int seat) {
  json out = json::array();
  for (int c = 0; c < s.rules().n_colors; ++c)
    out.push_back({{"color", c},
                   {"you", s.expedition(seat, c).score},
                   {"opponent", s.expedition(1 - seat, c).score},
                   {"you_cards", s.expedition_card_count(seat, c)},
                   {"opponent_cards", s.expedition_card_count(1 - seat, c)}});
  return out;
}

json seat_view(const lc::State& s, int seat) {
  json v = common_json(s);
  const bool mine = !s.is_terminal() && s.current_player() == seat;
  v["seat"] = seat;
  v["to_move"] = s.is_terminal() ? "nobody" : mine ? "you" : "opponent";
  v["hand"] = hand_json(s, seat);
  v["opponent_hand_size"] = s.hand_size(1 - seat);
  v["expeditions"] = {{"you", expeditions_json(s, seat)}, {"opponent", expeditions_json(s, 1 - seat)}};
  v["totals"] = {{"you", s.total(seat)}, {"opponent", s.total(1 - seat)}};
  v["legal"] = mine ? legal_json(s) : json::array();
  if (s.is_terminal()) {
    const int a = s.total(seat), b = s.total(1 - seat);
    v["result"] = {{"you", a}, {"opponent", b}, {"outcome", a > b ? "win" : a < b ? "loss" : "draw"},
                   {"breakdown", score_breakdown(s, seat)}};
  }
  return v;
}

json full_view(const lc::State& s) {
  json v = common_json(s);
  v["to_move"] = s.is_terminal() ? json(nullptr) : json(s.current_player());
  v["hands"] = {hand_json(s, 0), hand_json(s, 1)};
  v["expeditions"] = {expeditions_json(s, 0), expeditions_json(s, 1)};
  v["totals"] = {s.total(0), s.total(1)};
  return v;
}

}  // namespace cfr::serve
