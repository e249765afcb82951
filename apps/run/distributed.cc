#include "apps/run/distributed.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/core/errors.h"

#if CFR_WITH_MPI
#include <mpi.h>
#endif

namespace cfr {

int mpi_count(std::size_t n, const char* what) {
  constexpr auto kMax = static_cast<std::size_t>(std::numeric_limits<int>::max());
  if (n > kMax)
    throw std::length_error(fmt::format("MPI: {} of {} exceeds {}, the largest count an MPI call takes (an int)", what, n, kMax));
  return static_cast<int>(n);
}

void check_same_as_learner(const std::string& what, int rank, const LoadedFile& mine, const LoadedFile& learners) {
  if (mine.digest == learners.digest) return;
  throw InputError(
      fmt::format("{}: rank {} loaded other contents than rank 0, the learner: rank {} read {} (digest {}), rank 0 read {} "
                  "(digest {}); every rank must load the same file (the same path on every node, unchanged while the run "
                  "starts)",
                  what, rank, rank, mine.path, mine.digest, learners.path, learners.digest));
}

TraversalShare traversal_share(int n, int rank, int ranks) { return share_of(n, rank - 1, ranks - 1); }

NetworkConfig network_for_this_rank(NetworkConfig network, const Distributed* dist) {
  if (dist != nullptr && !dist->learner())
    for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
      if (const char* v = std::getenv(var)) {
        network.device_index = std::atoi(v);
        break;
      }
  return network;
}

bool Distributed::launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"})
    if (const char* v = std::getenv(var); v != nullptr && std::atoi(v) > 1) return true;
  return false;
}

namespace {

// A sample buffer's arrays (after its widths and sample count), appended to a byte message.
// (resize and memcpy: GCC 12 warns falsely, -Wstringop-overflow, on vector<char>::insert here)
void put(std::vector<char>& out, const void* p, std::size_t n) {
  if (n == 0) return;
  const std::size_t at = out.size();
  out.resize(at + n);
  std::memcpy(out.data() + at, p, n);
}
template <class T>
void put_vec(std::vector<char>& out, const std::vector<T>& v) {
  put(out, v.data(), v.size() * sizeof(T));
}

void encode_buffer(std::vector<char>& out, const SampleBuffer& b) {
  const std::int32_t head[3] = {b.input_width, b.target_width, b.size()};
  put(out, head, sizeof head);
  put_vec(out, b.inputs);
  put_vec(out, b.targets);
  put_vec(out, b.masks);
  put_vec(out, b.iterations);
  put_vec(out, b.players);
}

}  // namespace

std::vector<char> wire::block_message(const SampleBlock& block, int first_index) {
  std::vector<char> msg;
  const std::int32_t range[2] = {block.first_traversal + first_index, block.last_traversal + first_index};
  put(msg, range, sizeof range);
  encode_buffer(msg, block.advantage);
  encode_buffer(msg, block.strategy);
  return msg;
}

std::vector<char> wire::phase_end_message(const RunStats& st, std::span<const char> record) {
  std::vector<char> msg;
  const std::int64_t head[5] = {st.nodes, st.traversals, st.batch.requests, st.batch.forwards, st.cutoffs};
  const double secs[3] = {st.seconds, st.batch.evaluate_seconds, st.batch.wait_seconds};
  const std::int64_t hist = static_cast<std::int64_t>(st.batch.histogram.size());
  put(msg, head, sizeof head);
  put(msg, secs, sizeof secs);
  put(msg, &hist, sizeof hist);
  put_vec(msg, st.batch.histogram);
  const std::int64_t record_bytes = static_cast<std::int64_t>(record.size());
  put(msg, &record_bytes, sizeof record_bytes);
  put(msg, record.data(), record.size());
  return msg;
}

#if CFR_WITH_MPI

namespace {

using wire::kTagBlock, wire::kTagControl, wire::kTagEnd;

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw std::runtime_error(fmt::format("MPI: {} failed: {}", what, std::string(msg, static_cast<std::size_t>(len))));
  }
}

