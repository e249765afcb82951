#include "apps/run/config.h"

#include <algorithm>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "engine/core/errors.h"
#include "engine/games/bots.h"
#include "engine/games/games.h"
#include "sched/sample_pipe.h"
#include "sched/scheduler.h"

namespace cfr {

namespace {

const toml::node& node_of(const void* p) { return *static_cast<const toml::node*>(p); }

/// A TOML basic string holding `s`, written by toml++ (`"`, `\` and control characters escaped;
/// other UTF-8 as it is): config.toml must parse back to the same value whatever a name or path
/// holds.
std::string toml_string(const std::string& s) {
  std::ostringstream out;
  out << toml::toml_formatter{toml::value<std::string>{s}, toml::format_flags::allow_unicode_strings};
  return out.str();
}

template <class Int>
ConfigField int_field(std::string section, std::string key, Int& ref, std::int64_t lo, std::int64_t hi, std::string help) {
  const std::string name = section + "." + key;
  return {section, key, std::move(help),
          [&ref, lo, hi, name](const void* n, const std::string& where) {
            // The type first: toml++ converts a float to an integer with undefined behaviour
            // when it is out of range (found by fuzz_config).
            if (!node_of(n).is_integer()) throw InputError(fmt::format("{}: {} must be an integer", where, name));
            const auto v = node_of(n).value<std::int64_t>();
            if (!v) throw InputError(fmt::format("{}: {} must be an integer", where, name));
            if (*v < lo || *v > hi)
              throw InputError(fmt::format("{}: {} = {} is out of range [{}, {}]", where, name, *v, lo, hi));
            ref = static_cast<Int>(*v);
          },
          [&ref] { return std::to_string(ref); }};
}

ConfigField real_field(std::string section, std::string key, double& ref, double lo, double hi, std::string help) {
  const std::string name = section + "." + key;
  return {section, key, std::move(help),
          [&ref, lo, hi, name](const void* n, const std::string& where) {
            const auto v = node_of(n).value<double>();
            if (!v || !(node_of(n).is_floating_point() || node_of(n).is_integer()))
              throw InputError(fmt::format("{}: {} must be a number", where, name));
            if (!(*v >= lo && *v <= hi))
              throw InputError(fmt::format("{}: {} = {} is out of range [{}, {}]", where, name, *v, lo, hi));
            ref = *v;
          },
          // A TOML float whatever its value (1.0, not 1): --print-config says the key's type.
          [&ref] {
            std::string v = fmt::format("{}", ref);
            if (v.find_first_of(".en") == std::string::npos) v += ".0";
            return v;
          }};
}

ConfigField bool_field(std::string section, std::string key, bool& ref, std::string help) {
  const std::string name = section + "." + key;
  return {section, key, std::move(help),
          [&ref, name](const void* n, const std::string& where) {
            if (!node_of(n).is_boolean()) throw InputError(fmt::format("{}: {} must be true or false", where, name));
            ref = *node_of(n).value<bool>();
          },
          [&ref] { return ref ? std::string("true") : std::string("false"); }};
}

ConfigField choice_field(std::string section, std::string key, std::string& ref, std::vector<std::string> choices,
                         std::string help) {
  const std::string name = section + "." + key;
  return {section, key, std::move(help),
          [&ref, choices, name](const void* n, const std::string& where) {
            if (!node_of(n).is_string()) throw InputError(fmt::format("{}: {} must be a string", where, name));
            const auto v = *node_of(n).value<std::string>();
            if (!choices.empty() && std::find(choices.begin(), choices.end(), v) == choices.end())
              throw InputError(fmt::format("{}: {} = '{}'; valid: {}", where, name, v, join_names(choices)));
            ref = v;
          },
          [&ref] { return toml_string(ref); }};
}

ConfigField list_field(std::string section, std::string key, std::vector<std::string>& ref, std::string help) {
  const std::string name = section + "." + key;
  return {section, key, std::move(help),
          [&ref, name](const void* n, const std::string& where) {
            const auto* arr = node_of(n).as_array();
            if (arr == nullptr) throw InputError(fmt::format("{}: {} must be a list of strings", where, name));
            std::vector<std::string> v;
            for (const auto& e : *arr) {
              if (!e.is_string()) throw InputError(fmt::format("{}: {} must be a list of strings", where, name));
              v.push_back(*e.value<std::string>());
            }
            ref = std::move(v);
          },
          [&ref] {
            std::string s = "[";
            for (std::size_t i = 0; i < ref.size(); ++i) s += (i ? ", " : "") + toml_string(ref[i]);
            return s + "]";
          }};
}

}  // namespace

std::vector<ConfigField> fields(Config& c) {
  constexpr std::int64_t kBig = std::int64_t{1} << 40;  // seeds and memory capacities
  constexpr int kMaxRows = 1 << 24;                     // a training batch, a queue block
  constexpr int kMaxHiddenLayers = 64;
  auto& r = c.run;
  auto& t = c.traversal;
  auto& o = c.optimization;
  std::vector<ConfigField> f = {
      choice_field("run", "experiment_name", r.experiment_name, {}, "name of the run directory"),
      choice_field("run", "game", r.game, game_names(), "game to train on (a registered game, engine/games/games.h)"),
      int_field("run", "seed", r.seed, 0, kBig,
                "master seed: traversal i of (iteration, player) uses derive_seed(seed, iteration, player, i)"),
      int_field("run", "max_iterations", r.max_iterations, 1, 100'000'000, "Deep CFR iterations"),
      real_field("run", "max_minutes", r.max_minutes, 0, 1e9, "stop after this many minutes (0 = no limit)"),
      choice_field("run", "device", r.device, {"cpu", "cuda"}, "where networks run and train"),
      int_field("run", "torch_threads", r.torch_threads, 1, 256, "LibTorch intra-op threads"),
      int_field("rules", "n_colors", c.rules.n_colors, 1, lc::kMaxColors, "Lost Cities expeditions"),
      int_field("rules", "n_ranks", c.rules.n_ranks, 1, lc::kMaxRanks, "numeric cards per color"),
      int_field("rules", "min_rank", c.rules.min_rank, 1, 1000, "face of rank 1"),
      int_field("rules", "n_handshakes", c.rules.n_handshakes, 0, lc::kMaxHandshakes, "wagers per color"),
      int_field("rules", "hand_size", c.rules.hand_size, 1, lc::kMaxHandSize, "cards per hand"),
      int_field("rules", "expedition_penalty", c.rules.expedition_penalty, -1000, 1000, "added to every started expedition"),
      int_field("rules", "bonus_threshold", c.rules.bonus_threshold, 1, 1000, "expedition length for the bonus"),
      int_field("rules", "bonus_amount", c.rules.bonus_amount, -1000, 1000, "the bonus"),
      bool_field("encoding", "derived_playability", c.encoding.derived_playability, "add the 78 derived floats"),
      bool_field("encoding", "slot_aware_playability", c.encoding.slot_aware_playability, "add the 48 slot-aware floats"),
      bool_field("encoding", "opponent_known_cards", c.encoding.opponent_known_cards,
                 "add the 50 counts of the opponent's cards known from piles (off: the reference)"),
      bool_field("encoding", "slot_cards", c.encoding.slot_cards,
                 "add 152 floats: each hand slot's color and rank one-hot and both expeditions of its color"),
      int_field("network", "hidden_size", c.network.hidden_size, 1, 65536, "MLP width"),
      int_field("network", "num_layers", c.network.num_layers, 1, kMaxHiddenLayers, "hidden layers"),
      choice_field("network", "activation", c.network.activation, {"relu", "tanh", "gelu"}, "hidden activation"),
      int_field("network", "invariant_chunk", c.network.invariant_chunk, 0, 4096,
                "0 = forward whole batches (fast); N = forward in chunks of exactly N rows so outputs do not depend on batching "
                "(identical samples across schedulers and processes; 8 with OpenBLAS)"),
      choice_field("network", "precision", c.network.precision, {"fp32", "bf16", "auto"},
                   "fp32; bf16 = forwards and training steps in bfloat16 (float32 weights, optimiser state and checkpoints; "
                   "fast where the CPU has AVX-512 BF16 or AMX); auto = bf16 where the CPU or GPU has it, else fp32 (the run's "
                   "log says which)"),
      int_field("traversal", "traversals_per_player", t.traversals_per_player, 1, 100'000'000,
                "traversals per player per iteration"),
      choice_field("traversal", "algorithm", t.algorithm, {"outcome_sampling", "external_sampling"},
                   "traversal kind (external sampling is for small games)"),
      int_field("traversal", "max_nodes_per_traversal", t.max_nodes_per_traversal, 0, 1'000'000'000, "node cap (0 = none)"),
      real_field("traversal", "regret_matching_epsilon", t.regret_matching_epsilon, 0, 1e9,
                 "regret sums at or below use the fallback"),
      real_field("traversal", "outcome_sampling_epsilon", t.outcome_sampling_epsilon, 0, 1, "exploration at traverser nodes"),
      real_field("traversal", "outcome_sampling_value_clip", t.outcome_sampling_value_clip, 0, 1e12, "clip of v/q (0 = none)"),
      real_field("traversal", "probability_floor", t.probability_floor, 1e-12, 1, "floor of q(a) in v/q"),
      choice_field("traversal", "outcome_unsampled_regret", t.outcome_unsampled_regret, {"zero", "negative_node_value"},
                   "target of unsampled legal actions"),
      choice_field("traversal", "cutoff_value_mode", t.cutoff_value_mode, {"score_diff", "zero", "bot_rollout"},
                   "value at the node cap: the current score difference, 0, or the score difference after traversal.opponent_bot "
                   "plays both sides to the end (lost_cities)"),
      choice_field("traversal", "opponent_policy", t.opponent_policy, {"average_strategy", "network", "bot"},
                   "how the opponent acts"),
      choice_field("traversal", "update_order", t.update_order, {"simultaneous", "alternating"},
                   "simultaneous: both phases use the iteration's starting nets (the reference); alternating: advantage net 0 "
                   "trains and is published before player 1's phase (Deep CFR's Algorithm 1)"),
      choice_field("traversal", "opponent_bot", t.opponent_bot, {}, "bot for opponent_policy = bot (lost_cities)"),
      choice_field("traversal", "scheduler", t.scheduler, {},
                   "registered scheduler (recursive, interleaved, pooled, waves, ...)"),
      int_field("traversal", "parallel_shares", t.parallel_shares, 1, 256,
                "split a traversal phase during which no network trains (player 0's; both with update_order = alternating) into "
                "this many contiguous shares, each on its own thread, scheduler and network replica"),
      choice_field("regret_matching", "all_negative_fallback", c.all_negative_fallback, {"argmax", "uniform"},
                   "policy when no regret is positive"),
      choice_field("training_weighting", "mode", c.weighting_mode, {"lcfr", "uniform"}, "sample weight t/T (lcfr) or 1"),
      int_field("optimization", "advantage_updates_per_iteration", o.advantage_updates_per_iteration, 0, 100'000'000,
                "steps per advantage net"),
      int_field("optimization", "strategy_updates_per_iteration", o.strategy_updates_per_iteration, 0, 100'000'000,
                "steps of the strategy net"),
      int_field("optimization", "advantage_batch_size", o.advantage_batch_size, 1, kMaxRows, "batch of an advantage step"),
      int_field("optimization", "strategy_batch_size", o.strategy_batch_size, 1, kMaxRows, "batch of a strategy step"),
      real_field("optimization", "learning_rate", o.learning_rate, 1e-12, 10, "AdamW learning rate (> 0)"),
      int_field("optimization", "learning_rate_decay_iterations", o.learning_rate_decay_iterations, 0, 100'000'000,
                "0 = constant learning rate; N = learning_rate / sqrt(1 + (iteration - 1) / N)"),
      real_field("optimization", "weight_decay", o.weight_decay, 0, 10, "AdamW weight decay"),
      real_field("optimization", "grad_clip", o.grad_clip, 0, 1e9, "global gradient-norm clip (0 = none)"),
      real_field("optimization", "advantage_target_scale", o.advantage_target_scale, 1e-6, 1e9,
                 "advantage networks regress on regret / this: the same policy (regret matching is scale-free) from targets of "
                 "order 1 instead of hundreds, so that losses and gradients (and grad_clip) see sensible magnitudes"),
      real_field("optimization", "ema_decay", o.ema_decay, 0, 0.999999,
                 "0 = the traversals and evaluations use the trained weights; β in (0, 1) = an exponential moving average of "
                 "them, updated every step (Polyak averaging)"),
      choice_field("optimization", "nonfinite_policy", o.nonfinite_policy, {"skip", "stop"},
                   "NaN/inf in network outputs, sample targets or losses: skip (replace outputs by 0, drop samples, skip steps; "
                   "reported) or stop (report and exit; the last checkpoint stays)"),
      bool_field("optimization", "reinitialize_advantage", o.reinitialize_advantage,
                 "re-initialise advantage nets every iteration (the paper's recipe)"),
      int_field("memory", "advantage_capacity", c.memory.advantage_capacity, 1, kBig, "samples per advantage memory"),
      int_field("memory", "strategy_capacity", c.memory.strategy_capacity, 1, kBig, "samples in the strategy memory"),
      int_field("memory", "sample_pipe_blocks", c.memory.sample_pipe_blocks, 1, kMaxPipeBlocks,
                "traversal → memory queue bound, in blocks (back-pressure beyond)"),
      int_field("memory", "sample_block_samples", c.memory.sample_block_samples, 1, kMaxRows, "samples per queue block"),
      bool_field("memory", "check_ram", c.memory.check_ram,
                 "refuse at start memories whose full size exceeds 90% of the memory this process may use (physical RAM or a "
                 "smaller cgroup limit)"),
      bool_field("memory", "merge_duplicates", c.memory.merge_duplicates,
                 "train on the samples merged per distinct input: same loss, exact per-input means (games whose inputs repeat)"),
      int_field("checkpoint", "save_every", c.checkpoint.save_every, 0, 100'000'000,
                "keep every N-th iteration's checkpoint (0 = only the latest)"),
      bool_field("checkpoint", "include_memories", c.checkpoint.include_memories,
                 "save the reservoir memories too (exact resume; large)"),
      bool_field("checkpoint", "keep_snapshots", c.checkpoint.keep_snapshots,
                 "keep every iteration's advantage (regret) networks in run_dir/snapshots: Single Deep CFR's average strategy, "
                 "played by snapshots:RUN_DIR and evaluated exactly on kuhn/leduc (exploitability_snapshots)"),
      int_field("evaluation", "eval_every", c.evaluation.eval_every, 0, 100'000'000,
                "evaluate every N iterations (0 = only at the end)"),
      int_field("evaluation", "games", c.evaluation.games, 0, 100'000'000, "games per bot opponent (lost_cities)"),
      list_field("evaluation", "opponents", c.evaluation.opponents, "bots to play (lost_cities)"),
      int_field("evaluation", "max_steps", c.evaluation.max_steps, 1, 100'000'000, "action cap per evaluation game"),
      choice_field("evaluation", "play", c.evaluation.play, {"greedy", "sampled"},
                   "how the strategy network plays the bots: greedy (argmax of the legal logits) or sampled (its softmax: the "
                   "average strategy itself)"),
      real_field("distributed", "timeout_seconds", c.distributed.timeout_seconds, 0.1, 1e7,
                 "mpirun runs: a traversal rank that sends nothing this long ends the run, naming it"),
      int_field("distributed", "learners", c.distributed.learners, 1, 4096,
                "mpirun runs: ranks 0..N-1 train every network together, each on its shard of every batch, gradients summed "
                "with MPI_Allreduce before each step (data-parallel learners; ≤ the job's processes; 1 = rank 0 alone)"),
  };
  // [algorithm] name and [<algorithm>]: what each registered algorithm declares
  // (apps/run/algorithm_registry.h), after [network] as they always were.
  register_builtin_algorithms();
  {
    std::vector<ConfigField> a;
    const auto names = algorithm_names();
    std::string help = "training algorithm: ";
    for (std::size_t i = 0; i < names.size(); ++i)
      help += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + find_algorithm(names[i]).description;
    a.push_back(choice_field("algorithm", "name", c.algorithm.name, names, help));
    for (const auto& name : names)
      for (const auto& option : find_algorithm(name).options) {
        OptionValue& ref = c.algorithm_options[name].values.try_emplace(option.name, option.default_value).first->second;
        const std::string h = name + ": " + option.help;
        if (auto* i = std::get_if<std::int64_t>(&ref))
          a.push_back(
              int_field(name, option.name, *i, static_cast<std::int64_t>(option.min), static_cast<std::int64_t>(option.max), h));
        else if (auto* real = std::get_if<double>(&ref))
          a.push_back(real_field(name, option.name, *real, option.min, option.max, h));
        else if (auto* b = std::get_if<bool>(&ref))
          a.push_back(bool_field(name, option.name, *b, h));
        else if (auto* l = std::get_if<std::vector<std::string>>(&ref))
          a.push_back(list_field(name, option.name, *l, h));
        else
          a.push_back(choice_field(name, option.name, std::get<std::string>(ref), option.choices, h));
      }
    const auto after_network = std::find_if(f.begin(), f.end(), [](const ConfigField& x) { return x.section == "traversal"; });
    f.insert(after_network, std::make_move_iterator(a.begin()), std::make_move_iterator(a.end()));
  }
  // [scheduler.<name>]: what each registered scheduler declares (sched/scheduler.h).
  register_builtin_schedulers();
  for (const auto& name : scheduler_names())
    for (const auto& option : scheduler_options(name)) {
      int& ref = c.scheduler_options[name].try_emplace(option.name, option.default_value).first->second;
      f.push_back(int_field("scheduler." + name, option.name, ref, option.min, option.max, option.help));
    }
  // Keys that do not change what the run computes (how long, how fast, where, what is reported
  // or kept). The scheduler keys and the device change only floating-point rounding (none with
  // network.invariant_chunk on one device: docs/deep-cfr.md "Batch invariance").
  static const std::vector<std::string> kOperational = {
      "run.experiment_name",       "run.max_iterations",          "run.max_minutes",           "run.device",
      "run.torch_threads",         "network.invariant_chunk",     "traversal.scheduler",       "traversal.parallel_shares",
      "memory.sample_pipe_blocks", "memory.sample_block_samples", "memory.check_ram",          "evaluation.eval_every",
      "evaluation.games",          "evaluation.opponents",        "evaluation.max_steps",      "evaluation.play",
      "checkpoint.save_every",     "checkpoint.include_memories", "checkpoint.keep_snapshots", "distributed.timeout_seconds",
      "distributed.learners"};
  for (auto& field : f)
    field.training = field.section.rfind("scheduler.", 0) != 0 &&
                     std::find(kOperational.begin(), kOperational.end(), field.section + "." + field.key) == kOperational.end();
  return f;
}

std::vector<ConfigChange> config_changes(Config& before, Config& after) {
  const auto a = fields(before), b = fields(after);
  std::vector<ConfigChange> out;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].value() != b[i].value()) out.push_back({a[i].section + "." + a[i].key, a[i].value(), b[i].value(), a[i].training});
  return out;
}

