#pragma once
// The built-in algorithms with their trainers (LibTorch): what the programs that train call
// before reading the registry's factories (cfr-run's driver, the tests).
namespace cfr {

/// register_builtin_algorithms with Deep CFR's, ESCHER's and MMD's trainer factories.
void register_builtin_trainers();

}  // namespace cfr
