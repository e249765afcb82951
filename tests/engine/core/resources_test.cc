// The memory limit that applies to a process: physical RAM, or the smallest cgroup limit on its
// path (v1 and v2), read from a fake cgroup tree.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/resources.h"

namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("memory_limit takes the smallest cgroup limit on the process's path, else physical RAM") {
  const fs::path root = fs::temp_directory_path() / "cfr_resources_test";
  fs::remove_all(root);
  constexpr double kRam = 24.0 * (1 << 30);
  SUBCASE("no cgroup files: physical RAM") {
    const auto m = cfr::memory_limit("0::/user.slice\n", root.string(), kRam);
    CHECK(m.bytes == kRam);
    CHECK(m.source == "physical RAM");
  }
  SUBCASE("v2: memory.max of an ancestor, 'max' below it") {
    write(root / "box/memory.max", "4294967296\n");
    write(root / "box/job/memory.max", "max\n");
    const auto m = cfr::memory_limit("0::/box/job\n", root.string(), kRam);
    CHECK(m.bytes == 4294967296.0);
    CHECK(m.source.find("box/memory.max") != std::string::npos);
  }
  SUBCASE("v1: the memory controller's limit; the unlimited value is ignored") {
    write(root / "memory/memory.limit_in_bytes", "9223372036854771712\n");
    write(root / "memory/process_api/x/memory.limit_in_bytes", "2147483648\n");
    const auto m = cfr::memory_limit("9:name=systemd:/\n4:cpu,memory:/process_api/x\n1:cpu:/\n", root.string(), kRam);
    CHECK(m.bytes == 2147483648.0);
    CHECK(m.source.find("cgroup memory limit") == 0);
  }
  SUBCASE("a limit above physical RAM changes nothing") {
    write(root / "memory.max", "68719476736\n");
    CHECK(cfr::memory_limit("0::/\n", root.string(), kRam).bytes == kRam);
  }
  fs::remove_all(root);
}

TEST_CASE("memory_limit and resident_bytes of this process are positive") {
  CHECK(cfr::memory_limit().bytes > 0);
  CHECK(cfr::resident_bytes() > 0);
}
