#include "apps/serve/runs.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "engine/core/errors.h"

namespace cfr::serve {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<json> MetricsTail::read_new(std::size_t max_bytes) {
  std::vector<json> out;
  caught_up_ = true;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return out;
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uintmax_t>(in.tellg());
  if (size < offset_) {  // rewritten (a resume trims it): read again from the start
    offset_ = 0;
    skipping_ = false;
    ++restarts_;
  }
  if (size == offset_) return out;
  const std::uintmax_t take = std::min<std::uintmax_t>(size - offset_, std::max(max_bytes, kMaxLine));
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk(static_cast<std::size_t>(take), '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  chunk.resize(static_cast<std::size_t>(in.gcount()));
  caught_up_ = offset_ + chunk.size() >= size;
  std::size_t start = 0;
  if (skipping_) {  // the rest of a line too long to be a metrics line
    const std::size_t nl = chunk.find('\n');
    if (nl == std::string::npos) {
      offset_ += chunk.size();
      return out;
    }
    start = nl + 1;
    skipping_ = false;
  }
  for (std::size_t nl; (nl = chunk.find('\n', start)) != std::string::npos; start = nl + 1) {
    json j = nl - start > kMaxLine ? json() : json::parse(std::string_view(chunk).substr(start, nl - start), nullptr, false);
    if (j.is_object())
      out.push_back(std::move(j));
    else
      ++bad_;
  }
  if (chunk.size() - start >= kMaxLine) {  // no newline within kMaxLine: skipped to the next one
    ++bad_;
    skipping_ = true;
    start = chunk.size();
  }
  offset_ += start;  // a torn last line stays for the next call
  return out;
}

namespace {

/// A field of a metrics line when it is a number.
std::optional<double> number(const json& line, const char* key) {
  const auto it = line.find(key);
  if (it == line.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

json point_of(const json& line) {
  json p = json::object();
  for (const char* key : {"iteration", "loss_advantage", "loss_strategy", "exploitability", "nodes_per_second",
                          "traversal_seconds", "train_seconds", "eval_seconds"})
    if (const auto it = line.find(key); it != line.end()) p[key] = *it;
  if (const auto ev = line.find("evaluation"); ev != line.end() && ev->is_object()) {
    json rates = json::object();
    for (const auto& [opp, r] : ev->items())
      if (r.is_object())
        if (const auto w = number(r, "win_rate")) rates[opp] = {{"win_rate", *w}};
    p["evaluation"] = std::move(rates);
  }
  return p;
}

void RunMetrics::Thinned::add(long line, const std::string& point) {
  if (seen++ % stride == 0) kept.emplace_back(line, point);
  if (kept.size() > 2 * kCurvePoints) {  // keep every other one: the stride doubles
    std::size_t w = 0;
    for (std::size_t r = 0; r < kept.size(); r += 2, ++w)
      if (w != r) kept[w] = std::move(kept[r]);
    kept.resize(w);
    stride *= 2;
  }
}

void RunMetrics::clear() {
  lines_ = iteration_ = 0;
  iteration_seconds_ = 0;
  best_ = json::object();
  curve_ = {};
  evaluations_ = {};
  recent_.clear();
}

void RunMetrics::add(const json& line) {
  const long n = lines_++;
  if (const auto it = number(line, "iteration")) iteration_ = static_cast<long>(*it);
  if (const auto s = number(line, "iteration_seconds")) iteration_seconds_ += *s;
  // The best evaluation: the lowest exploitability, the highest win rate against each opponent.
  if (const auto e = number(line, "exploitability");
      e && (!best_.contains("exploitability") || *e < best_["exploitability"].get<double>())) {
    best_["exploitability"] = *e;
    best_["iteration"] = iteration_;
  }
  const json p = point_of(line);
  if (const auto ev = p.find("evaluation"); ev != p.end())
    for (const auto& [opp, r] : ev->items()) {
      const std::string key = "win_rate_vs_" + opp;
      const double w = r["win_rate"].get<double>();
      if (!best_.contains(key) || w > best_[key].get<double>()) best_[key] = w;
    }
  const std::string text = p.dump(-1, ' ', false, json::error_handler_t::replace);
  curve_.add(n, text);
  if (p.contains("exploitability") || p.contains("evaluation")) evaluations_.add(n, text);
  recent_.emplace_back(n, text);
  if (recent_.size() > kRecentLines) recent_.pop_front();
}

void RunMetrics::read_on() {
  for (;;) {
    const long restarts = tail_.restarts();
    const std::vector<json> batch = tail_.read_new();
    if (tail_.restarts() != restarts) clear();
    for (const json& line : batch) add(line);
    if (tail_.caught_up()) return;
  }
}

json RunMetrics::curve() const {
  json out = json::array();
  long last = -1;
  const auto& a = curve_.kept;
  const auto& b = evaluations_.kept;
  std::size_t i = 0, j = 0;
  const auto take = [&](const std::pair<long, std::string>& x) {
    if (x.first <= last) return;
    out.push_back(json::parse(x.second));
    last = x.first;
  };
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].first <= b[j].first))
      take(a[i++]);
    else
      take(b[j++]);
  }
  if (!recent_.empty()) take(recent_.back());  // the curve reaches the last line
  return out;
}

json RunMetrics::since(long from, long& next) const {
  json out = json::array();
  next = from;
  for (const auto& [n, text] : recent_)
    if (n >= from) {
      out.push_back(json::parse(text));
      next = n + 1;
    }
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

}  // namespace

json RunIndex::status(const fs::path& run, const RunMetrics& metrics) {
  const RunConfig c = read_config(run);
  const long it = metrics.iteration();
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
  json eta = nullptr;
  if (state == "running" && c.max_iterations > it)
    eta = metrics.mean_iteration_seconds() * static_cast<double>(c.max_iterations - it);
  return {{"state", state}, {"iteration", it}, {"max_iterations", c.max_iterations}, {"eta_seconds", eta}};
}

const RunMetrics& RunIndex::metrics(const fs::path& run) const {
  RunMetrics& m = metrics_.try_emplace(run, run / "metrics.jsonl").first->second;
  m.read_on();
  return m;
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
  const std::vector<fs::path> all = runs();
  std::erase_if(metrics_, [&](const auto& kv) { return std::find(all.begin(), all.end(), kv.first) == all.end(); });
  for (const auto& p : all) {
    const RunMetrics& m = metrics(p);
    const RunConfig c = read_config(p);
    json st = status(p, m);
    std::error_code ec;
    const auto mtime = fs::last_write_time(p / "metrics.jsonl", ec);
    const auto age = ec ? 0.0 : std::chrono::duration<double>(fs::file_time_type::clock::now() - mtime).count();
    out.push_back({{"name", fs::absolute(p).lexically_normal().filename().string()},
                   {"game", c.game},
                   {"algorithm", c.algorithm},
                   {"iteration", st["iteration"]},
                   {"max_iterations", st["max_iterations"]},
                   {"state", st["state"]},
                   {"best", m.best()},
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
  const RunMetrics& m = metrics(*p);
  const RunConfig c = read_config(*p);
  json d = status(*p, m);
  d["name"] = name;
  d["game"] = c.game;
  d["algorithm"] = c.algorithm;
  d["config"] = c.text;
  d["best"] = m.best();
  d["lines"] = m.lines();
  d["metrics"] = m.curve();
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