namespace {

/// Where a key that was removed lives now (empty for a key that never existed).
std::string moved_key(const std::string& key) {
  static const std::map<std::string, std::string> kMoved = {
      {"traversal.interleave_width",
       "the window is a scheduler's option: scheduler.<name>.window, e.g. [scheduler.interleaved] window = 64"},
      {"traversal.interleave_max_batch",
       "the batch is a scheduler's option: scheduler.<name>.max_batch, e.g. [scheduler.interleaved] max_batch = 128"},
      {"traversal.num_workers", "pooled's option now: [scheduler.pooled] threads = N"},
      {"traversal.deadline_us", "pooled's option now: [scheduler.pooled] deadline_us = N"},
  };
  const auto it = kMoved.find(key);
  return it == kMoved.end() ? std::string() : it->second;
}

/// Applies a parsed table; errors name `file`, with the line when `lines` (a file, not --set).
void apply_table(Config& c, const toml::table& root, const std::string& file, bool lines = true) {
  auto at = [&](const toml::node& n) { return lines ? fmt::format("{}:{}", file, n.source().begin.line) : file; };
  auto fs = fields(c);
  std::vector<std::string> sections;
  for (const auto& f : fs)
    if (std::find(sections.begin(), sections.end(), f.section) == sections.end()) sections.push_back(f.section);
  auto known = [&](const std::string& sec) { return std::find(sections.begin(), sections.end(), sec) != sections.end(); };
  // A table of tables: [scheduler] holds [scheduler.<name>].
  auto is_parent = [&](const std::string& sec) {
    return std::any_of(sections.begin(), sections.end(), [&](const std::string& s) { return s.rfind(sec + ".", 0) == 0; });
  };
  auto apply_section = [&](const std::string& sec, const toml::table& tbl) {
    for (const auto& [key, node] : tbl) {
      const std::string k(key.str());
      const std::string where = at(node);
      auto it = std::find_if(fs.begin(), fs.end(), [&](const ConfigField& f) { return f.section == sec && f.key == k; });
      if (it == fs.end()) {
        if (const std::string moved = moved_key(sec + "." + k); !moved.empty())
          throw InputError(fmt::format("{}: {}.{} is no longer a key: {}", where, sec, k, moved));
        std::vector<std::string> keys;
        for (const auto& f : fs)
          if (f.section == sec) keys.push_back(f.key);
        throw InputError(fmt::format("{}: unknown key '{}.{}'; valid keys in [{}]: {}", where, sec, k, sec,
                                     keys.empty() ? std::string("(none)") : join_names(keys)));
      }
      it->set(&node, where);
    }
  };
  for (const auto& [sec_key, sec_node] : root) {
    const std::string sec(sec_key.str());
    const auto* tbl = sec_node.as_table();
    if (!known(sec) && is_parent(sec) && tbl != nullptr) {
      for (const auto& [sub_key, sub_node] : *tbl) {
        const std::string sub = sec + "." + std::string(sub_key.str());
        std::vector<std::string> children;
        for (const auto& s : sections)
          if (s.rfind(sec + ".", 0) == 0) children.push_back(s.substr(sec.size() + 1));
        if (!known(sub) || !sub_node.is_table())
          throw InputError(fmt::format("{}: unknown section [{}]; [{}] holds one table per {}: {}", at(sub_node), sub, sec,
                                       sec == "scheduler" ? "registered scheduler with options" : "entry", join_names(children)));
        apply_section(sub, *sub_node.as_table());
      }
      continue;
    }
    if (!known(sec))
      throw InputError(fmt::format("{}: unknown section [{}]; valid sections: {}", at(sec_node), sec, join_names(sections)));
    if (tbl == nullptr) throw InputError(fmt::format("{}: [{}] must be a table", at(sec_node), sec));
    apply_section(sec, *tbl);
  }
}

}  // namespace

