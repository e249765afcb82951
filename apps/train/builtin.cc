// The built-in training algorithms: the one list of them (each registers itself from its folder).
#include <mutex>

#include "apps/run/algorithm_registry.h"

namespace cfr {

void register_deep_cfr_algorithm(TrainerFactory make_trainer);  // apps/algorithms/deep_cfr/algorithm.cc
void register_escher_algorithm(TrainerFactory make_trainer);    // apps/algorithms/escher/algorithm.cc
void register_mmd_algorithm(TrainerFactory make_trainer);       // apps/algorithms/mmd/algorithm.cc

namespace {

void register_all(const BuiltinTrainers& t) {
  register_deep_cfr_algorithm(t.deep_cfr);
  register_escher_algorithm(t.escher);
  register_mmd_algorithm(t.mmd);
}

}  // namespace

void register_builtin_algorithms(const BuiltinTrainers& trainers) {
  static std::once_flag described;
  if (trainers.deep_cfr == nullptr && trainers.escher == nullptr && trainers.mmd == nullptr) {
    std::call_once(described, [] { register_all({}); });  // never undoes a registration with trainers
    return;
  }
  std::call_once(described, [] {});
  register_all(trainers);
}

}  // namespace cfr
