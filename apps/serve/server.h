#pragma once
// cfr-serve's web server: Boost.Beast over Boost.Asio, one coroutine per connection (C++20
// co_await), the pages and the JSON/WebSocket API of docs/serve.md.
#include <cstddef>
#include <string>
#include <vector>

#include "apps/serve/play.h"

namespace cfr::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  unsigned short port = 8080;  // 0: any free port (printed)
  std::vector<std::string> runs;
  std::string www;       // the pages (apps/serve/www, installed with the build)
  std::string chart_js;  // Chart.js from the Debian package, served as /vendor/chart.js
  std::size_t max_body = 64 * 1024;         // API requests
  std::size_t max_upload = 16 * 1024 * 1024;  // a transcript to replay
  PlayOptions play;
  PlayerFactory factory;
  std::vector<std::string> opponents;  // offered on the play page (besides the runs' checkpoints)
  std::string default_opponent = "heuristic_balanced";  // selected on the play page
};

/// Serves until SIGINT or SIGTERM, then closes every connection and returns 0. InputError when the
/// address cannot be bound or a folder is missing.
int serve(const ServerOptions& opts);

}  // namespace cfr::serve
