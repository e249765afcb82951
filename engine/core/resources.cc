#include "engine/core/resources.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <dlfcn.h>
#include <strings.h>
#include <unistd.h>

#include <fmt/format.h>

namespace cfr {

namespace {

namespace fs = std::filesystem;

/// A limit file's value; "max" (v2) or a value near 2^63 (v1's "unlimited") count as no limit.
double read_limit(const fs::path& file) {
  std::ifstream in(file);
  std::string word;
  if (!(in >> word) || word == "max") return 0;
  try {
    const double v = std::stod(word);
    return v > 0 && v < 0x1p62 ? v : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

MemoryLimit memory_limit(const std::string& proc_self_cgroup, const std::string& cgroup_root, double physical_bytes) {
  MemoryLimit best{physical_bytes, "physical RAM"};
  auto consider = [&](const fs::path& file) {
    const double v = read_limit(file);
    if (v > 0 && (best.bytes <= 0 || v < best.bytes)) best = {v, fmt::format("cgroup memory limit ({})", file.string())};
  };
  // Lines "ID:CONTROLLERS:PATH": v1 has a "memory" controller, v2 the line "0::PATH". Inside a
  // container the mount may already be the cgroup itself, so the path is tried from the mount
  // root down too: every directory from the root to the cgroup is examined.
  std::istringstream lines(proc_self_cgroup);
  std::string line;
  while (std::getline(lines, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    std::string mount, file;
    if (controllers.empty()) {
      mount = cgroup_root;
      file = "memory.max";
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      mount = cgroup_root + "/memory";
      file = "memory.limit_in_bytes";
    } else {
      continue;
    }
    fs::path dir = mount;
    consider(dir / file);
    for (const auto& part : fs::path(path).relative_path()) {
      dir /= part;
      consider(dir / file);
    }
  }
  return best;
}

MemoryLimit memory_limit() {
  std::ifstream in("/proc/self/cgroup");
  std::stringstream text;
  text << in.rdbuf();
  const double ram = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  return memory_limit(text.str(), "/sys/fs/cgroup", ram > 0 ? ram : 0);
}

std::int64_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  std::int64_t pages = 0, resident = 0;
  if (!(in >> pages >> resident)) return 0;
  return resident * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
}

std::string blas_core() {
  using CoreName = char* (*)();
  const auto get = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = get ? get() : nullptr;
  return name ? std::string(name) : std::string();
}

bool cpu_has(std::string_view flag) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;)
        if (w == flag) return true;
      return false;
    }
  return false;
}

std::string blas_core_for_cpu() { return cpu_has("avx512f") ? "SkylakeX" : cpu_has("avx2") ? "Haswell" : ""; }

void select_blas_kernels(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr || argv == nullptr || argv[0] == nullptr) return;
  if (strcasecmp(blas_core().c_str(), "prescott") != 0) return;  // no OpenBLAS, or kernels it chose for this CPU
  const std::string core = blas_core_for_cpu();
  if (core.empty() || setenv("OPENBLAS_CORETYPE", core.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);  // returns only on failure: go on with the generic kernels
  unsetenv("OPENBLAS_CORETYPE");
}

}  // namespace cfr
