#include "apps/serve/server.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "apps/serve/catalog.h"
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

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// The media type of a Content-Type value, lower case, without parameters.
std::string media_type(std::string_view v) {
  std::string t = lower(v.substr(0, v.find(';')));
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.pop_back();
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.erase(t.begin());
  return t;
}

/// Equal in time independent of where they differ (the token).
bool same_secret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d |= static_cast<unsigned char>(a[i] ^ b[i]);
  return d == 0;
}

std::string random_token() {
  std::random_device rd;
  std::string t;
  for (int i = 0; i < 4; ++i) t += fmt::format("{:08x}", rd());
  return t;
}

/// The value of cookie `name` in a Cookie header.
std::optional<std::string_view> cookie_value(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const std::size_t semi = std::min(header.find(';'), header.size());
    std::string_view kv = header.substr(0, semi);
    while (!kv.empty() && kv.front() == ' ') kv.remove_prefix(1);
    if (kv.size() > name.size() && kv.substr(0, name.size()) == name && kv[name.size()] == '=') return kv.substr(name.size() + 1);
    header = semi == header.size() ? std::string_view{} : header.substr(semi + 1);
  }
  return std::nullopt;
}

/// Work off the I/O thread as an Asio asynchronous operation: `submit` hands a Done to a worker,
/// whose result is posted back to the connection's executor, so the coroutine resumes on its I/O
/// thread.
template <class Token>
auto async_work(std::function<void(GameRoom::Done)> submit, Token&& token) {
  return asio::async_initiate<Token, void(int, json)>(
      [submit = std::move(submit)](auto handler) {
        auto ex = asio::get_associated_executor(handler);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        GameRoom::Done done = [h, ex](int status, json body) {
          asio::post(ex, [h, status, body = std::move(body)]() mutable { (*h)(status, std::move(body)); });
        };
        try {
          submit(done);
        } catch (const ApiError& e) {  // refused at once: answered like any other result
          done(e.status, {{"error", e.what()}});
        }
      },
      token);
}

constexpr std::string_view kTokenCookie = "cfr_serve_token";

class Server {
  struct Connection;

 public:
  explicit Server(const ServerOptions& opts)
      : opts_(opts),
        runs_(opts.runs),
        catalog_(opts.offers, runs_),
        room_(opts.play, opts.factory, [this](const std::string& id) { return catalog_.resolve(id); }),
        www_(opts.www) {
    if (!fs::is_directory(www_)) throw InputError(fmt::format("--www {}: not a directory (the pages of cfr-serve)", opts.www));
  }

