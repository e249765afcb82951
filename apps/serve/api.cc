#include "apps/serve/api.h"

#include <arpa/inet.h>
#include <zlib.h>

#include <bit>
#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/games/external_player.h"  // action_name
#include "engine/games/replay.h"

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

namespace {

int bounded_int(const json& j, const char* key, int lo, int hi, int fallback) {
  const auto v = j.find(key);
  if (v == j.end()) return fallback;
  if (!v->is_number_integer()) throw ApiError(400, fmt::format("field 'search.{}' must be an integer", key));
  const auto x = v->get<std::int64_t>();
  if (x < lo || x > hi) throw ApiError(422, fmt::format("field 'search.{}' is {}; the server allows {} to {}", key, x, lo, hi));
  return static_cast<int>(x);
}

}  // namespace

NewGameRequest parse_new_game(std::string_view body, const SearchLimits& limits) {
  const json j = parse_object(body);
  only_fields(j, {"opponent", "seat", "seed", "search"});
  NewGameRequest r;
  const auto opp = j.find("opponent");
  if (opp == j.end() || !opp->is_string() || opp->get<std::string>().empty() || opp->get<std::string>().size() > 256)
    throw ApiError(400, "field 'opponent' must be the id of an entry of GET /api/players");
  r.opponent = opp->get<std::string>();
  if (const auto sr = j.find("search"); sr != j.end() && !sr->is_null()) {
    if (!sr->is_object()) throw ApiError(400, "field 'search' must be an object {k, n, cap, prior}");
    only_fields(*sr, {"k", "n", "cap", "prior"});
    SearchRequest q;
    q.k = bounded_int(*sr, "k", 1, limits.max_k, q.k);
    q.n = bounded_int(*sr, "n", 1, limits.max_n, q.n);
    q.cap = bounded_int(*sr, "cap", 1, limits.max_cap, q.cap);
    if (const auto pr = sr->find("prior"); pr != sr->end()) {
      if (!pr->is_number()) throw ApiError(400, "field 'search.prior' must be a number");
      const double x = pr->get<double>();
      if (!(x >= 0 && x <= limits.max_prior))
        throw ApiError(422, fmt::format("field 'search.prior' is {}; the server allows 0 to {}", x, limits.max_prior));
      q.prior = x;
    }
    r.search = q;
  }
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

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF).
bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    int n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + static_cast<std::size_t>(n) >= s.size()) return false;  // the sequence is cut off
    for (int k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += static_cast<std::size_t>(n) + 1;
  }
  return true;
}

