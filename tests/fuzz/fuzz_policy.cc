// Fuzz target: the policy-file reader (cfr-exploit's input). A file that parses is checked
// against its game's tree (every information set defined, rows valid distributions) and, when
// accepted, its exact exploitability is computed.
#include "engine/games/games.h"
#include "engine/tabular/best_response.h"
#include "engine/tabular/policy.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cfr::fuzz::accept_or_clear_error([&] {
    const cfr::PolicyFile f = cfr::parse_policy_file(cfr::fuzz::as_text(data, size), "fuzz.json");
    const cfr::GameTree tree = cfr::build_game_tree(f.game);
    const cfr::TabularPolicy policy = cfr::policy_from_rows(tree, f, "fuzz.json");
    (void)cfr::exploitability(policy);
  });
}
