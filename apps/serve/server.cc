#include "apps/serve/server.h"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <fmt/format.h>

#include "apps/serve/runs.h"
#include "engine/core/errors.h"
#include "engine/games/bots.h"
#include "engine/games/external_player.h"
#include "engine/games/replay.h"

namespace cfr::serve {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace fs = std::filesystem;
using tcp = asio::ip::tcp;
using nlohmann::json;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;
constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

namespace {

std::string content_type(const fs::path& p) {
  const std::string ext = p.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".png") return "image/png";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".json") return "application/json";
  return "application/octet-stream";
}

std::optional<std::string> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A room operation as an Asio asynchronous operation: the mover thread's result is posted back
/// to the connection's executor, so the coroutine resumes on its I/O thread.
template <class Token>
auto async_room(std::function<void(GameRoom::Done)> submit, Token&& token) {
  return asio::async_initiate<Token, void(int, json)>(
      [submit = std::move(submit)](auto handler) {
        auto ex = asio::get_associated_executor(handler);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        submit([h, ex](int status, json body) {
          asio::post(ex, [h, status, body = std::move(body)]() mutable { (*h)(status, std::move(body)); });
        });
      },
      token);
}

class Server {
 public:
  explicit Server(const ServerOptions& opts)
      : opts_(opts), room_(opts.play, opts.factory), runs_(opts.runs), www_(opts.www) {
    if (!fs::is_directory(www_)) throw InputError(fmt::format("--www {}: not a directory (the pages of cfr-serve)", opts.www));
  }