std::string percent_decode(std::string_view seg) {
  std::string out;
  out.reserve(seg.size());
  for (std::size_t i = 0; i < seg.size(); ++i) {
    if (seg[i] != '%') {
      out.push_back(seg[i]);
      continue;
    }
    const int hi = i + 2 < seg.size() ? hex_digit(seg[i + 1]) : -1, lo = i + 2 < seg.size() ? hex_digit(seg[i + 2]) : -1;
    if (hi < 0 || lo < 0) throw ApiError(400, "the request path has a bad percent escape");
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

}  // namespace

Target parse_target(std::string_view target) {
  Target t;
  if (target.empty() || target.front() != '/') throw ApiError(400, "the request target must start with '/'");
  if (const auto q = target.find('?'); q != std::string_view::npos) {
    t.query = target.substr(q + 1);
    target = target.substr(0, q);
  }
  for (const char c : target)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\')
      throw ApiError(400, "the request path has a character that is not served (control or '\\')");
  std::size_t i = 1;
  while (i <= target.size()) {
    const std::size_t slash = std::min(target.find('/', i), target.size());
    const std::string_view raw = target.substr(i, slash - i);
    if (raw.empty() && slash != target.size()) throw ApiError(400, "the request path has an empty segment");
    if (!raw.empty()) {
      std::string seg = percent_decode(raw);
      if (seg == "." || seg == "..") throw ApiError(400, "the request path may not contain '.' or '..' segments");
      for (const char c : seg)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\' || c == '/')
          throw ApiError(400, "the request path has an escaped character that is not served ('/', '\\' or control)");
      if (!valid_utf8(seg)) throw ApiError(400, "the request path is not valid UTF-8");
      t.segments.push_back(std::move(seg));
    }
    i = slash + 1;
  }
  return t;
}

std::optional<HostPort> parse_host_header(std::string_view v) {
  if (v.empty() || v.size() > 255) return std::nullopt;
  HostPort hp;
  std::string_view rest;
  if (v.front() == '[') {
    const auto close = v.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    hp.host = std::string(v.substr(1, close - 1));
    rest = v.substr(close + 1);
    if (!is_ip_literal(hp.host) || hp.host.find(':') == std::string::npos) return std::nullopt;
  } else {
    const auto colon = v.find(':');
    hp.host = std::string(v.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view{} : v.substr(colon);
  }
  if (hp.host.empty()) return std::nullopt;
  for (char& c : hp.host) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':';
    if (!ok) return std::nullopt;
  }
  if (!rest.empty()) {
    if (rest.front() != ':' || rest.size() < 2 || rest.size() > 6) return std::nullopt;
    int port = 0;
    for (const char c : rest.substr(1)) {
      if (c < '0' || c > '9') return std::nullopt;
      port = port * 10 + (c - '0');
    }
    if (port < 1 || port > 65535) return std::nullopt;
    hp.port = port;
  }
  return hp;
}

bool is_ip_literal(std::string_view host) {
  const std::string h(host);
  unsigned char buf[16];
  return ::inet_pton(AF_INET, h.c_str(), buf) == 1 || ::inet_pton(AF_INET6, h.c_str(), buf) == 1;
}

bool is_loopback_host(std::string_view host) {
  if (host == "localhost") return true;
  const std::string h(host);
  unsigned char buf[16];
  if (::inet_pton(AF_INET, h.c_str(), buf) == 1) return buf[0] == 127;
  if (::inet_pton(AF_INET6, h.c_str(), buf) == 1) {
    for (int i = 0; i < 15; ++i)
      if (buf[i] != 0) return false;
    return buf[15] == 1;
  }
  return false;
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
          {"blocked_pile",
           s.phase() == lc::Phase::kDraw && s.pending_color() != lc::State::kNoColor ? json(s.pending_color()) : json(nullptr)},
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
    v["result"] = {{"you", a},
                   {"opponent", b},
                   {"outcome", a > b   ? "win"
                               : a < b ? "loss"
                                       : "draw"},
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

json move_entry(const lc::State& before, int action, int seat) {
  const lc::Rules& r = before.rules();
  const int me = before.current_player();
  json e = {{"who", me == seat ? "you" : "opponent"}};
  if (action < r.draw_deck_action()) {
    const lc::Card c = before.hand_card(me, action / 2);
    e["kind"] = action % 2 == 0 ? "play" : "discard";
    e["card"] = card_json(r, c);
    e["color"] = c.color();
  } else if (action == r.draw_deck_action()) {
    e["kind"] = "draw_deck";
    e["card"] = nullptr;
    e["color"] = nullptr;
  } else {
    const int color = action - r.draw_deck_action() - 1;
    e["kind"] = "take";
    e["card"] = card_json(r, before.pile_top(color));
    e["color"] = color;
  }
  return e;
}

namespace {

using Clock = std::chrono::steady_clock;

void check_time(Clock::time_point deadline, const ReplayLimits& limits) {
  if (Clock::now() > deadline)
    throw ApiError(413, fmt::format("the transcript takes longer than the server's limit of {} s to read", limits.max_seconds));
}

/// The upload's text: itself, or its gzip members decompressed, never more than max_bytes.
std::string bounded_text(std::string_view body, const ReplayLimits& limits, Clock::time_point deadline) {
  const auto too_large = [&] {
    return ApiError(
        413, fmt::format("the transcript is larger than the server's limit of {} MiB (decompressed)", limits.max_bytes >> 20));
  };
  const bool gzip =
      body.size() >= 2 && static_cast<unsigned char>(body[0]) == 0x1f && static_cast<unsigned char>(body[1]) == 0x8b;
  if (!gzip) {
    if (body.size() > limits.max_bytes) throw too_large();
    return std::string(body);
  }
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) throw std::runtime_error("zlib: inflateInit2 failed");
  const std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  zs.avail_in = static_cast<uInt>(body.size());
  std::string out;
  char buf[1 << 16];
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
      throw ApiError(422, fmt::format("the upload is not valid gzip ({})", zs.msg ? zs.msg : "corrupt data"));
    const std::size_t got = sizeof buf - zs.avail_out;
    if (out.size() + got > limits.max_bytes) throw too_large();
    out.append(buf, got);
    check_time(deadline, limits);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      inflateReset(&zs);  // a further gzip member
    } else if (rc == Z_BUF_ERROR || (zs.avail_in == 0 && got == 0)) {
      throw ApiError(422, "the upload is a cut-off gzip file");
    }
  }
  return out;
}

}  // namespace