  int run() {
    // The addresses to bind: "localhost" is both loopbacks (IPv6 when the machine has it).
    std::string host = opts_.host;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    std::vector<asio::ip::address> addresses;
    if (lower(host) == "localhost") {
      addresses = {asio::ip::make_address("127.0.0.1"), asio::ip::make_address("::1")};
    } else {
      boost::system::error_code ec;
      addresses = {asio::ip::make_address(host, ec)};
      if (ec) throw InputError(fmt::format("--host {}: not an IP address or localhost ({})", opts_.host, ec.message()));
    }
    unsigned short port = opts_.port;
    for (const auto& address : addresses) {
      auto acceptor = std::make_unique<tcp::acceptor>(ioc_);
      boost::system::error_code ec;
      const tcp::endpoint endpoint(address, port);
      acceptor->open(endpoint.protocol(), ec);
      if (!ec && address.is_v6()) acceptor->set_option(asio::ip::v6_only(true), ec);
      if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
      if (!ec) acceptor->bind(endpoint, ec);
      if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
      if (ec) {
        // localhost's IPv6 half is optional (a machine without IPv6); anything else must bind.
        if (lower(host) == "localhost" && address.is_v6() && !acceptors_.empty()) continue;
        throw InputError(fmt::format("cannot listen on {} port {}: {}", address.to_string(), port, ec.message()));
      }
      port = acceptor->local_endpoint().port();  // --port 0: every address gets the same free port
      if (!address.is_loopback()) loopback_only_ = false;
      if (address.is_unspecified()) wildcard_ = true;
      bound_.push_back(lower(address.to_string()));
      acceptors_.push_back(std::move(acceptor));
    }
    port_ = port;
    // Connections stay below the file limit (each is a descriptor; models and logs need some too).
    rlimit rl{};
    max_connections_ = opts_.max_connections;
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
      max_connections_ = std::min<std::size_t>(max_connections_, rl.rlim_cur > 96 ? rl.rlim_cur - 64 : rl.rlim_cur / 2);
    const std::string shown = bound_[0].find(':') != std::string::npos ? "[" + bound_[0] + "]" : bound_[0];
    std::cout << fmt::format("cfr-serve: listening on http://{}:{}/ (pages: {}; runs: {}; at most {} connections)",
                             lower(host) == "localhost" ? std::string("localhost") : shown, port_, www_.string(),
                             opts_.runs.empty() ? "none" : fmt::format("{}", fmt::join(opts_.runs, ", ")), max_connections_)
              << std::endl;
    if (!loopback_only_) {
      // Beyond loopback anyone who can reach the port could play: a token, as notebook servers do.
      token_ = random_token();
      std::cerr << fmt::format(
                       "cfr-serve: warning: {} is reachable from other machines; every request needs this server's token.\n"
                       "cfr-serve: open http://{}:{}/?token={} (the link sets a cookie; scripts send the header X-CFR-Token)",
                       opts_.host, wildcard_ ? std::string("THIS-MACHINE") : shown, port_, token_)
                << std::endl;
    }
    asio::signal_set signals(ioc_, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& e, int sig) {
      if (e) return;
      std::cout << fmt::format("cfr-serve: signal {}: closing connections and exiting", sig) << std::endl;
      for (auto& a : acceptors_) a->close();
      ioc_.stop();
    });
    for (auto& a : acceptors_) asio::co_spawn(ioc_, listen(*a), asio::detached);
    asio::co_spawn(ioc_, expire_games(), asio::detached);
    ioc_.run();
    return 0;
  }

 private:
  asio::awaitable<void> expire_games() {
    asio::steady_timer timer(ioc_);
    const auto every = std::clamp<std::chrono::steady_clock::duration>(opts_.play.idle_expiry / 4, std::chrono::seconds(1),
                                                                       std::chrono::seconds(30));
    for (;;) {
      timer.expires_after(every);
      auto [ec] = co_await timer.async_wait(kAwait);
      if (ec) co_return;
      room_.expire_idle();
    }
  }

  asio::awaitable<void> listen(tcp::acceptor& acceptor) {
    asio::steady_timer backoff(ioc_);
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(kAwait);
      if (ec) {
        if (!acceptor.is_open()) co_return;
        // Out of descriptors (EMFILE) or the like: wait a little instead of spinning on a core.
        std::cerr << "cfr-serve: accept failed: " << ec.message() << " (retrying in 100 ms)" << std::endl;
        backoff.expires_after(std::chrono::milliseconds(100));
        co_await backoff.async_wait(kAwait);
        continue;
      }
      if (connections_.size() >= max_connections_ && !evict_idle()) {
        asio::co_spawn(ioc_, refuse(std::move(socket)), asio::detached);
        continue;
      }
      auto conn = std::make_shared<Connection>();
      connections_.insert(conn);
      // An exception escaping a connection ends that connection only, never the server.
      asio::co_spawn(ioc_, session(std::move(socket), conn), [this, conn](std::exception_ptr e) {
        connections_.erase(conn);
        if (!e) return;
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& x) {
          std::cerr << "cfr-serve: a connection failed: " << x.what() << std::endl;
        }
      });
    }
  }

  /// At the connection cap, the connection that has waited longest for its next request is
  /// closed to make room (a browser opens another when it needs one): idle sockets cannot lock
  /// anyone out. False when every connection is busy with a request.
  bool evict_idle() {
    std::shared_ptr<Connection> oldest;
    for (const auto& c : connections_)
      if (c->waiting && c->stream && (!oldest || c->since < oldest->since)) oldest = c;
    if (!oldest) return false;
    boost::system::error_code ignored;
    oldest->stream->socket().close(ignored);
    oldest->stream = nullptr;
    ++evicted_connections_;
    return true;
  }

  /// Over the connection cap: a short 503, then the connection closes.
  asio::awaitable<void> refuse(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    stream.expires_after(std::chrono::seconds(2));
    Response res = error(503, fmt::format("the server has {} open connections, its limit; try again shortly", max_connections_));
    res.keep_alive(false);
    res.prepare_payload();
    log("-", "(over the connection limit)", 503, 0);
    co_await http::async_write(stream, res, kAwait);
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  asio::awaitable<void> session(tcp::socket socket, std::shared_ptr<Connection> conn) {
    boost::system::error_code aec;
    const auto remote = socket.remote_endpoint(aec);
    const std::string client = aec ? std::string("?") : remote.address().to_string();
    beast::tcp_stream stream(std::move(socket));
    conn->stream = &stream;
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(16 * 1024);
      parser.body_limit(opts_.max_upload);  // checked against Content-Length as the header ends
      stream.expires_after(std::chrono::seconds(opts_.request_timeout_s));
      conn->waiting = true;
      conn->since = std::chrono::steady_clock::now();
      // The header first: a request refused by its header (Host, Origin, token, type) is answered
      // before any of its body is read, and a body is read only up to its route's limit (a
      // transcript upload's, else the API's), so no refused or oversized body is ever buffered.
      auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, kAwait);
      conn->waiting = false;
      if (!conn->stream) break;  // evicted while it waited
      std::optional<Response> refused;
      std::size_t limit = opts_.max_upload;
      if (!ec) {
        refused = guard(parser.get());
        if (!refused) {
          limit = is_upload(parser.get()) ? opts_.max_upload : opts_.max_body;
          parser.body_limit(limit);  // a chunked body, as its chunks arrive
          if (const auto length = parser.content_length(); length && *length > limit)
            ec = http::error::body_limit;  // announced: refused before any of it is read
          else
            std::tie(ec, n) = co_await http::async_read(stream, buffer, parser, kAwait);
        }
      }
      if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::connection_reset) break;
      if (ec) {
        // A request the parser refuses (too large, malformed) is answered, then the connection closes.
        const int status = ec == http::error::body_limit ? 413 : ec == http::error::header_limit ? 431 : 400;
        Response res = error(status, status == 413 ? fmt::format("request body too large: at most {} bytes here", limit)
                                                   : fmt::format("bad request: {}", ec.message()));
        res.keep_alive(false);
        res.prepare_payload();
        log("-", "-", status, 0);
        co_await http::async_write(stream, res, kAwait);
        break;
      }
      Request req = parser.release();
      const auto t0 = std::chrono::steady_clock::now();
      if (!refused && websocket::is_upgrade(req)) {
        // Feeds never take more than half the connections: the rest stay for pages and the API.
        const std::size_t feed_cap = std::min(opts_.max_live_feeds, max_connections_ / 2);
        if (live_feeds_ >= feed_cap) {
          refused = error(503, fmt::format("the server has {} live feeds open, its limit; try again shortly", feed_cap));
        } else {
          conn->stream = nullptr;  // a live feed is not evicted (a page a person watches): it has its own cap and timeout
          stream.expires_never();  // the WebSocket's own timeout takes over
          ++live_feeds_;
          struct Release {
            std::size_t& n;
            ~Release() { --n; }
          } release{live_feeds_};
          co_await websocket_session(std::move(stream), std::move(req));
          co_return;
        }
      }
      Response res;
      if (refused)
        res = std::move(*refused);
      else
        res = co_await handle(req, client);
      harden(res, req);
      res.version(req.version());
      res.keep_alive(req.keep_alive() && !refused);
      res.prepare_payload();
      log(std::string(req.method_string()), std::string(req.target()), res.result_int(),
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      stream.expires_after(std::chrono::seconds(opts_.request_timeout_s));
      auto [wec, wn] = co_await http::async_write(stream, res, kAwait);
      if (wec || !res.keep_alive()) break;
    }
    conn->stream = nullptr;
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  /// A Host this server serves: a loopback name or address, an address it is bound to (any IP
  /// address when bound to all of them), or an --allow-host name; on its port.
  bool host_allowed(const HostPort& hp) const {
    if (hp.port.value_or(80) != port_) return false;
    if (is_loopback_host(hp.host)) return true;
    if (std::find(bound_.begin(), bound_.end(), hp.host) != bound_.end()) return true;
    if (wildcard_ && is_ip_literal(hp.host)) return true;
    for (const auto& h : opts_.allow_hosts)
      if (lower(h) == hp.host) return true;
    return false;
  }

  /// A transcript upload (POST /api/replay...): its own body limit and Content-Types.
  static bool is_upload(const Request& req) {
    return req.method() == http::verb::post && req.target().starts_with("/api/replay");
  }

  /// Same-origin, the right Host, the token beyond loopback, a JSON body for POSTs: else the refusal.
  std::optional<Response> guard(const Request& req) const {
    const std::string_view host = req[http::field::host];
    const auto hp = parse_host_header(host);
    if (!hp || !host_allowed(*hp))
      return error(421, fmt::format("this server does not answer for the host '{}' (see cfr-serve --allow-host)",
                                    std::string(host.substr(0, 100))));
    if (const std::string_view origin = req[http::field::origin]; !origin.empty()) {
      if (lower(origin) != "http://" + lower(host))
        return error(403, "cross-origin requests are refused: this server answers its own pages only");
    }
    // A browser says where a request comes from even without an Origin (e.g. a GET of the API).
    const std::string_view site = req["Sec-Fetch-Site"], mode = req["Sec-Fetch-Mode"];
    if ((site == "cross-site" || site == "same-site") && mode != "navigate")
      return error(403, "cross-site requests are refused: this server answers its own pages only");
    if (!token_.empty()) {
      const std::string_view target = req.target();
      const auto qpos = target.find('?');
      const std::string_view query = qpos == std::string_view::npos ? std::string_view{} : target.substr(qpos + 1);
      if (const auto q = query_value(query, "token"); q && same_secret(*q, token_) && req.method() == http::verb::get) {
        // The printed link: the token becomes a cookie and the address bar loses it.
        Response res{http::status::see_other, 11};
        // Back to the same page without the token (a path of this server only: never "//host").
        std::string path(target.substr(0, qpos));
        if (path.empty() || path.front() != '/' || path.starts_with("//")) path = "/";
        res.set(http::field::location, path);
        res.set(http::field::set_cookie, fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict", kTokenCookie, token_));
        return res;
      }
      const auto cookie = cookie_value(req[http::field::cookie], kTokenCookie);
      const std::string_view header = req["X-CFR-Token"];
      if (!(cookie && same_secret(*cookie, token_)) && !same_secret(header, token_))
        return error(401, "this server needs its token: open the link it printed at start, or send the header X-CFR-Token");
    }
    if (req.method() == http::verb::options) return error(405, "no cross-origin requests: OPTIONS is not served");
    if (req.method() == http::verb::post) {
      const std::string type = media_type(req[http::field::content_type]);
      const bool upload = is_upload(req);
      if (upload ? (type != "application/octet-stream" && type != "application/gzip" && type != "application/json")
                 : type != "application/json")
        return error(415, upload ? "a transcript is sent as Content-Type: application/octet-stream"
                                 : "a POST needs Content-Type: application/json");
    }
    return std::nullopt;
  }

  /// Every answer: no sniffing, no referrer, no framing; pages may load this server's scripts only.
  void harden(Response& res, const Request& req) const {
    res.set("X-Content-Type-Options", "nosniff");
    res.set("Referrer-Policy", "no-referrer");
    res.set("X-Frame-Options", "DENY");
    res.set("Cross-Origin-Opener-Policy", "same-origin");
    res.set("Cross-Origin-Resource-Policy", "same-origin");
    const std::string_view host = req[http::field::host];
    const bool host_ok = parse_host_header(host).has_value();
    res.set("Content-Security-Policy",
            fmt::format("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'{}; "
                        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
                        host_ok ? " ws://" + std::string(host) : std::string()));
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

  asio::awaitable<Response> handle(const Request& req, const std::string& client) {
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
      co_return co_await api(req, t, get, post, client);
    } catch (const ApiError& e) {
      co_return error(e.status, e.what());
    } catch (const std::exception& e) {
      // A bug, not the request's fault: answered (500) without details (they may name server
      // paths) and logged; the server goes on.
      std::cerr << fmt::format("cfr-serve: internal error on {} {}: {}", std::string(req.method_string()),
                               std::string(req.target()), e.what())
                << std::endl;
      co_return error(500, "internal error (the server's log has the details)");
    }
  }

  asio::awaitable<Response> api(const Request& req, const Target& t, bool get, bool post, const std::string& client) {
    const auto& s = t.segments;
    const std::size_t n = s.size();
    const auto body_limit = [&] {
      if (req.body().size() > opts_.max_body) throw ApiError(413, "request body too large");
    };
    if (n == 2 && s[1] == "players") {
      if (!get) co_return error(405, "the players are read with GET");
      const SearchLimits& l = opts_.play.search_limits;
      const SearchRequest d;
      json j = {{"players", catalog_.list()},
                {"default", opts_.default_opponent},
                {"hint", opts_.play.hint ? json(opts_.play.hint_label) : json(nullptr)},
                {"search",
                 {{"limits", {{"k", {1, l.max_k}}, {"n", {1, l.max_n}}, {"cap", {1, l.max_cap}}, {"prior", {0, l.max_prior}}}},
                  {"default", {{"k", d.k}, {"n", d.n}}}}}};
      co_return json_response(200, j);
    }
    if (n == 2 && s[1] == "stats") {
      const auto st = room_.stats();
      co_return json_response(200, {{"live_games", room_.live_games()},
                                    {"games_created", st.games_created},
                                    {"opponent_moves", st.opponent_moves},
                                    {"rounds", st.rounds},
                                    {"largest_batch", st.largest_batch},
                                    {"expired", st.expired},
                                    {"evicted", st.evicted},
                                    {"over_budget", st.over_budget},
                                    {"opponent_failures", st.opponent_failures},
                                    {"refused_client_limit", st.refused_client_limit},
                                    {"refused_full", st.refused_full},
                                    {"connections", connections_.size()},
                                    {"evicted_connections", evicted_connections_},
                                    {"live_feeds", live_feeds_}});
    }
    if (n == 2 && s[1] == "games") {
      if (!post) co_return error(405, "a game is created with POST");
      body_limit();
      const NewGameRequest r = parse_new_game(req.body(), opts_.play.search_limits);
      auto [status, body] =
          co_await async_work([&](GameRoom::Done d) { room_.create(r, client, std::move(d)); }, asio::use_awaitable);
      co_return json_response(status, body);
    }
    if (n >= 3 && s[1] == "games") {
      const std::string& id = s[2];
      if (n == 3) {
        if (!get) co_return error(405, "a game is read with GET");
        co_return json_response(200, room_.view(id));
      }
      if (n == 4 && s[3] == "move") {
        if (!post) co_return error(405, "a move is made with POST");
        body_limit();
        const int action = parse_move(req.body(), opts_.play.rules.action_size());
        auto [status, body] =
            co_await async_work([&](GameRoom::Done d) { room_.move(id, action, std::move(d)); }, asio::use_awaitable);
        co_return json_response(status, body);
      }
      if (n == 4 && s[3] == "abandon") {
        if (!post) co_return error(405, "a game is abandoned with POST");
        body_limit();
        room_.abandon(id);
        co_return json_response(200, {{"ok", true}});
      }
      if (n == 4 && s[3] == "hint") {
        if (!get) co_return error(405, "a hint is read with GET");
        auto [status, body] = co_await async_work([&](GameRoom::Done d) { room_.hint(id, std::move(d)); }, asio::use_awaitable);
        co_return json_response(status, body);
      }
      if (n == 4 && s[3] == "transcript") {
        if (!get) co_return error(405, "a transcript is read with GET");
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
      if (!d) co_return error(404, "no run of that name");
      co_return json_response(200, *d);
    }
    if (n == 2 && s[1] == "replay") {
      if (!post) co_return error(405, "a transcript is sent with POST");
      int k = 0;
      if (const auto g = query_value(t.query, "game")) {
        if (g->empty() || g->size() > 9 || g->find_first_not_of("0123456789") != std::string::npos)
          co_return error(400, "query 'game' must be a game's index (0, 1, ...)");
        k = std::stoi(*g);
      }
      // Parsed on the upload worker, one at a time, within the limits; at most two waiting.
      if (uploads_ >= 3) co_return error(503, "the server is reading other transcripts; try again shortly");
      ++uploads_;
      auto body = std::make_shared<std::string>(req.body());
      const ReplayLimits limits = opts_.replay;
      auto [status, out] = co_await async_work(
          [&](GameRoom::Done d) {
            asio::post(upload_pool_, [body, k, limits, d = std::move(d)] {
              try {
                d(200, parse_replay_upload(*body, k, limits));
              } catch (const ApiError& e) {
                d(e.status, {{"error", e.what()}});
              } catch (const std::exception& e) {
                std::cerr << "cfr-serve: internal error reading an upload: " << e.what() << std::endl;
                d(500, {{"error", "internal error (the server's log has the details)"}});
              }
            });
          },
          asio::use_awaitable);
      --uploads_;
      co_return json_response(status, out);
    }
    co_return error(404, "no such API resource");
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
      if (const auto f = query_value(t.query, "from");
          f && !f->empty() && f->size() < 10 && f->find_first_not_of("0123456789") == std::string::npos)
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
    // A feed whose page is gone, or that stops reading, is closed: pinged when silent for half of
    // --live-idle-seconds, closed when no answer comes by the end of it (a stalled write included).
    websocket::stream_base::timeout to{};
    to.handshake_timeout = std::chrono::seconds(opts_.request_timeout_s);
    to.idle_timeout = std::chrono::seconds(opts_.live_idle_s);
    to.keep_alive_pings = true;
    ws.set_option(to);
    ws.read_message_max(4096);  // the page sends nothing but control frames
    auto [aec] = co_await ws.async_accept(req, kAwait);
    if (aec) co_return;
    log("GET", std::string(req.target()), 101, 0);
    std::string last_state;
    bool closed = false;
    // Reading is what notices the browser's close frame.
    asio::co_spawn(
        ioc_,
        [&]() -> asio::awaitable<void> {
          beast::flat_buffer b;
          for (;;) {
            auto [rec, rn] = co_await ws.async_read(b, kAwait);
            if (rec) break;
            b.consume(b.size());
          }
          closed = true;
        },
        asio::detached);
    asio::steady_timer timer(ioc_);
    while (!closed) {
      // The run's metrics are read once for every feed and page (RunIndex keeps them); a feed
      // sends the lines after its `from` as far as RunMetrics::kRecentLines back.
      const RunMetrics& m = runs_.metrics(*run);
      long next = from;
      json fresh = m.since(from, next);
      from = next;
      json status = RunIndex::status(*run, m);
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
  RunIndex runs_;
  Catalog catalog_;
  asio::thread_pool upload_pool_{1};
  GameRoom room_;
  fs::path www_;
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors_;
  std::vector<std::string> bound_;  // the bound addresses, lower case
  bool loopback_only_ = true, wildcard_ = false;
  unsigned short port_ = 0;
  std::string token_;  // beyond loopback: every request needs it
  std::size_t max_connections_ = 0;
  // I/O thread only: the open connections (what evict_idle looks at).
  struct Connection {
    beast::tcp_stream* stream = nullptr;  // null once it ended, was evicted or became a live feed
    bool waiting = false;                 // waiting for its next request
    std::chrono::steady_clock::time_point since;
  };
  std::set<std::shared_ptr<Connection>> connections_;
  long evicted_connections_ = 0;
  std::size_t live_feeds_ = 0;  // I/O thread only: open WebSocket live feeds
  int uploads_ = 0;             // I/O thread only
};

}  // namespace

int serve(const ServerOptions& opts) {
  Server server(opts);
  return server.run();
}

}  // namespace cfr::serve
