#include "sched/interleaved.h"
#include "sched/pooled.h"
#include "sched/scheduler.h"

namespace cfr {

void register_waves_scheduler();  // sched/waves.cc

void register_builtin_schedulers() {
  const SchedulerOption window{.name = "window", .default_value = 64, .min = 1, .help = "live traversals"};
  const SchedulerOption max_batch{.name = "max_batch", .default_value = 128, .min = 1, .help = "rows per forward"};
  register_scheduler("recursive", "one request at a time (batch 1): the reference's baseline", {},
                     [](const SchedulerOptions&) { return std::make_unique<InterleavedScheduler>(1, 1, "recursive"); });
  register_scheduler("interleaved", "one thread, `window` live traversals refilled as they finish", {window, max_batch},
                     [](const SchedulerOptions& o) {
                       return std::make_unique<InterleavedScheduler>(o.get("window"), o.get("max_batch"), "interleaved");
                     });
  register_scheduler("pooled", "`threads` coroutine threads feeding one inference thread that owns the device",
                     {{.name = "threads", .default_value = 1, .min = 1, .max = kMaxPooledThreads, .help = "coroutine threads"},
                      {.name = "window", .default_value = 64, .min = 1, .help = "live traversals, all threads together"},
                      max_batch,
                      {.name = "deadline_us",
                       .default_value = 0,
                       .min = 0,
                       .max = kMaxPooledDeadlineUs,
                       .help = "flush a batch once its oldest request waited this long (0 = never)"}},
                     [](const SchedulerOptions& o) {
                       return std::make_unique<PooledScheduler>(PooledOptions{.threads = o.get("threads"),
                                                                              .window = o.get("window"),
                                                                              .max_batch = o.get("max_batch"),
                                                                              .deadline_us = o.get("deadline_us")});
                     });
  register_waves_scheduler();
}

}  // namespace cfr
