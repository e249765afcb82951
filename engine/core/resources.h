#pragma once
// What this process may use of the machine: the memory limit that applies to it (physical RAM or
// a smaller cgroup limit, as in a container) and its resident memory.
#include <cstdint>
#include <string>

namespace cfr {

struct MemoryLimit {
  double bytes = 0;    // 0 = unknown
  std::string source;  // "physical RAM" or "cgroup memory limit (<file>)"
};

/// The smaller of physical RAM and every cgroup memory limit on this process's cgroup path (v1
/// memory.limit_in_bytes, v2 memory.max, the cgroup and each of its ancestors).
MemoryLimit memory_limit();
/// The same from the text of /proc/self/cgroup, the cgroup file-system root (normally
/// /sys/fs/cgroup) and the physical RAM: testable with a fake tree.
MemoryLimit memory_limit(const std::string& proc_self_cgroup, const std::string& cgroup_root, double physical_bytes);

/// Resident set size of this process (bytes), from /proc/self/statm; 0 where unavailable.
std::int64_t resident_bytes();

}  // namespace cfr