  int run() {
    tcp::acceptor acceptor(ioc_);
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(opts_.host, ec);
    if (ec) throw InputError(fmt::format("--host {}: not an IP address ({})", opts_.host, ec.message()));
    const tcp::endpoint endpoint(address, opts_.port);
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw InputError(fmt::format("cannot listen on {}:{}: {}", opts_.host, opts_.port, ec.message()));
    std::cout << fmt::format("cfr-serve: listening on http://{}:{}/ (pages: {}; runs: {})", opts_.host,
                             acceptor.local_endpoint().port(), www_.string(), opts_.runs.empty() ? "none" : fmt::format("{}", fmt::join(opts_.runs, ", ")))
              << std::endl;
    asio::signal_set signals(ioc_, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& e, int sig) {
      if (e) return;
      std::cout << fmt::format("cfr-serve: signal {}: closing connections and exiting", sig) << std::endl;
      acceptor.close();
      ioc_.stop();
    });
    asio::co_spawn(ioc_, listen(acceptor), asio::detached);
    ioc_.run();
    return 0;
  }

 private:
  asio::awaitable<void> listen(tcp::acceptor& acceptor) {
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(kAwait);
      if (ec) {
        if (!acceptor.is_open()) co_return;
        continue;
      }
      // An exception escaping a connection ends that connection only, never the server.
      asio::co_spawn(ioc_, session(std::move(socket)), [](std::exception_ptr e) {
        if (!e) return;
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& x) {
          std::cerr << "cfr-serve: a connection failed: " << x.what() << std::endl;
        }
      });
    }
  }

  asio::awaitable<void> session(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(16 * 1024);
      parser.body_limit(opts_.max_upload);
      stream.expires_after(std::chrono::seconds(120));
      auto [ec, n] = co_await http::async_read(stream, buffer, parser, kAwait);
      if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::connection_reset) break;
      if (ec) {
        // A request the parser refuses (too large, malformed) is answered, then the connection closes.
        const int status = ec == http::error::body_limit ? 413 : ec == http::error::header_limit ? 431 : 400;
        Response res{static_cast<http::status>(status), 11};
        res.set(http::field::content_type, "application/json");
        res.body() = json{{"error", fmt::format("bad request: {}", ec.message())}}.dump();
        res.keep_alive(false);
        res.prepare_payload();
        log("-", "-", status, 0);
        co_await http::async_write(stream, res, kAwait);
        break;
      }
      Request req = parser.release();
      const auto t0 = std::chrono::steady_clock::now();
      if (websocket::is_upgrade(req)) {
        stream.expires_never();
        co_await websocket_session(std::move(stream), std::move(req));
        co_return;
      }
      Response res = co_await handle(req);
      res.version(req.version());
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      log(std::string(req.method_string()), std::string(req.target()), res.result_int(),
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      auto [wec, wn] = co_await http::async_write(stream, res, kAwait);
      if (wec || !res.keep_alive()) break;
    }
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  static void log(const std::string& method, const std::string& target, int status, double ms) {
    std::cout << fmt::format("{} {} {} {:.1f} ms", method, target.substr(0, 200), status, ms) << std::endl;
  }

  static Response json_response(int status, const json& body) {
    Response res{static_cast<http::status>(status), 11};
    res.set(http::field::content_type, "application/json");
    res.set(http::field::cache_control, "no-store");
    res.body() = body.dump(-1, ' ', false, json::error_handler_t::replace);
    return res;
  }

  static Response error(int status, const std::string& what) { return json_response(status, {{"error", what}}); }

  Response file_response(const fs::path& p) const {
    const auto body = read_file(p);
    if (!body) return error(404, "no such page");
    Response res{http::status::ok, 11};
    res.set(http::field::content_type, content_type(p));
    res.body() = *body;
    return res;
  }

  asio::awaitable<Response> handle(const Request& req) {
    try {
      const Target t = parse_target(req.target());
      const auto& s = t.segments;
      const bool get = req.method() == http::verb::get, post = req.method() == http::verb::post;
      if (s.empty() || (s.size() == 1 && (s[0] == "play" || s[0] == "runs" || s[0] == "run" || s[0] == "replay"))) {
        if (!get) co_return error(405, "pages are read with GET");
        co_return file_response(www_ / ((s.empty() ? std::string("index") : s[0]) + ".html"));
      }
      if (s[0] == "static" && s.size() == 2) {
        if (!get) co_return error(405, "static files are read with GET");
        if (s[1].find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != std::string::npos)
          co_return error(400, "not a served file name");
        co_return file_response(www_ / s[1]);
      }
      if (s.size() == 2 && s[0] == "vendor" && s[1] == "chart.js") {
        Response res = file_response(opts_.chart_js);
        if (res.result() != http::status::ok) co_return error(404, "Chart.js is not installed (Debian package libjs-chart.js)");
        co_return res;
      }
      if (s[0] != "api") co_return error(404, "no such page");
      co_return co_await api(req, t, get, post);
    } catch (const ApiError& e) {
      co_return error(e.status, e.what());
    } catch (const InputError& e) {
      co_return error(422, e.what());
    } catch (const std::exception& e) {
      // A bug, not the request's fault: answered (500) and logged; the server goes on.
      std::cerr << fmt::format("cfr-serve: internal error on {} {}: {}", std::string(req.method_string()),
                               std::string(req.target()), e.what())
                << std::endl;
      co_return error(500, fmt::format("internal error: {}", e.what()));
    }
  }

  asio::awaitable<Response> api(const Request& req, const Target& t, bool get, bool post) {
    const auto& s = t.segments;
    const std::size_t n = s.size();
    if (n == 2 && s[1] == "players") {
      // Each checkpoint also as the determinized search player over it (docs/search.md).
      json searches = json::array();
      std::vector<std::string> nets = runs_.checkpoints();
      for (const auto& o : opts_.opponents)  // the shipped agent and --opponent checkpoints too
        if (o.rfind("checkpoint:", 0) == 0) nets.push_back(o);
      for (const auto& c : nets) searches.push_back("search:" + c.substr(std::string_view("checkpoint:").size()) + "?k=3&n=8");
      json j = {{"bots", lc::bot_names()}, {"checkpoints", runs_.checkpoints()}, {"searches", std::move(searches)},
                {"others", opts_.opponents}, {"default", opts_.default_opponent}};
      co_return json_response(200, j);
    }
    if (n == 2 && s[1] == "stats") {
      const auto st = room_.stats();
      co_return json_response(200, {{"live_games", room_.live_games()}, {"games_created", st.games_created},
                                    {"opponent_moves", st.opponent_moves}, {"rounds", st.rounds},
                                    {"largest_batch", st.largest_batch}});
    }
    if (n == 2 && s[1] == "games") {
      if (!post) co_return error(405, "a game is created with POST");
      if (req.body().size() > opts_.max_body) co_return error(413, "request body too large");
      NewGameRequest r = parse_new_game(req.body());
      auto [status, body] = co_await async_room([&](GameRoom::Done d) { room_.create(std::move(r), std::move(d)); }, asio::use_awaitable);
      co_return json_response(status, body);
    }
    if (n >= 3 && s[1] == "games") {
      const std::string& id = s[2];
      if (n == 3 && get) co_return json_response(200, room_.view(id));
      if (n == 4 && s[3] == "move") {
        if (!post) co_return error(405, "a move is made with POST");
        if (req.body().size() > opts_.max_body) co_return error(413, "request body too large");
        const int action = parse_move(req.body(), opts_.play.rules.action_size());
        auto [status, body] = co_await async_room([&](GameRoom::Done d) { room_.move(id, action, std::move(d)); }, asio::use_awaitable);
        co_return json_response(status, body);
      }
      if (n == 4 && s[3] == "transcript" && get) {
        Response res{http::status::ok, 11};
        res.set(http::field::content_type, "application/x-ndjson");
        res.set(http::field::content_disposition, fmt::format("attachment; filename=\"lost-cities-{}.jsonl\"", id.substr(0, 8)));
        res.body() = room_.transcript(id) + "\n";
        co_return res;
      }
      co_return error(404, "no such game resource");
    }
    if (n == 2 && s[1] == "runs" && get) co_return json_response(200, runs_.list());
    if (n == 3 && s[1] == "runs" && get) {
      const auto d = runs_.detail(s[2]);
      if (!d) co_return error(404, fmt::format("no run named '{}'", s[2]));
      co_return json_response(200, *d);
    }
    if (n == 2 && s[1] == "replay") {
      if (!post) co_return error(405, "a transcript is sent with POST");
      co_return replay(req.body(), t.query);
    }
    co_return error(404, "no such API resource");
  }

  /// POST /api/replay[?game=K]: a transcript file's bytes (plain or gzip) → its games and the
  /// chosen game's positions, step by step.
  Response replay(const std::string& body, const std::string& query) const {
    int k = 0;
    if (const auto g = query_value(query, "game")) {
      if (g->empty() || g->size() > 9 || g->find_first_not_of("0123456789") != std::string::npos)
        throw ApiError(400, "query 'game' must be a game's index (0, 1, ...)");
      k = std::stoi(*g);
    }
    // The engine reads transcripts from files (gzip or plain): the upload goes to a private temp file.
    const fs::path tmp = fs::temp_directory_path() / fmt::format("cfr-serve-replay-{}-{}.jsonl", ::getpid(), upload_count_++);
    {
      std::ofstream out(tmp, std::ios::binary);
      out.write(body.data(), static_cast<std::streamsize>(body.size()));
    }
    std::vector<lc::ReplayGame> games;
    try {
      games = lc::read_replay_file(tmp.string());
      fs::remove(tmp);
    } catch (...) {
      fs::remove(tmp);
      throw;
    }
    if (games.empty()) throw ApiError(422, "the transcript has no games");
    if (k >= static_cast<int>(games.size())) throw ApiError(404, fmt::format("the transcript has {} games; no game {}", games.size(), k));
    const lc::ReplayGame& g = games[static_cast<std::size_t>(k)];
    lc::replay_game(g, {}, "upload");  // every action legal, the recorded totals right (InputError: 422)
    json list = json::array();
    for (const auto& x : games)
      list.push_back({{"game", x.game}, {"bot0", x.bots[0] ? json(*x.bots[0]) : json(nullptr)},
                      {"bot1", x.bots[1] ? json(*x.bots[1]) : json(nullptr)}, {"actions", x.actions.size()}});
    lc::State st = lc::State::from_deck(g.rules, g.deck);
    json frames = json::array();
    frames.push_back({{"step", 0}, {"view", full_view(st)}});
    for (std::size_t i = 0; i < g.actions.size(); ++i) {
      const int player = st.current_player();
      const std::string name = lc::action_name(st, g.actions[i]);
      st.apply_action(g.actions[i]);
      frames.push_back({{"step", i + 1}, {"player", player}, {"action", g.actions[i]}, {"name", name}, {"view", full_view(st)}});
    }
    return json_response(200, {{"games", std::move(list)}, {"index", k}, {"frames", std::move(frames)}});
  }

  /// GET /api/runs/NAME/live?from=N (WebSocket): the run's metrics lines after the first N, pushed
  /// as they are written ({"type": "metrics", "lines": [...], "status": {...}}), every half second.
  asio::awaitable<void> websocket_session(beast::tcp_stream stream, Request req) {
    std::optional<fs::path> run;
    long from = 0;
    try {
      const Target t = parse_target(req.target());
      if (t.segments.size() == 4 && t.segments[0] == "api" && t.segments[1] == "runs" && t.segments[3] == "live")
        run = runs_.find(t.segments[2]);
      if (const auto f = query_value(t.query, "from"); f && !f->empty() && f->size() < 10 &&
                                                       f->find_first_not_of("0123456789") == std::string::npos)
        from = std::stol(*f);
    } catch (const ApiError&) {
    }
    if (!run) {
      Response res = error(404, "no such live feed (want /api/runs/NAME/live)");
      res.keep_alive(false);
      res.prepare_payload();
      log("GET", std::string(req.target()), 404, 0);
      co_await http::async_write(stream, res, kAwait);
      co_return;
    }
    websocket::stream<beast::tcp_stream> ws(std::move(stream));
    auto [aec] = co_await ws.async_accept(req, kAwait);
    if (aec) co_return;
    log("GET", std::string(req.target()), 101, 0);
    MetricsTail tail(*run / "metrics.jsonl");
    std::vector<json> all;
    std::string last_state;
    bool closed = false;
    // Reading is what notices the browser's close frame.
    asio::co_spawn(ioc_, [&]() -> asio::awaitable<void> {
      beast::flat_buffer b;
      for (;;) {
        auto [rec, rn] = co_await ws.async_read(b, kAwait);
        if (rec) break;
        b.consume(b.size());
      }
      closed = true;
    }, asio::detached);
    asio::steady_timer timer(ioc_);
    while (!closed) {
      auto lines = tail.read_new();
      json fresh = json::array();
      for (auto& l : lines) {
        all.push_back(l);
        if (static_cast<long>(all.size()) > from) fresh.push_back(std::move(l));
      }
      json status = RunIndex::status(*run, all);
      if (!fresh.empty() || status["state"] != last_state) {
        last_state = status["state"];
        const std::string msg = json{{"type", "metrics"}, {"lines", std::move(fresh)}, {"status", std::move(status)}}.dump(
            -1, ' ', false, json::error_handler_t::replace);
        auto [wec, wn] = co_await ws.async_write(asio::buffer(msg), kAwait);
        if (wec) break;
      }
      timer.expires_after(std::chrono::milliseconds(500));
      co_await timer.async_wait(kAwait);
    }
    // The reader coroutine refers to ws: close and let it finish before the frame goes.
    if (!closed) {
      boost::system::error_code ec;
      beast::get_lowest_layer(ws).socket().close(ec);
      while (!closed) {
        timer.expires_after(std::chrono::milliseconds(10));
        co_await timer.async_wait(kAwait);
      }
    }
  }

  const ServerOptions& opts_;
  asio::io_context ioc_{1};
  GameRoom room_;
  RunIndex runs_;
  fs::path www_;
  mutable int upload_count_ = 0;
};

}  // namespace

int serve(const ServerOptions& opts) {
  Server server(opts);
  return server.run();
}

}  // namespace cfr::serve
