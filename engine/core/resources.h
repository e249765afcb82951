#pragma once
// What this process may use of the machine: the memory limit that applies to it (physical RAM or
// a smaller cgroup limit, as in a container) and its resident memory.
#include <cstdint>
#include <string>
#include <string_view>

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

/// Whether the first processor's flags in /proc/cpuinfo include `flag` (e.g. "avx512f",
/// "amx_bf16"); false where there is no such file.
bool cpu_has(std::string_view flag);

/// The OpenBLAS kernel set made for this CPU's vector units: "SkylakeX" with AVX-512, "Haswell"
/// with AVX2, "" otherwise (what select_blas_kernels sets when OpenBLAS fell back to Prescott).
std::string blas_core_for_cpu();

/// The OpenBLAS kernel set this process runs ("SkylakeX", "Haswell", "Prescott", ...), from
/// openblas_get_corename; "" when the process has no OpenBLAS (LibTorch off, or another BLAS).
std::string blas_core();

/// OpenBLAS 0.3.21 (Debian 12's) does not know some recent Intel CPUs (this project's machine:
/// family 6, model 207) and falls back to its generic Prescott kernels there: fp32 matrix
/// products 3–4× slower (docs/benchmarks.md, "BLAS kernels"). It picks its kernels once, when it
/// loads, from OPENBLAS_CORETYPE if that is set. Call first thing in main(), before any thread:
/// when this process's OpenBLAS runs Prescott kernels on a CPU with AVX-512 (then SkylakeX) or
/// AVX2 (then Haswell) and OPENBLAS_CORETYPE is unset, it sets the variable and re-executes the
/// program with the same arguments (execv of /proc/self/exe: same PID, open descriptors kept).
/// Otherwise, or when the re-execution fails, it returns and nothing changes. A user's
/// OPENBLAS_CORETYPE is honoured as given (OPENBLAS_CORETYPE=Prescott keeps the fallback).
void select_blas_kernels(char** argv);

}  // namespace cfr
