#pragma once
// Distributed training over MPI (OpenMPI's mpirun, hostfiles, Slurm): rank 0 is the learner
// (memories, training, evaluation, checkpoints, metrics); every other rank traverses (Deep CFR,
// ESCHER) or plays rollouts (MMD).
//
// Per iteration the learner broadcasts a command, the iteration number and the published
// weights of the algorithm's network set (and whatever else the trainer's rollouts read). Each
// phase's traversals [0, n) are split into contiguous shares, rank r ≥ 1 of k traversal ranks
// taking [n(r−1)/k, n·r/k). Ranks stream their sample blocks to the learner as they traverse;
// the learner inserts rank 1's blocks, then rank 2's, ... (buffering early arrivals), so the
// memories receive exactly the samples, in exactly the order, of a single-process run: same
// seed, same digests. A phase's end message may carry the rank's own record of the phase (MMD:
// its league games), handed to the learner in rank order. A rank that sends nothing for
// distributed.timeout_seconds ends the run with a message naming it (MPI_Abort); one that dies
// makes mpirun end the job and name it. Every message a rank sends is checked before use
// (sizes, counts): a malformed one ends the run naming the rank. The header is MPI-free.
//
// Data-parallel learners (distributed.learners = N ≥ 2): ranks 0..N-1 train every network
// together. Rank 0 still owns the memories and draws every batch as one process does; before a
// network's training it sends ranks 1..N-1 the network's training state (weights and optimiser)
// and training settings, then each step their shards of the batch (rows [b·k/N, b·(k+1)/N)); every
// learner computes its shard's gradient and MPI_Allreduce sums them, weighted by each shard's
// share of the loss's denominator, before the step (nets/networks.h DataParallel). Ranks 1..N-1
// traverse as well.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nets/networks.h"
#include "sched/sample_pipe.h"
#include "sched/scheduler.h"

namespace cfr {

/// The messages a rank sends the learner, as bytes (what send_block and send_phase_end send, with
/// their tags): exposed so that a test can play a rank that sends malformed ones
/// (tests/apps/dist_bad_rank.cc). A block carries each buffer's widths; the learner refuses a
/// block of widths other than its own.
namespace wire {
inline constexpr int kTagBlock = 1, kTagEnd = 2, kTagControl = 3, kTagTrain = 4;
std::vector<char> block_message(const SampleBlock& block, int first_index);
std::vector<char> phase_end_message(const RunStats& stats, std::span<const char> record);
}  // namespace wire

/// `n` (bytes or elements) as the int count an MPI call takes: std::length_error naming `what` and
/// n when n > INT_MAX (cast unchecked, a message of 2^31 bytes or more wrapped to a wrong count).
int mpi_count(std::size_t n, const char* what);

/// What a rank read itself from a file every rank reads (an mmd.opponents checkpoint): where it
/// read it and the digest of what it loaded.
struct LoadedFile {
  std::string path;
  std::string digest;
};
/// InputError naming `what`, `rank` and both files when rank `rank`'s `mine` holds other contents
/// than the learner's (their digests differ); the paths may differ (another node's mount).
void check_same_as_learner(const std::string& what, int rank, const LoadedFile& mine, const LoadedFile& learners);

/// Contiguous share of traversal indices of traversal rank `rank` (1..ranks-1): [first, first+count).
TraversalShare traversal_share(int num_traversals, int rank, int ranks);

class Distributed;
/// The network settings of this process: with run.device = "cuda" each rank of a host takes its
/// own GPU, device_index = its local rank (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID or
/// SLURM_LOCALID; nets/ takes it modulo the host's GPUs); the learner (local rank 0 on its host)
/// and a process outside mpirun (`dist` null) keep `network`'s.
NetworkConfig network_for_this_rank(NetworkConfig network, const Distributed* dist);

class Distributed {
 public:
  /// True when this process was started by an MPI launcher with more than one process.
  static bool launched_by_mpi();
  /// MPI_Init (serialized threads). Throws InputError when this build has no MPI.
  static std::unique_ptr<Distributed> init(int* argc, char*** argv);
  ~Distributed();  // MPI_Finalize
  Distributed(const Distributed&) = delete;
  Distributed& operator=(const Distributed&) = delete;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  bool learner() const noexcept { return rank_ == 0; }