// The size of a probed message: MPI_Get_count gives MPI_UNDEFINED, not a size, for one of more
// than INT_MAX bytes (the senders' mpi_count refuses to send such a message).
int received_bytes(MPI_Status& st, const std::string& what) {
  int bytes = 0;
  check(MPI_Get_count(&st, MPI_BYTE, &bytes), "MPI_Get_count");
  if (bytes == MPI_UNDEFINED || bytes < 0)
    throw std::length_error(fmt::format("MPI: {} of more than {} bytes, the largest count an MPI call takes (an int)", what,
                                        std::numeric_limits<int>::max()));
  return bytes;
}

// A message from another process is checked before it is used: a count larger than what is
// left of the message is refused before anything is allocated for it.
struct MalformedMessage : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct Reader {
  const char* p;
  const char* end;
  std::size_t left() const noexcept { return static_cast<std::size_t>(end - p); }
  void get(void* dst, std::size_t n) {
    if (left() < n) throw MalformedMessage(fmt::format("truncated message ({} bytes wanted, {} left)", n, left()));
    std::memcpy(dst, p, n);
    p += n;
  }
  template <class T>
  void get_vec(std::vector<T>& v, std::size_t count) {
    if (count > left() / sizeof(T))
      throw MalformedMessage(
          fmt::format("truncated message ({} values of {} bytes wanted, {} bytes left)", count, sizeof(T), left()));
    v.resize(count);
    get(v.data(), count * sizeof(T));
  }
  template <class T>
  T count(const char* what) {
    T n{};
    get(&n, sizeof n);
    if (n < 0) throw MalformedMessage(fmt::format("negative {} ({})", what, n));
    return n;
  }
  void finished() const {
    if (p != end) throw MalformedMessage(fmt::format("{} unexpected bytes at the end of a message", left()));
  }
};

void decode_buffer(Reader& r, SampleBuffer& b, int in_w, int out_w) {
  std::int32_t widths[2];
  r.get(widths, sizeof widths);
  if (widths[0] != in_w || widths[1] != out_w)
    throw MalformedMessage(
        fmt::format("samples of {} input and {} target values, the learner's have {} and {}", widths[0], widths[1], in_w, out_w));
  const auto n = r.count<std::int32_t>("sample count");
  b.configure(in_w, out_w);
  const auto k = static_cast<std::size_t>(n);
  r.get_vec(b.inputs, k * static_cast<std::size_t>(in_w));
  r.get_vec(b.targets, k * static_cast<std::size_t>(out_w));
  r.get_vec(b.masks, k);
  r.get_vec(b.iterations, k);
  r.get_vec(b.players, k);
}

}  // namespace

std::unique_ptr<Distributed> Distributed::init(int* argc, char*** argv) {
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw InputError("this MPI library does not support MPI_THREAD_SERIALIZED (cfr-run sends from its sample thread)");
  }
  std::unique_ptr<Distributed> d(new Distributed());
  MPI_Comm_rank(MPI_COMM_WORLD, &d->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &d->size_);
  return d;
}

// Broadcasts are point-to-point sends from the learner, so that a rank that does not take its
// message within the timeout can be named (a collective would block without saying who).
void Distributed::send_to_all(const void* data, std::size_t bytes) { send_to(1, size_ - 1, kTagControl, data, bytes); }

