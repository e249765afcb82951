#include "sched/interleaved.h"
#include "sched/pooled.h"
#include "sched/scheduler.h"

namespace cfr {

void register_waves_scheduler();  // sched/waves.cc

void register_builtin_schedulers() {
  register_scheduler("recursive", "one request at a time (batch 1): the reference's baseline",
                     [](const SchedulerConfig& c) {
                       SchedulerConfig one = c;
                       one.window = 1;
                       return std::make_unique<InterleavedScheduler>(one, "recursive");
                     });
  register_scheduler("interleaved", "one thread, `window` live traversals refilled as they finish",
                     [](const SchedulerConfig& c) { return std::make_unique<InterleavedScheduler>(c, "interleaved"); });
  register_scheduler("pooled", "`threads` coroutine threads feeding one inference thread that owns the device",
                     [](const SchedulerConfig& c) { return std::make_unique<PooledScheduler>(c); });
  register_waves_scheduler();
}

}  // namespace cfr
