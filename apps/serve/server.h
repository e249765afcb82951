#pragma once
// cfr-serve's web server: Boost.Beast over Boost.Asio, one coroutine per connection (C++20
// co_await), the pages and the JSON/WebSocket API of docs/serve.md. Safe by default (docs/serve.md,
// "Security"): requests name offered opponents only, same-origin only (Host, Origin, Content-Type
// checked; no CORS), a token beyond loopback, bounded work and connections.
#include <cstddef>
#include <string>
#include <vector>

#include "apps/serve/play.h"

namespace cfr::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";        // an IP address (IPv6 with or without brackets) or "localhost"
  unsigned short port = 8080;            // 0: any free port (printed)
  std::vector<std::string> allow_hosts;  // further Host names a request may use (beyond loopback)
  std::vector<std::string> runs;
  std::string www;                            // the pages (apps/serve/www, installed with the build)
  std::string chart_js;                       // Chart.js from the Debian package, served as /vendor/chart.js
  std::size_t max_body = 64 * 1024;           // API requests
  std::size_t max_upload = 16 * 1024 * 1024;  // a transcript to replay, as sent
  ReplayLimits replay;
  std::size_t max_connections = 256;  // open connections, then 503 (also kept below the file limit)
  int request_timeout_s = 30;         // reading one request; a kept-alive connection's idle time
  std::size_t max_live_feeds = 32;    // open WebSocket live feeds (a subset of the connections), then 503
  int live_idle_s = 60;               // a live feed silent this long (no pong to its pings) is closed
  PlayOptions play;
  PlayerFactory factory;
  std::vector<Offer> offers;     // bots, shipped models, --opponent extras (runs are added live)
  std::string default_opponent;  // an offer's id, preselected on the play page
};

/// Serves until SIGINT or SIGTERM, then closes every connection and returns 0. InputError when the
/// address cannot be bound or a folder is missing.
int serve(const ServerOptions& opts);

}  // namespace cfr::serve
