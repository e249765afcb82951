// A traversal rank that sends the learner malformed messages: the distributed tests start it
// beside a real learner, `mpirun -np 1 cfr-run CONFIG ... : -np 1 cfr-dist-bad-rank MODE W T`
// (tests/check_distributed.py malformed), and check that the learner ends the run naming rank 1
// (exit 5), or, for non-finite samples, handles them under optimization.nonfinite_policy as it
// does a local traversal's. W and T are the learner's sample widths (inputs, targets).
//
// It takes every message the learner sends (whatever their sizes, so the learner never waits
// on it), sends its messages at once (MPI buffers them until the learner's phase receives
// them) and waits to be ended by the learner's MPI_Abort; it gives up after 120 s (exit 3).
//
// MODE:
//   truncated  a block one byte short            extra     a block with 3 bytes too many
//   count      a block declaring 2^31-1 samples  negative  a block declaring -1 samples
//   width      a well-formed block of W+1 inputs tag       a well-formed block under tag 7
//   range      a block of traversals 5..2        stats     an end of phase with a NaN time
//   league     an end of phase with a 5-byte record (MMD: not whole league games)
//   nonfinite  a block with a NaN target, then the ends of two phases (one iteration)
//   dies       takes the learner's messages until it has been quiet for a second (waiting for
//              blocks), starts a large block (8 MiB: sent in pieces after its envelope) and kills
//              itself part-way through it: the learner must not wait forever for the rest (run
//              with mpirun told not to end the job itself: --mca orte_abort_on_non_zero_status 0)
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "apps/run/distributed.h"

namespace {

cfr::SampleBlock block(int in_w, int out_w, int samples) {
  cfr::SampleBlock b;
  b.first_traversal = 0;
  b.last_traversal = 0;
  b.advantage.configure(in_w, out_w);
  b.strategy.configure(in_w, out_w);
  for (int i = 0; i < samples; ++i) {
    b.advantage.push(0, 1, 0b11);
    b.strategy.push(0, 1, 0b11);
  }
  return b;
}

// Takes one message the learner sent, whatever its size, if one is waiting; true if it did.
bool take_from_learner() {
  int flag = 0;
  MPI_Status st;
  MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
  if (!flag) return false;
  int bytes = 0;
  MPI_Get_count(&st, MPI_BYTE, &bytes);
  std::vector<char> sink(static_cast<std::size_t>(bytes));
  MPI_Recv(sink.data(), bytes, MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return true;
}

// Offset of the advantage buffer's sample count: traversal range, then its two widths.
constexpr std::size_t kCountAt = 2 * sizeof(std::int32_t) + 2 * sizeof(std::int32_t);

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 4) {
    std::fprintf(stderr, "usage: cfr-dist-bad-rank MODE INPUT_WIDTH TARGET_WIDTH\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const std::string mode = argv[1];
  const int in_w = std::atoi(argv[2]), out_w = std::atoi(argv[3]);
  using cfr::wire::kTagBlock, cfr::wire::kTagEnd;
  std::vector<std::pair<int, std::vector<char>>> out;  // (tag, bytes)
  const auto end = [] { return cfr::wire::phase_end_message(cfr::RunStats{}, {}); };
  std::vector<char> msg = cfr::wire::block_message(block(in_w, out_w, 4), 0);
  if (mode == "truncated") {
    msg.pop_back();
  } else if (mode == "extra") {
    msg.insert(msg.end(), 3, '\0');
  } else if (mode == "count" || mode == "negative") {
    const std::int32_t n = mode == "count" ? INT32_MAX : -1;
    std::memcpy(msg.data() + kCountAt, &n, sizeof n);
  } else if (mode == "width") {
    msg = cfr::wire::block_message(block(in_w + 1, out_w, 4), 0);
  } else if (mode == "range") {
    cfr::SampleBlock b = block(in_w, out_w, 4);
    b.first_traversal = 5;
    b.last_traversal = 2;
    msg = cfr::wire::block_message(b, 0);
  } else if (mode == "nonfinite") {
    cfr::SampleBlock b = block(in_w, out_w, 4);
    b.advantage.target(0)[0] = std::nanf("");
    msg = cfr::wire::block_message(b, 0);
  } else if (mode == "dies") {
    for (auto quiet = std::chrono::steady_clock::now(); std::chrono::steady_clock::now() - quiet < std::chrono::seconds(1);) {
      if (take_from_learner())
        quiet = std::chrono::steady_clock::now();
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const int samples = (8 << 20) / (2 * static_cast<int>(sizeof(float)) * (in_w + out_w + 2));
    msg = cfr::wire::block_message(block(in_w, out_w, samples), 0);
    MPI_Request req;
    MPI_Isend(msg.data(), cfr::mpi_count(msg.size(), "a block (bytes)"), MPI_BYTE, 0, kTagBlock, MPI_COMM_WORLD, &req);
    int done = 0;
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);  // the envelope goes out; the rest waits for the learner
    std::raise(SIGKILL);
  } else if (mode != "tag" && mode != "stats" && mode != "league") {
    std::fprintf(stderr, "cfr-dist-bad-rank: unknown mode '%s'\n", mode.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (mode == "tag") {
    out.emplace_back(7, msg);
  } else if (mode == "stats") {
    cfr::RunStats st;
    st.seconds = std::nan("");
    out.emplace_back(kTagEnd, cfr::wire::phase_end_message(st, {}));
  } else if (mode == "league") {
    const char record[5] = {};
    out.emplace_back(kTagEnd, cfr::wire::phase_end_message(cfr::RunStats{}, record));
  } else {
    out.emplace_back(kTagBlock, msg);
    if (mode == "nonfinite") {  // the rest of iteration 1: the ends of players 0's and 1's phases
      out.emplace_back(kTagEnd, end());
      out.emplace_back(kTagEnd, end());
    }
  }
  std::vector<MPI_Request> sends(out.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    MPI_Isend(out[i].second.data(), cfr::mpi_count(out[i].second.size(), "a message (bytes)"), MPI_BYTE, 0, out[i].first,
              MPI_COMM_WORLD, &sends[i]);
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120)) {
    if (take_from_learner()) continue;
    int done = 0;
    MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::fprintf(stderr, "cfr-dist-bad-rank: not ended by the learner within 120 s\n");
  MPI_Abort(MPI_COMM_WORLD, 3);
  return 3;
}
