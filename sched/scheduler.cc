#include "sched/scheduler.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>

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

void validate_job(const TraversalJob& job) {
  if (job.num_traversals < 0 || job.first_index < 0)
    throw InputError(fmt::format("traversal job: num_traversals = {} and first_index = {} must be at least 0", job.num_traversals,
                                 job.first_index));
  const std::int64_t end = std::int64_t{job.first_index} + job.num_traversals;
  if (end > std::numeric_limits<int>::max())
    throw InputError(fmt::format("traversal job: first_index + num_traversals = {} is beyond 2^31 - 1 (32-bit indices)", end));
}

Task<void> start_traversal(const TraversalJob& job, TraversalContext& ctx, int index, QueryPort* port, int slot, int worker) {
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

int SchedulerOptions::get(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) throw std::logic_error(fmt::format("scheduler option '{}' was not declared", name));
  return it->second;
}

std::string SchedulerOptions::describe() const {
  std::string s;
  for (const auto& [k, v] : values_) s += fmt::format("{}{}={}", s.empty() ? "" : ", ", k, v);
  return s;
}

namespace {

struct Entry {
  std::string description;
  std::vector<SchedulerOption> options;
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

void register_scheduler(const std::string& name, const std::string& description, std::vector<SchedulerOption> options,
                        SchedulerFactory factory) {
  std::lock_guard lock(registry_mutex());
  registry()[name] = Entry{description, std::move(options), std::move(factory)};
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

std::vector<SchedulerOption> scheduler_options(const std::string& name) {
  std::lock_guard lock(registry_mutex());
  const auto it = registry().find(name);
  return it == registry().end() ? std::vector<SchedulerOption>{} : it->second.options;
}

std::unique_ptr<Scheduler> make_scheduler(const std::string& name, const SchedulerOptions& options) {
  Entry entry;
  {
    std::lock_guard lock(registry_mutex());
    const auto it = registry().find(name);
    if (it != registry().end()) entry = it->second;
  }
  if (!entry.factory) {
    throw InputError(fmt::format("unknown scheduler '{}'; registered schedulers: {}", name, join_names(scheduler_names())));
  }
  SchedulerOptions resolved;
  for (const auto& o : entry.options) resolved.set(o.name, o.default_value);
  for (const auto& option : options.values()) {
    const std::string& key = option.first;  // not a structured binding: clang 14 cannot capture one
    const int value = option.second;
    const auto it =
        std::find_if(entry.options.begin(), entry.options.end(), [&](const SchedulerOption& o) { return o.name == key; });
    if (it == entry.options.end()) {
      std::vector<std::string> known;
      for (const auto& o : entry.options) known.push_back(o.name);
      throw InputError(fmt::format("scheduler '{}' has no option '{}'; its options: {}", name, key,
                                   known.empty() ? std::string("(none)") : join_names(known)));
    }
    if (value < it->min || value > it->max)
      throw InputError(fmt::format("scheduler '{}': {} = {} is out of range [{}, {}]", name, key, value, it->min, it->max));
    resolved.set(key, value);
  }
  return entry.factory(resolved);
}

}  // namespace cfr
