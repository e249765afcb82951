// The checkpoint format without LibTorch: meta.json of another game, shape or version is refused
// with a message saying what differs; corrupt memories are refused without allocating what a
// corrupt header claims; a round trip restores every sample.
#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/algorithms/deep_cfr/networks.h"
#include "apps/run/checkpoint_format.h"
#include "engine/core/errors.h"
#include "engine/memory/reservoir.h"

using namespace cfr;

namespace {

Config kuhn_config() {
  Config c;
  c.run.game = "kuhn";
  c.network.hidden_size = 64;
  c.network.num_layers = 2;
  return c;
}
const NetworkSpecs kNets = deep_cfr_networks(7, 2);

std::map<std::string, FileChecksum> two_files() {
  return {{"nets.pt", {.bytes = 3, .digest = checksum_of("net")}}, {"config.toml", {.bytes = 4, .digest = checksum_of("conf")}}};
}

std::string meta_with(const std::string& key, const nlohmann::json& value) {
  auto j =
      nlohmann::json::parse(checkpoint_meta_json(checkpoint_shape(kuhn_config()), false, 5, kNets, Rng(1).state(), two_files()));
  if (value.is_discarded())
    j.erase(key);
  else
    j[key] = value;
  return j.dump();
}

std::string refusal(const std::string& text) {
  try {
    (void)parse_checkpoint_meta(text, "ck/meta.json", checkpoint_shape(kuhn_config()), kNets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("checkpoint meta.json round-trips and refuses another game, shape, widths or version") {
  const Config c = kuhn_config();
  const auto st = Rng(9).state();
  const CheckpointMeta m =
      parse_checkpoint_meta(checkpoint_meta_json(checkpoint_shape(c), c.checkpoint.include_memories, 12, kNets, st, two_files()),
                            "m", checkpoint_shape(c), kNets);
  CHECK(m.iteration == 12);
  CHECK(m.train_rng.w[2] == st.w[2]);
  CHECK(m.memories == c.checkpoint.include_memories);
  REQUIRE(m.files.size() == 2);
  CHECK(m.files.at("nets.pt").bytes == 3);
  CHECK(m.files.at("config.toml").digest == checksum_of("conf"));

  CHECK(refusal(meta_with("game", "leduc")).find("checkpoint of game \"leduc\", the config trains kuhn") != std::string::npos);
  CHECK(refusal(meta_with("version", 1)).find("format version 1; this cfr-run reads version 2") != std::string::npos);
  const std::string widths = refusal(meta_with(
      "networks",
      nlohmann::json::parse(
          R"([{"name":"advantage0","input_width":30,"output_width":2},{"name":"advantage1","input_width":30,"output_width":2},)"
          R"({"name":"strategy","input_width":30,"output_width":2}])")));
  CHECK(widths.find("checkpoint networks [{\"input_width\":30") != std::string::npos);
  CHECK(widths.find("this config needs [{\"input_width\":7,\"name\":\"advantage0\",\"output_width\":2}") != std::string::npos);
  // A set of another size (an algorithm with a fourth network) is another set.
  CHECK(refusal(meta_with("networks", nlohmann::json::array())).find("checkpoint networks []") != std::string::npos);
  const std::string shape = refusal(meta_with("network", {{"hidden_size", 128}, {"num_layers", 2}, {"activation", "relu"}}));
  CHECK(shape.find("differs from the config's 2×64 relu") != std::string::npos);
  CHECK(shape.find("128") != std::string::npos);
  CHECK(refusal(meta_with("format", "something")).find("not a cfr-run checkpoint") != std::string::npos);
  CHECK(refusal(meta_with("train_rng", nlohmann::json::value_t::discarded)).find("missing field 'train_rng'") !=
        std::string::npos);
}

TEST_CASE("checkpoint meta.json proves itself: a changed value, a file list that climbs out or lacks a file are refused") {
  // A valid value changed by hand (the iteration) is caught by meta.json's own checksum.
  CHECK(refusal(meta_with("iteration", 6)).find("checksum mismatch: the file was changed after it was written") !=
        std::string::npos);
  CHECK(refusal(meta_with("checksum", nlohmann::json::value_t::discarded)).find("missing field 'checksum'") != std::string::npos);
  const nlohmann::json ok_file = {{"bytes", 1}, {"xxh3_128", checksum_of("x")}};
  nlohmann::json climbing = {{"nets.pt", ok_file}, {"config.toml", ok_file}, {"../../etc/passwd", ok_file}};
  CHECK(refusal(meta_with("files", climbing)).find("names '../../etc/passwd', not a file of the checkpoint directory") !=
        std::string::npos);
  CHECK(refusal(meta_with("files", {{"config.toml", ok_file}})).find("does not list nets.pt") != std::string::npos);
  CHECK(refusal(meta_with("files", {{"nets.pt", ok_file}, {"config.toml", ok_file}, {"memories.bin", ok_file}}))
            .find("field 'memories' is false but 'files' lists memories.bin") != std::string::npos);
  CHECK(refusal(meta_with("files", {{"nets.pt", {{"bytes", 1}}}, {"config.toml", ok_file}})).find("files.nets.pt") !=
        std::string::npos);
}

TEST_CASE("checkpoint meta.json with wrong types is an InputError, never another exception") {
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{{"train_rng", "abc"},
                                                                                      {"train_rng", {1, 2, 3}},
                                                                                      {"train_rng", {1, 2, 3, -4}},
                                                                                      {"train_rng", {0, 0, 0, 0}},
                                                                                      {"iteration", "7"},
                                                                                      {"iteration", -3},
                                                                                      {"iteration", 1e12},
                                                                                      {"memories", 1},
                                                                                      {"network", 5}}) {
    CAPTURE(key);
    CHECK(!refusal(meta_with(key, value)).empty());
  }
  CHECK(refusal("[1, 2]").find("not a JSON object") != std::string::npos);
  CHECK(refusal("{\"format\":").find("invalid JSON") != std::string::npos);
}

TEST_CASE("checkpoint memories round-trip, and corrupt or truncated ones are refused and leave memories empty") {
  ReservoirMemory a(8, 2, 2, 1), b(8, 2, 2, 2), s(8, 2, 2, 3);
  const float in[2] = {1, 2}, tg[2] = {3, 4};
  for (int i = 0; i < 20; ++i) {
    a.insert(in, tg, 3, i);
    s.insert(in, tg, 1, i);
  }
  std::ostringstream out;
  a.save(out);
  b.save(out);
  s.save(out);
  const std::string bytes = out.str();

  ReservoirMemory a2(8, 2, 2, 7), b2(8, 2, 2, 8), s2(8, 2, 2, 9);
  {
    std::istringstream is(bytes);
    read_checkpoint_memories(is, "m.bin", a2, b2, s2);
    CHECK(a2.size() == 8);
    CHECK(a2.seen() == 20);
    CHECK(b2.size() == 0);
    CHECK(s2.iteration(3) == s.iteration(3));
  }
  auto refuse = [&](std::string data, const std::string& expect) {
    ReservoirMemory x(8, 2, 2, 7), y(8, 2, 2, 8), z(8, 2, 2, 9);
    std::istringstream is(data);
    try {
      read_checkpoint_memories(is, "m.bin", x, y, z);
      FAIL("accepted corrupt memories: ", expect);
    } catch (const InputError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(expect) != std::string::npos, e.what());
    }
    CHECK(x.size() + y.size() + z.size() == 0);
  };
  refuse(bytes.substr(0, bytes.size() - 5), "truncated");
  refuse(bytes + "x", "trailing bytes");
  std::string huge = bytes;  // size field (4th header word) of memory 0 claims 2^40 samples
  const std::int64_t big = std::int64_t{1} << 40;
  huge.replace(3 * sizeof(std::int64_t), sizeof big, reinterpret_cast<const char*>(&big), sizeof big);
  refuse(huge, "corrupt reservoir header");
  ReservoirMemory small(4, 2, 2, 1), y(8, 2, 2, 8), z(8, 2, 2, 9);
  std::istringstream is(bytes);
  CHECK_THROWS_WITH_AS(read_checkpoint_memories(is, "m.bin", small, y, z),
                       doctest::Contains("holds 8 samples, more than the configured capacity 4"), InputError);
  ReservoirMemory wide(8, 3, 2, 1);
  std::istringstream is2(bytes);
  CHECK_THROWS_WITH_AS(read_checkpoint_memories(is2, "m.bin", wide, y, z),
                       doctest::Contains("memory of samples 2→2, this run needs 3→2"), InputError);
}
