#include "apps/run/distributed.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>

#include <fmt/format.h>

#include "engine/core/errors.h"

#if CFR_WITH_MPI
#include <mpi.h>
#endif

namespace cfr {

TraversalShare traversal_share(int n, int rank, int ranks) { return share_of(n, rank - 1, ranks - 1); }

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

Distributed::~Distributed() { MPI_Finalize(); }

// Broadcasts are point-to-point sends from the learner, so that a rank that does not take its
// message within the timeout can be named (a collective would block without saying who).
void Distributed::send_to_all(const void* data, std::size_t bytes) {
  const int k = size_ - 1;
  std::vector<MPI_Request> req(static_cast<std::size_t>(k));
  for (int r = 1; r <= k; ++r)
    check(
        MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, r, kTagControl, MPI_COMM_WORLD, &req[static_cast<std::size_t>(r - 1)]),
        "MPI_Isend");
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    int done = 0;
    check(MPI_Testall(k, req.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
    if (done) return;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_) {
      std::string silent;
      for (int r = 1; r <= k; ++r) {
        int one = 0;
        MPI_Test(&req[static_cast<std::size_t>(r - 1)], &one, MPI_STATUS_IGNORE);
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
  check(MPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, 0, kTagControl, MPI_COMM_WORLD, &req), "MPI_Irecv");
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

void Distributed::send_block(const SampleBlock& block, int first_index) {
  const std::vector<char> msg = wire::block_message(block, first_index);
  check(MPI_Send(msg.data(), static_cast<int>(msg.size()), MPI_BYTE, 0, kTagBlock, MPI_COMM_WORLD), "MPI_Send");
}

void Distributed::send_phase_end(const RunStats& st, std::span<const char> record) {
  const std::vector<char> msg = wire::phase_end_message(st, record);
  check(MPI_Send(msg.data(), static_cast<int>(msg.size()), MPI_BYTE, 0, kTagEnd, MPI_COMM_WORLD), "MPI_Send");
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
    check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st), "MPI_Iprobe");
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
    int bytes = 0;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    msg.resize(static_cast<std::size_t>(bytes));
    check(MPI_Recv(msg.data(), bytes, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    const int r = st.MPI_SOURCE;
    if (ended[static_cast<std::size_t>(r)])  // already the next phase's: kept for it
      carry_[static_cast<std::size_t>(r)].emplace_back(st.MPI_TAG, msg);
    else
      handle(r, st.MPI_TAG, msg);
  }
  return total;
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
Distributed::~Distributed() = default;
std::int64_t Distributed::broadcast(std::int64_t v) { return v; }
void Distributed::broadcast(std::string&) {}
void Distributed::broadcast(std::vector<float>&) {}
void Distributed::send_block(const SampleBlock&, int) {}
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

#endif

}  // namespace cfr