  /// The learner's bound on waiting for a rank (distributed.timeout_seconds).
  void set_timeout(double seconds) noexcept { timeout_ = seconds; }

  /// Root's value to every rank (the learner names a rank that does not take it in time).
  std::int64_t broadcast(std::int64_t value);
  void broadcast(std::string& text);
  void broadcast(std::vector<float>& values);
  void broadcast(std::vector<double>& values);

  /// A file every rank loads itself (`what`, e.g. "mmd.opponents: 'checkpoint:RUN'"): the learner's
  /// path and digest go to every rank, which compares its own (check_same_as_learner): a rank that
  /// loaded other contents throws InputError naming the file and itself (the run ends).
  void require_same_as_learner(const std::string& what, const LoadedFile& mine);

  /// Traversal rank → learner: one block; `first_index` turns its traversal indices global.
  void send_block(const SampleBlock& block, int first_index);
  /// Traversal rank → learner: the phase is over; its statistics and `record`, bytes of the
  /// trainer's own (empty: none).
  void send_phase_end(const RunStats& stats, std::span<const char> record = {});
  /// Learner: receives one phase from every traversal rank, calling consume() on the blocks in
  /// rank order; returns the ranks' merged statistics. With `records`, (*records)[r − 1] is what
  /// rank r sent with its end (send_phase_end's `record`). Ends the process group (MPI_Abort)
  /// with a message naming the rank when one sends nothing for timeout_seconds, or a message
  /// that does not decode (truncated, a negative count, samples of another width, an unknown
  /// tag). Non-finite sample values are not refused here: consume() drops and counts them, as it
  /// does a local traversal's (optimization.nonfinite_policy).
  RunStats receive_phase(int input_width, int output_width, const std::function<void(const SampleBlock&)>& consume,
                         double timeout_seconds, const std::string& what, std::vector<std::vector<char>>* records = nullptr);

  /// Ends every process of the job (after printing `message` on this one).
  [[noreturn]] void abort(const std::string& message, int code);

  /// distributed.learners: ranks 0..n-1 train together (every rank calls this once, before any
  /// training; those ranks form the learners' communicator). InputError when n exceeds the job's
  /// processes.
  void set_learners(int n);
  int learners() const noexcept { return learners_; }
  /// Whether this rank trains: the learner, or a data-parallel learner rank 1..N-1.
  bool trains() const noexcept { return rank_ < learners_; }
  /// The learner: network `net`'s training, as nets.train(net, memory, iteration, cfg, rng); with
  /// N ≥ 2 learners ranks 1..N-1 first receive the network's training state and `cfg`, then train
  /// their shards of every batch (serve_training). A learner rank that takes nothing for
  /// timeout_seconds, or does not join a step's gradient sum, ends the run naming it (exit 5).
  TrainStats train(NetworkSet& nets, int net, BatchSource& memory, int iteration, TrainConfig cfg, Rng& rng);
  /// Learner ranks 1..N-1: the shards of every network the learner trains (train()), until the
  /// learner's next broadcast is waiting (it stays unread). Returns how many networks it trained.
  int serve_training(NetworkSet& nets);

  struct Learners;  // the learners' communicator and what a step waits for (distributed.cc)

 private:
  Distributed() = default;
  void send_to_all(const void* data, std::size_t bytes);
  /// Point-to-point sends to ranks [first, last] with `tag`, waited for with the timeout (a rank
  /// that takes nothing is named).
  void send_to(int first, int last, int tag, const void* data, std::size_t bytes);
  void receive_from_learner(void* data, std::size_t bytes);
  int rank_ = 0, size_ = 1, learners_ = 1;
  double timeout_ = 300;
  std::unique_ptr<Learners> learners_state_;
  // Messages that arrived after their rank's end of a phase: the next phase's, in order.
  std::vector<std::deque<std::pair<int, std::vector<char>>>> carry_;
};

}  // namespace cfr