Config load_config(const std::string& path) { return parse_config(read_text_file(path), path); }

Config parse_config(std::string_view text, const std::string& path) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}:{}: TOML syntax error: {}", path, e.source().begin.line, e.description()));
  }
  Config c;
  c.source = path;
  apply_table(c, root, path);
  return c;
}

void apply_override(Config& c, const std::string& assignment) {
  const auto eq = assignment.find('=');
  // The key is after the last dot before '=': scheduler.pooled.threads is key threads of [scheduler.pooled].
  const auto dot = eq == std::string::npos ? std::string::npos : assignment.rfind('.', eq);
  if (eq == std::string::npos || dot == std::string::npos)
    throw InputError(fmt::format("--set '{}': expected section.key=value", assignment));
  const std::string section = assignment.substr(0, dot), key = assignment.substr(dot + 1, eq - dot - 1),
                    value = assignment.substr(eq + 1);
  toml::table t;
  try {
    t = toml::parse(fmt::format("[{}]\n{} = {}\n", section, key, value));
  } catch (const toml::parse_error&) {
    // Not TOML: the value is taken as a string, in [a.b] as nested tables.
    std::vector<std::string> parts;
    for (std::size_t from = 0;;) {
      const auto next = section.find('.', from);
      parts.push_back(section.substr(from, next == std::string::npos ? std::string::npos : next - from));
      if (next == std::string::npos) break;
      from = next + 1;
    }
    toml::table inner{{key, value}};
    for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
      toml::table outer;
      outer.insert(*part, std::move(inner));
      inner = std::move(outer);
    }
    t = std::move(inner);
  }
  apply_table(c, t, fmt::format("--set {}", assignment), /*lines=*/false);
  c.overrides.push_back(section + "." + key + "=" + value);
}

