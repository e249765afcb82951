#include "apps/serve/runs.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "engine/core/errors.h"

namespace cfr::serve {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<json> MetricsTail::read_new() {
  std::vector<json> out;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return out;
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uintmax_t>(in.tellg());
  if (size < offset_) offset_ = 0;  // rewritten (a resume trims it): read again from the start
  if (size == offset_) return out;
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk(size - offset_, '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  chunk.resize(static_cast<std::size_t>(in.gcount()));
  std::size_t start = 0;
  for (std::size_t nl; (nl = chunk.find('\n', start)) != std::string::npos; start = nl + 1) {
    json j = json::parse(std::string_view(chunk).substr(start, nl - start), nullptr, false);
    if (j.is_object())
      out.push_back(std::move(j));
    else
      ++bad_;
  }
  offset_ += start;  // a torn last line stays for the next call
  return out;
}

RunIndex::RunIndex(std::vector<std::string> roots) {
  for (const auto& r : roots) {
    if (!fs::is_directory(r)) throw InputError(fmt::format("--runs {}: not a directory", r));
    roots_.emplace_back(r);
  }
}

namespace {

bool is_run(const fs::path& p) { return fs::exists(p / "metrics.jsonl") || fs::exists(p / "config.toml"); }

struct RunConfig {
  std::string game = "?", algorithm = "deep_cfr";
  long max_iterations = 0;
  std::string text;
};

RunConfig read_config(const fs::path& run) {
  RunConfig c;
  std::ifstream in(run / "config.toml");
  if (!in) return c;
  // A run's config is a few KiB: a larger file is not one, and is not echoed.
  c.text.resize(256 * 1024);
  in.read(c.text.data(), static_cast<std::streamsize>(c.text.size()));
  c.text.resize(static_cast<std::size_t>(in.gcount()));
  if (!in.eof()) {
    c.text = "(config.toml is larger than 256 KiB: not shown)";
    return c;
  }
  try {
    const toml::table t = toml::parse(c.text);
    c.game = t["run"]["game"].value_or(std::string("?"));
    c.max_iterations = t["run"]["max_iterations"].value_or(0L);
    c.algorithm = t["algorithm"]["name"].value_or(std::string("deep_cfr"));
  } catch (const toml::parse_error&) {
    // Shown as text; the fields stay unknown.
  }
  return c;
}

std::string last_log_line(const fs::path& run) {
  std::ifstream in(run / "log.txt", std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg(), from = std::max<std::streamoff>(0, size - 4096);
  in.seekg(from);
  std::string tail(static_cast<std::size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  const auto nl = tail.rfind('\n');
  return nl == std::string::npos ? tail : tail.substr(nl + 1);
}

/// The best evaluation in a run's metrics: the lowest exploitability, or the highest win rate
/// against each opponent.
json best_of(const std::vector<json>& metrics) {
  json best = json::object();
  for (const auto& m : metrics) {
    if (const auto e = m.find("exploitability"); e != m.end() && e->is_number()) {
      if (!best.contains("exploitability") || e->get<double>() < best["exploitability"].get<double>()) {
        best["exploitability"] = *e;
        best["iteration"] = m.value("iteration", 0);
      }
    }
    if (const auto ev = m.find("evaluation"); ev != m.end() && ev->is_object())
      for (const auto& [opp, r] : ev->items())
        if (r.is_object() && r.contains("win_rate")) {
          const std::string key = "win_rate_vs_" + opp;
          if (!best.contains(key) || r["win_rate"].get<double>() > best[key].get<double>()) best[key] = r["win_rate"];
        }
  }
  return best;
}

}  // namespace

json RunIndex::status(const fs::path& run, const std::vector<json>& metrics) {
  const RunConfig c = read_config(run);
  const long it = metrics.empty() ? 0 : metrics.back().value("iteration", 0L);
  const std::string last = last_log_line(run);
  std::error_code ec;
  const auto mtime = fs::last_write_time(run / "metrics.jsonl", ec);
  const bool recent = !ec && fs::file_time_type::clock::now() - mtime < std::chrono::seconds(30);
  std::string state = "stopped";
  if ((c.max_iterations > 0 && it >= c.max_iterations) || last.find("max_minutes") != std::string::npos)
    state = "finished";
  else if (last.find("stopped") != std::string::npos || last.find("interrupted") != std::string::npos)
    state = "stopped";
  else if (recent)
    state = "running";
  double mean = 0;
  for (const auto& m : metrics) mean += m.value("iteration_seconds", 0.0);
  if (!metrics.empty()) mean /= static_cast<double>(metrics.size());
  json eta = nullptr;
  if (state == "running" && c.max_iterations > it) eta = mean * static_cast<double>(c.max_iterations - it);
  return {{"state", state}, {"iteration", it}, {"max_iterations", c.max_iterations}, {"eta_seconds", eta}};
}

std::vector<fs::path> RunIndex::runs() const {
  std::vector<fs::path> out;
  std::set<std::string> names;
  for (const auto& root : roots_) {
    std::vector<fs::path> here;
    if (is_run(root)) here.push_back(root);
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root, ec))
      if (e.is_directory() && is_run(e.path())) here.push_back(e.path());
    std::sort(here.begin(), here.end());
    for (auto& p : here)
      if (names.insert(fs::absolute(p).lexically_normal().filename().string()).second) out.push_back(std::move(p));
  }
  return out;
}

std::optional<fs::path> RunIndex::find(const std::string& name) const {
  for (const auto& p : runs())
    if (fs::absolute(p).lexically_normal().filename() == name) return p;
  return std::nullopt;
}

json RunIndex::list() const {
  json out = json::array();
  for (const auto& p : runs()) {
    MetricsTail tail(p / "metrics.jsonl");
    const auto metrics = tail.read_new();
    const RunConfig c = read_config(p);
    json st = status(p, metrics);
    std::error_code ec;
    const auto mtime = fs::last_write_time(p / "metrics.jsonl", ec);
    const auto age = ec ? 0.0 : std::chrono::duration<double>(fs::file_time_type::clock::now() - mtime).count();
    out.push_back({{"name", fs::absolute(p).lexically_normal().filename().string()},
                   {"game", c.game},
                   {"algorithm", c.algorithm},
                   {"iteration", st["iteration"]},
                   {"max_iterations", st["max_iterations"]},
                   {"state", st["state"]},
                   {"best", best_of(metrics)},
                   {"seconds_since_update", age}});
  }
  std::stable_sort(out.begin(), out.end(), [](const json& a, const json& b) {
    return a["seconds_since_update"].get<double>() < b["seconds_since_update"].get<double>();
  });
  return out;
}

std::optional<json> RunIndex::detail(const std::string& name) const {
  const auto p = find(name);
  if (!p) return std::nullopt;
  MetricsTail tail(*p / "metrics.jsonl");
  auto metrics = tail.read_new();
  const RunConfig c = read_config(*p);
  json d = status(*p, metrics);
  d["name"] = name;
  d["game"] = c.game;
  d["algorithm"] = c.algorithm;
  d["config"] = c.text;
  d["best"] = best_of(metrics);
  d["metrics"] = std::move(metrics);
  for (const fs::path& ladder : {*p / "ladder.json", p->parent_path() / "ladder.json"}) {
    std::error_code ec;
    if (fs::file_size(ladder, ec) > (4u << 20) || ec) continue;  // absent, or too large to be a ladder
    std::ifstream in(ladder);
    if (!in) continue;
    json j = json::parse(in, nullptr, false);
    if (j.is_object()) {
      d["ladder"] = std::move(j);
      break;
    }
  }
  return d;
}

std::vector<std::pair<std::string, fs::path>> RunIndex::playable() const {
  std::vector<std::pair<std::string, fs::path>> out;
  for (const auto& p : runs())
    if (read_config(p).game == "lost_cities" && fs::exists(p / "checkpoints" / "latest"))
      out.emplace_back(fs::absolute(p).lexically_normal().filename().string(), p);
  return out;
}

}  // namespace cfr::serve
