// Fuzz target: the checkpoint loader's own formats: meta.json (checked against a Kuhn config)
// and memories.bin (three reservoirs). The input is meta.json's text, a NUL byte, then
// memories.bin's bytes. nets.pt is LibTorch's archive format, read by torch::load; its
// corruption is covered by a test of truncated and garbled archives (tests/apps).
#include <sstream>
#include <string>

#include "apps/algorithms/deep_cfr/networks.h"
#include "apps/run/checkpoint_format.h"
#include "engine/games/kuhn.h"
#include "engine/memory/reservoir.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all = cfr::fuzz::as_text(data, size);
  const std::size_t nul = all.find('\0');
  const std::string meta_text(all.substr(0, nul));
  const std::string memories = nul == std::string_view::npos ? std::string() : std::string(all.substr(nul + 1));
  cfr::Config cfg;
  cfg.run.game = "kuhn";
  cfg.network.hidden_size = 64;
  cfg.network.num_layers = 2;
  const auto s = cfr::kuhn::State::initial();
  const int W = s.info_state_size(), A = s.num_distinct_actions();
  // Each part on its own: a mutated meta.json almost never keeps its checksum, which would
  // otherwise shield the memories' reader from the fuzzer.
  const int meta_rc = cfr::fuzz::accept_or_clear_error([&] {
    (void)cfr::parse_checkpoint_meta(meta_text, "fuzz/meta.json", cfr::checkpoint_shape(cfg), cfr::deep_cfr_networks(W, A));
  });
  const int memories_rc = cfr::fuzz::accept_or_clear_error([&] {
    cfr::ReservoirMemory a0(1000, W, A, 1), a1(1000, W, A, 2), st(1000, W, A, 3);
    std::istringstream in(memories);
    cfr::read_checkpoint_memories(in, "fuzz/memories.bin", a0, a1, st);
  });
  return meta_rc | memories_rc;
}
