#include "python/train.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include "engine/core/errors.h"

extern char** environ;

namespace cfr::py {

namespace fs = std::filesystem;

std::string find_cfr_run(const std::string& module_file) {
  fs::path program;
  if (const char* bin = std::getenv("CFR_BIN"); bin != nullptr && *bin != '\0')
    program = fs::path(bin) / "cfr-run";
  else
    program = fs::absolute(fs::path(module_file)).parent_path().parent_path() / "bin" / "cfr-run";
  if (!fs::is_regular_file(program))
    throw InputError(
        fmt::format("cfr.train: no cfr-run at {} (build it: cmake --build build --target cfr-run; or set CFR_BIN "
                    "to the folder that holds it)",
                    program.string()));
  return program.string();
}

namespace {

toml::array toml_array(const nlohmann::json& a, const std::string& where);

void put(toml::table& t, const std::string& key, const nlohmann::json& v, const std::string& where) {
  const std::string at = where.empty() ? key : where + "." + key;
  if (v.is_object()) {
    toml::table sub;
    for (const auto& [k, x] : v.items()) put(sub, k, x, at);
    t.insert_or_assign(key, std::move(sub));
  } else if (v.is_array()) {
    t.insert_or_assign(key, toml_array(v, at));
  } else if (v.is_boolean()) {
    t.insert_or_assign(key, v.get<bool>());
  } else if (v.is_number_integer()) {
    t.insert_or_assign(key, v.get<std::int64_t>());
  } else if (v.is_number()) {
    t.insert_or_assign(key, v.get<double>());
  } else if (v.is_string()) {
    t.insert_or_assign(key, v.get<std::string>());
  } else {
    throw InputError(fmt::format("cfr.train: config key {}: {} is not a TOML value", at, v.dump()));
  }
}

toml::array toml_array(const nlohmann::json& a, const std::string& where) {
  toml::array out;
  for (const auto& v : a) {
    if (v.is_boolean())
      out.push_back(v.get<bool>());
    else if (v.is_number_integer())
      out.push_back(v.get<std::int64_t>());
    else if (v.is_number())
      out.push_back(v.get<double>());
    else if (v.is_string())
      out.push_back(v.get<std::string>());
    else
      throw InputError(fmt::format("cfr.train: config key {}: {} in a list is not a TOML value", where, v.dump()));
  }
  return out;
}

}  // namespace

std::string toml_from_json_text(const std::string& json) {
  const nlohmann::json j = nlohmann::json::parse(json);
  if (!j.is_object()) throw InputError("cfr.train: a config dict maps sections to tables, e.g. {\"run\": {\"game\": \"kuhn\"}}");
  toml::table root;
  for (const auto& [k, v] : j.items()) {
    if (!v.is_object())
      throw InputError(
          fmt::format("cfr.train: config['{}'] must be a table (a dict of keys), e.g. {{\"run\": {{\"seed\": 1}}}}", k));
    put(root, k, v, "");
  }
  std::ostringstream out;
  out << root << "\n";
  return out.str();
}

TrainProcess::TrainProcess(const std::string& program, const std::vector<std::string>& args, std::string metrics)
    : metrics_(std::move(metrics)) {
  std::error_code ec;  // a resumed run's earlier lines are not this run's
  if (const auto size = fs::file_size(metrics_, ec); !ec) offset_ = size;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = (fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / "cfr-train-stderr-XXXXXX").string();
  const int err = ::mkstemp(pattern.data());
  if (err < 0) throw InputError(fmt::format("cfr.train: cannot create a temporary file like {}", pattern));
  stderr_path_ = pattern;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, err, STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, err);
  // Its own process group: a Ctrl-C at the terminal reaches Python alone, which passes one SIGINT
  // on (two would make cfr-run exit at once, mid-step).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int rc = ::posix_spawn(&pid_, program.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(err);
  if (rc != 0) {
    pid_ = -1;
    throw InputError(fmt::format("cfr.train: cannot run {}: {}", program, std::strerror(rc)));
  }
}

TrainProcess::~TrainProcess() {
  if (pid_ > 0 && !exit_code_) {
    interrupt();
    (void)wait_for(-1);
  }
  std::error_code ec;
  if (!stderr_path_.empty()) fs::remove(stderr_path_, ec);
}

std::optional<int> TrainProcess::wait_for(double seconds) {
  if (exit_code_) return exit_code_;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(seconds, 0.0));
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exit_code_;
    }
    if (seconds >= 0 && std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::vector<std::string> TrainProcess::new_metrics_lines() {
  std::vector<std::string> lines;
  std::ifstream in(metrics_, std::ios::binary);
  if (!in) return lines;
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  offset_ += chunk.size();
  partial_ += chunk;
  std::size_t start = 0;
  for (std::size_t nl = partial_.find('\n'); nl != std::string::npos; nl = partial_.find('\n', start)) {
    if (nl > start) lines.push_back(partial_.substr(start, nl - start));
    start = nl + 1;
  }
  partial_.erase(0, start);
  return lines;
}

void TrainProcess::interrupt() {
  if (pid_ > 0 && !exit_code_) ::kill(pid_, SIGINT);
}

std::string TrainProcess::stderr_text() const {
  std::ifstream in(stderr_path_, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr std::size_t kMax = 64 * 1024;
  return text.size() > kMax ? text.substr(text.size() - kMax) : text;
}

}  // namespace cfr::py