void Distributed::send_to(int first, int last, int tag, const void* data, std::size_t bytes) {
  const int k = last - first + 1;
  if (k <= 0) return;
  std::vector<MPI_Request> req(static_cast<std::size_t>(k));
  for (int r = first; r <= last; ++r)
    check(MPI_Isend(data, mpi_count(bytes, "MPI_Isend of a message to the ranks (bytes)"), MPI_BYTE, r, tag, MPI_COMM_WORLD,
                    &req[static_cast<std::size_t>(r - first)]),
          "MPI_Isend");
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    int done = 0;
    check(MPI_Testall(k, req.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
    if (done) return;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_) {
      std::string silent;
      for (int r = first; r <= last; ++r) {
        int one = 0;
        MPI_Test(&req[static_cast<std::size_t>(r - first)], &one, MPI_STATUS_IGNORE);
        if (!one) silent += fmt::format("{}{}", silent.empty() ? "" : ", ", r);
      }
      abort(fmt::format("rank {} took nothing from the learner for {:.0f} s (distributed.timeout_seconds); ending the run, "
                        "resume it from the last checkpoint with --resume",
                        silent, timeout_),
            5);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// A rank waits for the learner (training, evaluation, checkpoints: seconds) by polling with
// sleeps: OpenMPI's blocking MPI_Recv spins a core the whole time, which the learner then lacks
// when ranks share its host.
void Distributed::receive_from_learner(void* data, std::size_t bytes) {
  MPI_Request req;
  check(MPI_Irecv(data, mpi_count(bytes, "MPI_Irecv of a message from the learner (bytes)"), MPI_BYTE, 0, kTagControl,
                  MPI_COMM_WORLD, &req),
        "MPI_Irecv");
  for (;;) {
    int done = 0;
    check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

std::int64_t Distributed::broadcast(std::int64_t value) {
  if (learner())
    send_to_all(&value, sizeof value);
  else
    receive_from_learner(&value, sizeof value);
  return value;
}

void Distributed::broadcast(std::string& text) {
  const auto n = broadcast(static_cast<std::int64_t>(text.size()));
  text.resize(static_cast<std::size_t>(n));
  if (learner())
    send_to_all(text.data(), text.size());
  else
    receive_from_learner(text.data(), text.size());
}

void Distributed::broadcast(std::vector<float>& values) {
  const auto n = broadcast(static_cast<std::int64_t>(values.size()));
  values.resize(static_cast<std::size_t>(n));
  if (learner())
    send_to_all(values.data(), values.size() * sizeof(float));
  else
    receive_from_learner(values.data(), values.size() * sizeof(float));
}

void Distributed::broadcast(std::vector<double>& values) {
  const auto n = broadcast(static_cast<std::int64_t>(values.size()));
  values.resize(static_cast<std::size_t>(n));
  if (learner())
    send_to_all(values.data(), values.size() * sizeof(double));
  else
    receive_from_learner(values.data(), values.size() * sizeof(double));
}

void Distributed::require_same_as_learner(const std::string& what, const LoadedFile& mine) {
  LoadedFile learners = mine;
  broadcast(learners.path);
  broadcast(learners.digest);
  check_same_as_learner(what, rank_, mine, learners);
}

void Distributed::send_block(const SampleBlock& block, int first_index) {
  const std::vector<char> msg = wire::block_message(block, first_index);
  check(MPI_Send(msg.data(), mpi_count(msg.size(), "MPI_Send of a sample block (bytes)"), MPI_BYTE, 0, kTagBlock, MPI_COMM_WORLD),
        "MPI_Send");
}

void Distributed::send_phase_end(const RunStats& st, std::span<const char> record) {
  const std::vector<char> msg = wire::phase_end_message(st, record);
  check(MPI_Send(msg.data(), mpi_count(msg.size(), "MPI_Send of an end-of-phase message (bytes)"), MPI_BYTE, 0, kTagEnd,
                 MPI_COMM_WORLD),
        "MPI_Send");
}

RunStats Distributed::receive_phase(int in_w, int out_w, const std::function<void(const SampleBlock&)>& consume,
                                    double timeout_seconds, const std::string& what, std::vector<std::vector<char>>* records) {
  using Clock = std::chrono::steady_clock;
  const int k = size_ - 1;
  std::vector<std::deque<SampleBlock>> early(static_cast<std::size_t>(size_));
  std::vector<char> ended(static_cast<std::size_t>(size_), 0);
  std::vector<Clock::time_point> heard(static_cast<std::size_t>(size_), Clock::now());
  RunStats total;
  if (records != nullptr) records->assign(static_cast<std::size_t>(k), {});
  int current = 1;  // the rank whose blocks are inserted now
  std::vector<char> msg;
  auto advance = [&] {
    while (current <= k && ended[static_cast<std::size_t>(current)]) {
      ++current;
      if (current <= k) {
        auto& q = early[static_cast<std::size_t>(current)];
        for (const auto& b : q) consume(b);
        q.clear();
      }
    }
  };
  // Handles one message of rank r (a block, or the end of r's share of this phase).
  auto handle_unchecked = [&](int r, int tag, const std::vector<char>& bytes) {
    heard[static_cast<std::size_t>(r)] = Clock::now();
    Reader rd{bytes.data(), bytes.data() + bytes.size()};
    if (tag != kTagBlock && tag != kTagEnd) throw MalformedMessage(fmt::format("a message with tag {}", tag));
    if (tag == kTagBlock) {
      SampleBlock b;
      std::int32_t range[2];
      rd.get(range, sizeof range);
      b.first_traversal = range[0];
      b.last_traversal = range[1];
      decode_buffer(rd, b.advantage, in_w, out_w);
      decode_buffer(rd, b.strategy, in_w, out_w);
      rd.finished();
      if (b.first_traversal < 0 || b.last_traversal < b.first_traversal)
        throw MalformedMessage(fmt::format("a block of traversals {}..{}", b.first_traversal, b.last_traversal));
      if (r == current)
        consume(b);
      else
        early[static_cast<std::size_t>(r)].push_back(std::move(b));
    } else {
      RunStats s;
      std::int64_t head[5];
      double secs[3];
      rd.get(head, sizeof head);
      rd.get(secs, sizeof secs);
      for (const std::int64_t v : head)
        if (v < 0) throw MalformedMessage(fmt::format("a negative count ({}) in its statistics", v));
      for (const double v : secs)
        if (!std::isfinite(v) || v < 0) throw MalformedMessage(fmt::format("a time of {} s in its statistics", v));
      rd.get_vec(s.batch.histogram, static_cast<std::size_t>(rd.count<std::int64_t>("histogram size")));
      for (const std::int64_t v : s.batch.histogram)
        if (v < 0) throw MalformedMessage(fmt::format("a negative count ({}) in its batch histogram", v));
      std::vector<char> record;
      rd.get_vec(record, static_cast<std::size_t>(rd.count<std::int64_t>("record size")));
      rd.finished();
      if (records != nullptr) (*records)[static_cast<std::size_t>(r - 1)] = std::move(record);
      s.nodes = head[0];
      s.traversals = head[1];
      s.batch.requests = head[2];
      s.batch.forwards = head[3];
      s.cutoffs = head[4];
      s.seconds = secs[0];
      s.batch.evaluate_seconds = secs[1];
      s.batch.wait_seconds = secs[2];
      total.nodes += s.nodes;
      total.traversals += s.traversals;
      total.cutoffs += s.cutoffs;
      total.batch.merge(s.batch);
      ended[static_cast<std::size_t>(r)] = 1;
      advance();
    }
  };
  // A message that does not decode ends the run naming its rank (it is not the learner's bug).
  auto handle = [&](int r, int tag, const std::vector<char>& bytes) {
    try {
      handle_unchecked(r, tag, bytes);
    } catch (const MalformedMessage& e) {
      abort(fmt::format("rank {} sent a malformed {} message during {}: {}; ending the run", r,
                        tag == kTagBlock ? "sample block"
                        : tag == kTagEnd ? "end-of-phase"
                                         : "unexpected",
                        what, e.what()),
            5);
    }
  };
  // Messages a rank sent after its end of the previous phase belong to this one.
  carry_.resize(static_cast<std::size_t>(size_));
  for (int r = 1; r <= k; ++r) {
    auto& q = carry_[static_cast<std::size_t>(r)];
    while (!q.empty() && !ended[static_cast<std::size_t>(r)]) {
      const auto m = std::move(q.front());
      q.pop_front();
      handle(r, m.first, m.second);
    }
  }
  while (current <= k) {
    int flag = 0;
    MPI_Status st;
    MPI_Message matched;
    check(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &matched, &st), "MPI_Improbe");
    if (!flag) {
      const auto now = Clock::now();
      for (int r = 1; r <= k; ++r)
        if (!ended[static_cast<std::size_t>(r)] &&
            std::chrono::duration<double>(now - heard[static_cast<std::size_t>(r)]).count() > timeout_seconds)
          abort(fmt::format("rank {} sent nothing for {:.0f} s during {} (distributed.timeout_seconds); ending the run, "
                            "resume it from the last checkpoint with --resume",
                            r, timeout_seconds, what),
                5);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    const int r = st.MPI_SOURCE;
    const int bytes = received_bytes(st, fmt::format("a message from rank {} during {}", r, what));
    msg.resize(static_cast<std::size_t>(bytes));
    // Polled, not MPI_Recv: a large message arrives in pieces after its envelope, and a rank that
    // dies between them would leave a blocking receive waiting forever, with no rank named.
    MPI_Request req;
    check(MPI_Imrecv(msg.data(), bytes, MPI_BYTE, &matched, &req), "MPI_Imrecv");
    for (const auto t0 = Clock::now();;) {
      int done = 0;
      check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) break;
      if (std::chrono::duration<double>(Clock::now() - t0).count() > timeout_seconds)
        abort(fmt::format("rank {} sent nothing for {:.0f} s part-way through a message of {} bytes during {} "
                          "(distributed.timeout_seconds); ending the run, resume it from the last checkpoint with --resume",
                          r, timeout_seconds, bytes, what),
              5);
      std::this_thread::yield();
    }
    if (ended[static_cast<std::size_t>(r)])  // already the next phase's: kept for it
      carry_[static_cast<std::size_t>(r)].emplace_back(st.MPI_TAG, msg);
    else
      handle(r, st.MPI_TAG, msg);
  }
  return total;
}

// --- data-parallel learners -----------------------------------------------------------------

namespace {

using wire::kTagTrain;
constexpr int kTagJoin = 5;                // a learner rank joins a gradient sum
constexpr int kTagPing = 6, kTagPong = 7;  // rank 0 asks, at a timeout, which learner ranks still answer

/// What a learner rank needs to train network `net` as the learner does: the training settings
/// (the learner's stop flag and weight average are the learner's own) and the training state.
std::vector<char> training_message(int net, int iteration, const TrainConfig& c, const std::string& state) {
  std::vector<char> msg;
  const auto& pg = c.policy_gradient;
  const std::int32_t ints[6] = {
      net, iteration, c.updates, c.batch_size, c.linear_weighting ? 1 : 0, pg.normalize_advantage ? 1 : 0};
  const double reals[8] = {c.learning_rate, c.weight_decay,   c.grad_clip,  c.target_scale,
                           pg.clip,         pg.magnet_weight, pg.bc_weight, pg.entropy_weight};
  const std::int64_t n = static_cast<std::int64_t>(state.size());
  put(msg, ints, sizeof ints);
  put(msg, reals, sizeof reals);
  put(msg, &n, sizeof n);
  put(msg, state.data(), state.size());
  return msg;
}

}  // namespace

struct Distributed::Learners final : DataParallel {
  Distributed* dist = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;
  int n = 1, me = 0;
  std::string what;  // the training under way, for messages ("network 'strategy' of iteration 3")
  int step = 0;
  // The learner's shards in flight: synchronous sends, so that a rank that has not taken its rows
  // is known (and named) when a gradient sum does not complete.
  std::vector<std::vector<char>> out;
  std::vector<MPI_Request> sent;
  std::vector<char> in;

  int learners() const noexcept override { return n; }
  int index() const noexcept override { return me; }

  // Waits for `req`: spins first (a step's partners are usually moments away), then sleeps, so
  // that a waiting rank leaves its core to the others on a shared host.
  template <class OnTimeout>
  void wait(MPI_Request& req, OnTimeout&& on_timeout) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int spins = 0;; ++spins) {
      int done = 0;
      check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return;
      if (spins < 2000) {
        std::this_thread::yield();
        continue;
      }
      if (me == 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > dist->timeout_) on_timeout();
      if (me != 0) answer_ping();
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  // A learner rank, waiting: rank 0 asks whether it is alive (it timed out on a gradient sum).
  void answer_ping() {
    int flag = 0;
    MPI_Iprobe(0, kTagPing, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    if (!flag) return;
    char token = 0;
    MPI_Recv(&token, 1, MPI_BYTE, 0, kTagPing, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&token, 1, MPI_BYTE, 0, kTagPong, MPI_COMM_WORLD);
  }
  // Rank 0, at a timeout: the learner ranks that do not answer within a few seconds. A collective
  // does not say who is missing, and a rank stopped inside the previous sum keeps the others
  // waiting there too; those others still answer from their waits.
  std::vector<int> unanswered() {
    const auto k = static_cast<std::size_t>(n - 1);
    std::vector<char> token(k, 0), pong(k, 0);
    std::vector<MPI_Request> ping(k), back(k);
    for (int r = 1; r < n; ++r) {
      const auto i = static_cast<std::size_t>(r - 1);
      MPI_Isend(&token[i], 1, MPI_BYTE, r, kTagPing, MPI_COMM_WORLD, &ping[i]);
      MPI_Irecv(&pong[i], 1, MPI_BYTE, r, kTagPong, MPI_COMM_WORLD, &back[i]);
    }
    const auto t0 = std::chrono::steady_clock::now();
    const double patience = std::clamp(dist->timeout_, 1.0, 10.0);
    std::vector<char> answered(k, 0);
    for (;;) {
      bool all = true;
      for (std::size_t i = 0; i < k; ++i) {
        int done = answered[i];
        if (!done) MPI_Test(&back[i], &done, MPI_STATUS_IGNORE);
        answered[i] = static_cast<char>(done);
        all = all && done;
      }
      if (all || std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > patience) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::vector<int> mute;
    for (std::size_t i = 0; i < k; ++i)
      if (!answered[i]) mute.push_back(static_cast<int>(i) + 1);
    return mute;
  }
  // The learner: the shards of the previous step were taken (a rank that has not is named).
  void finish_sends() {
    for (std::size_t i = 0; i < sent.size(); ++i)
      if (sent[i] != MPI_REQUEST_NULL)
        wait(sent[i], [&] {
          dist->abort(
              fmt::format("learner rank {} took no rows from the learner for {:.0f} s during the training of {} "
                          "(distributed.timeout_seconds); ending the run, resume it from the last checkpoint with --resume",
                          i + 1, dist->timeout_, what),
              5);
        });
  }

  int exchange_batch(int rows, int in_w, int t_w, std::span<float> inputs, std::span<float> targets, std::span<float> legal,
                     std::span<float> weights) override {
    const auto iw = static_cast<std::size_t>(in_w), tw = static_cast<std::size_t>(t_w);
    if (me == 0) {
      finish_sends();
      out.resize(static_cast<std::size_t>(n - 1));
      sent.assign(static_cast<std::size_t>(n - 1), MPI_REQUEST_NULL);
      for (int k = 1; k < n; ++k) {
        auto& msg = out[static_cast<std::size_t>(k - 1)];
        msg.clear();
        const std::int32_t count = rows < 0 ? -1 : static_cast<std::int32_t>(rows * (k + 1) / n - rows * k / n);
        put(msg, &count, sizeof count);
        if (count > 0) {
          const auto first = static_cast<std::size_t>(rows * k / n), c = static_cast<std::size_t>(count);
          put(msg, inputs.data() + first * iw, c * iw * sizeof(float));
          put(msg, targets.data() + first * tw, c * tw * sizeof(float));
          put(msg, legal.data() + first * tw, c * tw * sizeof(float));
          put(msg, weights.data() + first, c * sizeof(float));
        }
        check(MPI_Issend(msg.data(), mpi_count(msg.size(), "MPI_Issend of a learner rank's batch shard (bytes)"), MPI_BYTE, k,
                         kTagTrain, MPI_COMM_WORLD, &sent[static_cast<std::size_t>(k - 1)]),
              "MPI_Issend");
      }
      ++step;
      if (rows < 0) {
        finish_sends();
        return -1;
      }
      return rows / n;
    }
    MPI_Status st;
    for (int spins = 0;; ++spins) {
      int flag = 0;
      check(MPI_Iprobe(0, kTagTrain, MPI_COMM_WORLD, &flag, &st), "MPI_Iprobe");
      if (flag) break;
      if (spins < 2000) {
        std::this_thread::yield();
      } else {
        answer_ping();
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    const int bytes = received_bytes(st, "a batch shard from the learner");
    in.resize(static_cast<std::size_t>(bytes));
    check(MPI_Recv(in.data(), bytes, MPI_BYTE, 0, kTagTrain, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    Reader rd{in.data(), in.data() + in.size()};
    std::int32_t count = 0;
    rd.get(&count, sizeof count);
    if (count < 0) return -1;
    const auto c = static_cast<std::size_t>(count);
    if (c * iw > inputs.size() || c * tw > targets.size() || c > weights.size())
      throw std::runtime_error(fmt::format("the learner sent {} rows, more than a batch holds", count));
    rd.get(inputs.data(), c * iw * sizeof(float));
    rd.get(targets.data(), c * tw * sizeof(float));
    rd.get(legal.data(), c * tw * sizeof(float));
    rd.get(weights.data(), c * sizeof(float));
    rd.finished();
    return count;
  }

  // A collective does not say who is missing: each learner rank tells the learner, point to point,
  // that it joins the sum (an empty message), so that one that does not is named.
  void sum(std::span<float> values) override {
    if (me != 0) check(MPI_Send(nullptr, 0, MPI_BYTE, 0, kTagJoin, MPI_COMM_WORLD), "MPI_Send");
    MPI_Request req;
    check(MPI_Iallreduce(MPI_IN_PLACE, values.data(), mpi_count(values.size(), "MPI_Iallreduce of a gradient sum (floats)"),
                         MPI_FLOAT, MPI_SUM, comm, &req),
          "MPI_Iallreduce");
    wait(req, [&] {
      std::vector<int> silent;
      for (int k = 1; k < n; ++k) {
        int joined = 0;
        MPI_Iprobe(k, kTagJoin, MPI_COMM_WORLD, &joined, MPI_STATUS_IGNORE);
        if (!joined) silent.push_back(k);
      }
      // Those that did not join, or, when the one missing keeps the others inside the previous
      // sum (they joined it), those that do not answer.
      const std::vector<int> mute = unanswered();
      if (!mute.empty()) silent = mute;
      const std::string who = silent.empty()       ? fmt::format("learner ranks 1..{} answer but", n - 1)
                              : silent.size() == 1 ? fmt::format("learner rank {} is silent:", silent[0])
                                                   : fmt::format("learner ranks {} are silent:", fmt::join(silent, ", "));
      dist->abort(fmt::format("{} step {}'s gradient sum of {} did not complete in {:.0f} s (distributed.timeout_seconds); "
                              "ending the run, resume it from the last checkpoint with --resume",
                              who, step, what, dist->timeout_),
                  5);
    });
    if (me == 0)  // every learner rank joined: their notes have been sent
      for (int k = 1; k < n; ++k)
        check(MPI_Recv(nullptr, 0, MPI_BYTE, k, kTagJoin, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  }
};

Distributed::~Distributed() {
  if (learners_state_ && learners_state_->comm != MPI_COMM_NULL) MPI_Comm_free(&learners_state_->comm);
  MPI_Finalize();
}

void Distributed::set_learners(int n) {
  if (n > size_)
    throw InputError(fmt::format("distributed.learners = {}: this job has {} processes (mpirun -np {} or more)", n, size_, n));
  learners_ = std::max(1, n);
  if (learners_ < 2 || !trains()) return;
  auto L = std::make_unique<Learners>();
  L->dist = this;
  L->n = learners_;
  L->me = rank_;
  MPI_Group world, group;
  check(MPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group");
  int range[1][3] = {{0, learners_ - 1, 1}};
  check(MPI_Group_range_incl(world, 1, range, &group), "MPI_Group_range_incl");
  check(MPI_Comm_create_group(MPI_COMM_WORLD, group, kTagTrain, &L->comm), "MPI_Comm_create_group");
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  learners_state_ = std::move(L);
}

TrainStats Distributed::train(NetworkSet& nets, int net, BatchSource& memory, int iteration, TrainConfig cfg, Rng& rng) {
  if (learners_ < 2) return nets.train(net, memory, iteration, cfg, rng);
  auto& L = *learners_state_;
  L.what = fmt::format("network '{}' of iteration {}", nets.spec(net).name, iteration);
  L.step = 0;
  const std::vector<char> msg = training_message(net, iteration, cfg, nets.training_state(net));
  send_to(1, learners_ - 1, kTagTrain, msg.data(), msg.size());
  cfg.data_parallel = &L;
  return nets.train(net, memory, iteration, cfg, rng);
}

int Distributed::serve_training(NetworkSet& nets) {
  if (!trains() || learners_ < 2 || learner()) return 0;
  auto& L = *learners_state_;
  int trained = 0;
  std::vector<char> msg;
  for (;;) {
    int flag = 0;
    MPI_Status st;
    check(MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st), "MPI_Iprobe");
    if (!flag) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    if (st.MPI_TAG != kTagTrain) return trained;  // the learner's next broadcast: training is over
    const int bytes = received_bytes(st, "a training message from the learner");
    msg.resize(static_cast<std::size_t>(bytes));
    check(MPI_Recv(msg.data(), bytes, MPI_BYTE, 0, kTagTrain, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    Reader rd{msg.data(), msg.data() + msg.size()};
    std::int32_t ints[6];
    double reals[8];
    rd.get(ints, sizeof ints);
    rd.get(reals, sizeof reals);
    std::string state;
    const auto n = rd.count<std::int64_t>("training state size");
    if (static_cast<std::uint64_t>(n) > rd.left()) throw std::runtime_error("the learner sent a truncated training message");
    state.assign(rd.p, static_cast<std::size_t>(n));
    rd.p += n;
    rd.finished();
    const int net = ints[0];
    if (net < 0 || net >= nets.size())
      throw std::runtime_error(fmt::format("the learner trains network {} of {}", net, nets.size()));
    TrainConfig cfg;
    cfg.updates = ints[2];
    cfg.batch_size = ints[3];
    cfg.linear_weighting = ints[4] != 0;
    cfg.policy_gradient.normalize_advantage = ints[5] != 0;
    cfg.learning_rate = reals[0];
    cfg.weight_decay = reals[1];
    cfg.grad_clip = reals[2];
    cfg.target_scale = reals[3];
    cfg.policy_gradient.clip = reals[4];
    cfg.policy_gradient.magnet_weight = reals[5];
    cfg.policy_gradient.bc_weight = reals[6];
    cfg.policy_gradient.entropy_weight = reals[7];
    cfg.data_parallel = &L;
    nets.set_training_state(net, state);
    nets.train_shard(net, ints[1], cfg);
    ++trained;
  }
}

void Distributed::abort(const std::string& message, int code) {
  std::fprintf(stderr, "cfr-run (rank %d): %s\n", rank_, message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

#else  // no MPI in this build

std::unique_ptr<Distributed> Distributed::init(int*, char***) {
  throw InputError("this cfr-run was built without MPI (install libopenmpi-dev and reconfigure) ");
}
struct Distributed::Learners {};
Distributed::~Distributed() = default;
std::int64_t Distributed::broadcast(std::int64_t v) { return v; }
void Distributed::broadcast(std::string&) {}
void Distributed::broadcast(std::vector<float>&) {}
void Distributed::send_block(const SampleBlock&, int) {}
void Distributed::require_same_as_learner(const std::string&, const LoadedFile&) {}
void Distributed::send_to_all(const void*, std::size_t) {}
void Distributed::receive_from_learner(void*, std::size_t) {}
void Distributed::broadcast(std::vector<double>&) {}
void Distributed::send_phase_end(const RunStats&, std::span<const char>) {}
RunStats Distributed::receive_phase(int, int, const std::function<void(const SampleBlock&)>&, double, const std::string&,
                                    std::vector<std::vector<char>>*) {
  return {};
}
void Distributed::abort(const std::string& message, int code) {
  std::fprintf(stderr, "cfr-run: %s\n", message.c_str());
  std::_Exit(code);
}
void Distributed::send_to(int, int, int, const void*, std::size_t) {}
void Distributed::set_learners(int n) {
  if (n > 1) throw InputError(fmt::format("distributed.learners = {}: this cfr-run was built without MPI", n));
}
TrainStats Distributed::train(NetworkSet& nets, int net, BatchSource& memory, int iteration, TrainConfig cfg, Rng& rng) {
  return nets.train(net, memory, iteration, cfg, rng);
}
int Distributed::serve_training(NetworkSet&) { return 0; }

#endif

}  // namespace cfr