void validate(const Config& c) {
  // Where a key's value came from: its last --set, else the config file.
  auto origin = [&](const std::string& key) {
    for (auto it = c.overrides.rbegin(); it != c.overrides.rend(); ++it)
      if (it->rfind(key + "=", 0) == 0) return "--set " + *it;
    return c.source;
  };
  const std::string where = c.source;
  // It names the run directory, runs/<experiment_name>-<time>: a name, not a path.
  if (c.run.experiment_name.empty() || c.run.experiment_name.find_first_of("/\\") != std::string::npos)
    throw InputError(
        fmt::format("{}: run.experiment_name = '{}': must be a non-empty name without '/' (it names the run directory)",
                    origin("run.experiment_name"), c.run.experiment_name));
  try {
    c.rules.validate();
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: [rules]: {}", where, e.what()));
  }
  register_builtin_schedulers();
  const auto names = scheduler_names();
  if (std::find(names.begin(), names.end(), c.traversal.scheduler) == names.end())
    throw InputError(fmt::format("{}: traversal.scheduler = '{}'; registered schedulers: {}", origin("traversal.scheduler"),
                                 c.traversal.scheduler, join_names(names)));
  const auto bots = lc::bot_names();
  // A bot's name, or a heuristic_expert variant whose spec make_bot accepts (its error says which key).
  const auto check_bot = [&](const std::string& key, const std::string& what, const std::string& b) {
    if (!lc::names_bot(b))
      throw InputError(
          fmt::format("{}: {} '{}'; valid bots: {} (or heuristic_expert?key=value&...)", origin(key), what, b, join_names(bots)));
    try {
      (void)lc::make_bot(b, c.rules);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {} '{}': {}", origin(key), what, b, e.what()));
    }
  };
  for (const auto& b : c.evaluation.opponents) check_bot("evaluation.opponents", "evaluation.opponents has", b);
  check_bot("traversal.opponent_bot", "traversal.opponent_bot =", c.traversal.opponent_bot);
  if (c.traversal.cutoff_value_mode == "bot_rollout" && c.run.game != "lost_cities")
    throw InputError(
        fmt::format("{}: traversal.cutoff_value_mode = 'bot_rollout' needs run.game = 'lost_cities' (a game with bots)",
                    origin("traversal.cutoff_value_mode")));
  if (c.traversal.opponent_policy == "bot" && c.run.game != "lost_cities")
    throw InputError(fmt::format("{}: traversal.opponent_policy = 'bot' needs run.game = 'lost_cities'", where));
  register_builtin_algorithms();
  if (const auto algorithm = find_algorithm(c.algorithm.name); algorithm.validate) algorithm.validate(c, origin);
  if (c.traversal.algorithm == "external_sampling" && !is_enumerable(c.run.game))
    throw InputError(fmt::format("{}: traversal.algorithm = 'external_sampling' is for small games (kuhn, leduc)", where));
}

std::string to_toml(Config& c) {
  std::string out, section;
  for (const auto& f : fields(c)) {
    if (f.section != section) {
      out += fmt::format("{}[{}]\n", out.empty() ? "" : "\n", f.section);
      section = f.section;
    }
    out += fmt::format("{} = {}  # {}\n", f.key, f.value(), f.help);
  }
  return out;
}

}  // namespace cfr