json parse_replay_upload(std::string_view body, int k, const ReplayLimits& limits) {
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits.max_seconds));
  const std::string text = bounded_text(body, limits, deadline);
  std::vector<lc::ReplayGame> games;
  try {
    std::size_t start = 0;
    int line = 0;
    while (start < text.size()) {
      std::size_t nl = text.find('\n', start);
      if (nl == std::string::npos) nl = text.size();
      const std::string_view l = std::string_view(text).substr(start, nl - start);
      start = nl + 1;
      ++line;
      if (l.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      check_time(deadline, limits);
      if (l.size() > limits.max_line_bytes)  // before parsing: its tree would cost many times its text
        throw ApiError(413, fmt::format("line {} is {} bytes; the server reads lines (games) of at most {} KiB", line, l.size(),
                                        limits.max_line_bytes >> 10));
      if (static_cast<int>(games.size()) >= limits.max_games)
        throw ApiError(413, fmt::format("the transcript has more than {} games, the server's limit", limits.max_games));
      games.push_back(lc::parse_replay_line(l, line, static_cast<int>(games.size()), "upload"));
      if (static_cast<int>(games.back().actions.size()) > limits.max_actions)
        throw ApiError(413, fmt::format("game {} (line {}) has {} actions; the server replays games of at most {}",
                                        games.back().game, line, games.back().actions.size(), limits.max_actions));
    }
  } catch (const InputError& e) {
    throw ApiError(422, e.what());
  }
  if (games.empty()) throw ApiError(422, "the transcript has no games");
  if (k >= static_cast<int>(games.size()))
    throw ApiError(404, fmt::format("the transcript has {} games; no game {}", games.size(), k));
  const lc::ReplayGame& g = games[static_cast<std::size_t>(k)];
  try {
    lc::replay_game(g, {}, "upload");  // every action legal, the recorded totals right
  } catch (const InputError& e) {
    throw ApiError(422, e.what());
  }
  json list = json::array();
  for (const auto& x : games)
    list.push_back({{"game", x.game},
                    {"bot0", x.bots[0] ? json(*x.bots[0]) : json(nullptr)},
                    {"bot1", x.bots[1] ? json(*x.bots[1]) : json(nullptr)},
                    {"actions", x.actions.size()}});
  lc::State st = lc::State::from_deck(g.rules, g.deck);
  json frames = json::array();
  frames.push_back({{"step", 0}, {"view", full_view(st)}});
  for (std::size_t i = 0; i < g.actions.size(); ++i) {
    if (i % 256 == 0) check_time(deadline, limits);
    const int player = st.current_player();
    const std::string name = lc::action_name(st, g.actions[i]);
    st.apply_action(g.actions[i]);
    frames.push_back({{"step", i + 1}, {"player", player}, {"action", g.actions[i]}, {"name", name}, {"view", full_view(st)}});
  }
  return {{"games", std::move(list)}, {"index", k}, {"frames", std::move(frames)}};
}

}  // namespace cfr::serve
