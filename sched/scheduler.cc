#include "sched/scheduler.h"

#include <fmt/format.h>

#include "engine/core/errors.h"

namespace cfr {

std::unique_ptr<TraversalContext> ContextPool::acquire() {
  std::lock_guard lock(m_);
  if (free_.empty()) return std::make_unique<TraversalContext>();
  auto c = std::move(free_.back());
  free_.pop_back();
  return c;
}

void ContextPool::release(std::unique_ptr<TraversalContext> c) {
  if (!c) return;
  std::lock_guard lock(m_);
  free_.push_back(std::move(c));
}

std::size_t ContextPool::size() const {
  std::lock_guard lock(m_);
  return free_.size();
}

std::unique_ptr<TraversalContext> OrderedDelivery::acquire() { return pool_.acquire(); }

std::uint64_t FlushPolicy::choose(const Batcher& b) {
  waited_.resize(static_cast<std::size_t>(b.num_nets()), 0);
  int best = -1;
  for (int n = 0; n < b.num_nets(); ++n)
    if (b.pending(n) > 0 && (best < 0 || b.pending(n) > b.pending(best))) best = n;
  std::uint64_t nets = std::uint64_t{1} << best;
  for (int n = 0; n < b.num_nets(); ++n) {
    auto& w = waited_[static_cast<std::size_t>(n)];
    if (n == best || b.pending(n) == 0) {
      w = 0;
    } else if (++w >= starve_) {
      nets |= std::uint64_t{1} << n;
      w = 0;
    }
  }
  return nets;
}

void OrderedDelivery::finished(std::unique_ptr<TraversalContext> ctx) {
  std::lock_guard lock(m_);
  const int index = ctx->index;
  parked_.emplace(index, std::move(ctx));
  for (auto it = parked_.find(next_); it != parked_.end(); it = parked_.find(next_)) {
    auto c = std::move(it->second);
    parked_.erase(it);
    ++next_;
    sink_.consume(*c);  // serialised by m_
    pool_.release(std::move(c));
  }
}

int OrderedDelivery::delivered() const {
  std::lock_guard lock(m_);
  return next_;
}

Task<void> start_traversal(const TraversalJob& job, TraversalContext& ctx, int index, QueryPort* port, int slot,
                           int worker) {
  if (ctx.advantage.input_width != job.input_width || ctx.advantage.target_width != job.output_width) {
    ctx.advantage.configure(job.input_width, job.output_width);
    ctx.strategy.configure(job.input_width, job.output_width);
  }
  ctx.reset(job.seed, job.iteration, job.traverser, job.first_index + index);
  ctx.index = index;  // the delivery order is local to the job
  ctx.port = port;
  ctx.slot = slot;
  ctx.worker = worker;
  return job.start(ctx);
}

namespace {

struct Entry {
  std::string description;
  SchedulerFactory factory;
};

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, Entry>& registry() {
  static std::map<std::string, Entry> r;
  return r;
}

}  // namespace

void register_scheduler(const std::string& name, const std::string& description, SchedulerFactory factory) {
  std::lock_guard lock(registry_mutex());
  registry()[name] = Entry{description, std::move(factory)};
}

std::vector<std::string> scheduler_names() {
  std::lock_guard lock(registry_mutex());
  std::vector<std::string> v;
  for (const auto& [k, e] : registry()) v.push_back(k);
  return v;
}

std::string scheduler_description(const std::string& name) {
  std::lock_guard lock(registry_mutex());
  const auto it = registry().find(name);
  return it == registry().end() ? std::string() : it->second.description;
}

std::unique_ptr<Scheduler> make_scheduler(const std::string& name, const SchedulerConfig& config) {
  SchedulerFactory f;
  {
    std::lock_guard lock(registry_mutex());
    const auto it = registry().find(name);
    if (it != registry().end()) f = it->second.factory;
  }
  if (!f) {
    throw InputError(fmt::format("unknown scheduler '{}'; registered schedulers: {}", name, join_names(scheduler_names())));
  }
  if (config.window < 1) throw InputError(fmt::format("scheduler window = {} must be ≥ 1", config.window));
  if (config.max_batch < 1) throw InputError(fmt::format("scheduler max_batch = {} must be ≥ 1", config.max_batch));
  if (config.threads < 1) throw InputError(fmt::format("scheduler threads = {} must be ≥ 1", config.threads));
  if (config.deadline_us < 0) throw InputError(fmt::format("scheduler deadline_us = {} must be ≥ 0", config.deadline_us));
  return f(config);
}

}  // namespace cfr
