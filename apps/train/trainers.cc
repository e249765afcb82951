#include "apps/train/trainers.h"

#include "apps/algorithms/deep_cfr/trainer.h"
#include "apps/algorithms/mmd/trainer.h"
#include "apps/run/algorithm_registry.h"

namespace cfr {

void register_builtin_trainers() {
  register_builtin_algorithms({.deep_cfr = make_deep_cfr_trainer, .escher = make_escher_trainer, .mmd = make_mmd_trainer});
}

}  // namespace cfr
