// The MPI layer's MPI-free checks (apps/run/distributed.h): a count an MPI call takes past
// INT_MAX is refused naming what it counts (it was cast to int, wrapping), and a file a rank
// loaded itself is compared with the learner's by digest, not by path.
#include <doctest/doctest.h>

#include <climits>
#include <cstddef>
#include <stdexcept>

#include "apps/run/distributed.h"
#include "engine/core/errors.h"

using namespace cfr;

TEST_CASE("mpi_count passes counts up to INT_MAX and refuses larger ones naming what and the count") {
  CHECK(mpi_count(0, "a message (bytes)") == 0);
  CHECK(mpi_count(12345, "a message (bytes)") == 12345);
  CHECK(mpi_count(static_cast<std::size_t>(INT_MAX), "a message (bytes)") == INT_MAX);
  // 2^31 bytes: cast to int it was -2147483648; 2^32 + 5 was 5 (a short message, silently).
  const std::size_t two_gib = std::size_t{1} << 31;
  CHECK_THROWS_WITH_AS(mpi_count(two_gib, "MPI_Send of a sample block (bytes)"),
                       "MPI: MPI_Send of a sample block (bytes) of 2147483648 exceeds 2147483647, the largest count an MPI "
                       "call takes (an int)",
                       std::length_error);
  CHECK_THROWS_WITH_AS(mpi_count((std::size_t{1} << 32) + 5, "MPI_Iallreduce of a gradient sum (floats)"),
                       doctest::Contains("MPI_Iallreduce of a gradient sum (floats) of 4294967301 exceeds 2147483647"),
                       std::length_error);
}

TEST_CASE("check_same_as_learner compares digests and names the file and the rank when they differ") {
  const LoadedFile learners{.path = "/node0/league/checkpoints/iter-000001", .digest = "aaaa"};
  // The same contents at another path (another node's mount): accepted.
  CHECK_NOTHROW(check_same_as_learner("mmd.opponents: 'checkpoint:league'", 2,
                                      {.path = "/node1/league/checkpoints/iter-000001", .digest = "aaaa"}, learners));
  CHECK_THROWS_WITH_AS(check_same_as_learner("mmd.opponents: 'checkpoint:league'", 2,
                                             {.path = "/node0/league/checkpoints/iter-000002", .digest = "bbbb"}, learners),
                       doctest::Contains("mmd.opponents: 'checkpoint:league': rank 2 loaded other contents than rank 0, the "
                                         "learner: rank 2 read /node0/league/checkpoints/iter-000002 (digest bbbb), rank 0 "
                                         "read /node0/league/checkpoints/iter-000001 (digest aaaa)"),
                       InputError);
}
