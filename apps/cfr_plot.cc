// cfr-plot: draws a run's curves from metrics.jsonl with gnuplot (PNG or SVG): losses, the
// evaluation (exploitability for Kuhn/Leduc, win rate against each bot for Lost Cities),
// traversal nodes/s, and phase times per iteration. Given several runs, it draws them beside
// each other against training wall time instead (compare_win_rates, compare_exploitability):
// e.g. two recipes under the same budget.
//   cfr-plot RUN_DIR [--format png|svg] [--out DIR]
//   cfr-plot RUN_DIR RUN_DIR... --out DIR [--format png|svg]
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/cli.h"
#include "engine/core/files.h"

namespace fs = std::filesystem;

namespace {

struct Series {
  std::string title;
  std::vector<std::pair<double, double>> points = {};
  std::string style = "";  // gnuplot line style (colour, dash), empty: gnuplot's next one
};

/// What one run's metrics.jsonl holds, per iteration; x is the iteration or, for comparisons, the
/// training wall time in minutes (the sum of iteration_seconds up to that iteration).
struct RunCurves {
  Series adv0{"advantage net 0"}, adv1{"advantage net 1"}, strat{"strategy net"}, expl{"exploitability"},
      nps{"traversal nodes/s"}, trav{"traversal"}, train{"training"}, eval{"evaluation"};
  std::map<std::string, Series> loss;  // per network: "losses" (every algorithm; older Deep CFR runs: adv0, adv1, strat)
  std::map<std::string, Series> win, win_by_minute;  // per bot
  Series expl_by_minute{"exploitability"};
};

/// A torn last line (a run stopped mid-append: cfr-run writes each line with its '\n' in one
/// append, so a line without one that is not valid JSON was cut off) is skipped with a warning on
/// stderr; any other invalid line is an InputError naming the file and line. A file with no
/// complete line is an InputError "nothing to plot".
RunCurves read_run(const std::string& run_dir) {
  const fs::path metrics = fs::path(run_dir) / "metrics.jsonl";
  cfr::require_readable_file(metrics.string());
  const std::string text = cfr::read_text_file(metrics.string());
  std::istringstream in(text);
  RunCurves c;
  std::string line;
  int lineno = 0, complete = 0;
  double seconds = 0;
  while (std::getline(in, line)) {
    ++lineno;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      if (in.eof() && text.back() != '\n') {  // the last line, cut off
        std::cerr << fmt::format("cfr-plot: warning: {}:{}: the last line is cut off (no newline, invalid JSON); skipped\n",
                                 metrics.string(), lineno);
        break;
      }
      throw cfr::InputError(fmt::format("{}:{}: invalid JSON: {}", metrics.string(), lineno, e.what()));
    }
    ++complete;
    if (!j.is_object()) throw cfr::InputError(fmt::format("{}:{}: not a JSON object", metrics.string(), lineno));
    try {
      const double it = j.value("iteration", 0);
      seconds += j.value("iteration_seconds", 0.0);
      if (j.contains("losses")) {
        for (const auto& [net, v] : j["losses"].items()) {
          c.loss[net].title = net;
          c.loss[net].points.emplace_back(it, v.get<double>());
        }
      } else if (j.contains("loss_advantage")) {
        c.adv0.points.emplace_back(it, j["loss_advantage"][0].get<double>());
        c.adv1.points.emplace_back(it, j["loss_advantage"][1].get<double>());
      }
      if (!j.contains("losses") && j.contains("loss_strategy")) c.strat.points.emplace_back(it, j["loss_strategy"].get<double>());
      if (j.contains("exploitability")) {
        c.expl.points.emplace_back(it, j["exploitability"].get<double>());
        c.expl_by_minute.points.emplace_back(seconds / 60, j["exploitability"].get<double>());
      }
      if (j.contains("nodes_per_second")) c.nps.points.emplace_back(it, j["nodes_per_second"].get<double>());
      if (j.contains("traversal_seconds")) c.trav.points.emplace_back(it, j["traversal_seconds"].get<double>());
      if (j.contains("train_seconds")) c.train.points.emplace_back(it, j["train_seconds"].get<double>());
      if (j.contains("eval_seconds")) c.eval.points.emplace_back(it, j["eval_seconds"].get<double>());
      if (j.contains("evaluation"))
        for (const auto& [bot, r] : j["evaluation"].items()) {
          const double rate = r.value("win_rate", 0.0);
          c.win[bot].title = c.win_by_minute[bot].title = "vs " + bot;
          c.win[bot].points.emplace_back(it, rate);
          c.win_by_minute[bot].points.emplace_back(seconds / 60, rate);
        }
    } catch (const nlohmann::json::exception& e) {  // a field of another type than cfr-run writes
      throw cfr::InputError(fmt::format("{}:{}: {}", metrics.string(), lineno, e.what()));
    }
  }
  if (complete == 0)
    throw cfr::InputError(fmt::format("{}: nothing to plot ({})", metrics.string(),
                                      text.empty() ? "the file is empty" : "its only line is cut off"));
  return c;
}

/// A gnuplot single-quoted string holding `text`: a quote is doubled (gnuplot's only escape in
/// single quotes) and a newline or other control character, which would end the command, becomes
/// a space. Every title and path in a script goes through it: a metrics key or a run directory's
/// name is data, never gnuplot commands.
std::string gnuplot_quoted(std::string_view text) {
  std::string out = "'";
  for (const char ch : text) {
    if (ch == '\'')
      out += "''";
    else if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
      out += ' ';
    else
      out += ch;
  }
  return out + "'";
}

/// Runs `gnuplot SCRIPT` without a shell (the path is one argument, whatever it holds; absolute, so
/// never an option); its exit status, or 127 when gnuplot cannot be started.
int run_gnuplot(const fs::path& script) {
  std::string prog = "gnuplot", path = fs::absolute(script).string();
  std::vector<char*> argv = {prog.data(), path.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv.data(), environ) != 0) return 127;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/// Draws the series that have points into out_dir/name.<format>; returns whether it drew anything.
bool plot(const fs::path& out_dir, const std::string& name, const std::string& title, const std::string& ylabel,
          const std::vector<Series>& series, const std::string& format, bool logy, const std::string& xlabel = "iteration") {
  std::vector<const Series*> used;
  for (const auto& s : series)
    if (!s.points.empty()) used.push_back(&s);
  if (used.empty()) return false;
  const fs::path data = out_dir / (name + ".dat");
  {
    std::ostringstream d;
    for (const auto* s : used) {
      for (const auto& [x, y] : s->points) d << x << " " << y << "\n";
      d << "\n\n";
    }
    cfr::write_file_atomic(data.string(), d.str());
  }
  const fs::path image = out_dir / (name + "." + format);
  const fs::path script = out_dir / (name + ".gp");
  {
    std::ostringstream g;
    g << (format == "svg" ? "set terminal svg size 900,500 dynamic\n" : "set terminal pngcairo size 900,500\n");
    g << "set output " << gnuplot_quoted(image.string()) << "\n";
    g << "set title " << gnuplot_quoted(title) << "\nset xlabel " << gnuplot_quoted(xlabel) << "\nset ylabel "
      << gnuplot_quoted(ylabel) << "\nset grid\nset key outside\n";
    if (logy) g << "set logscale y\n";
    g << "plot ";
    for (std::size_t i = 0; i < used.size(); ++i)
      g << (i ? ", " : "") << gnuplot_quoted(data.string()) << " index " << i << " with linespoints " << used[i]->style
        << " title " << gnuplot_quoted(used[i]->title) << " noenhanced";
    g << "\n";
    cfr::write_file_atomic(script.string(), g.str());
  }
  const int rc = run_gnuplot(script);
  if (rc != 0)
    throw std::runtime_error(
        fmt::format("gnuplot failed on {} (is gnuplot installed? scripts/setup.sh installs it)", script.string()));
  std::cout << image.string() << " (" << used.size() << (used.size() == 1 ? " curve" : " curves") << ")\n";
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cfr-plot: a run's curves from metrics.jsonl, drawn by gnuplot; several runs side by side against wall time"};
  std::vector<std::string> run_dirs;
  std::string format = "png", out;
  app.add_option("RUN_DIR", run_dirs,
                 "run directory (holds metrics.jsonl); several: their evaluations side by side against training wall time")
      ->required()
      ->check(cfr::kNonEmpty);
  app.add_option("--format", format, "png or svg")->check(CLI::IsMember({"png", "svg"}));
  app.add_option("--out", out, "where to write the plots (default RUN_DIR/plots; required with several runs)")
      ->check(cfr::kNonEmpty);
  if (const auto rc = cfr::parse_command_line(app, "cfr-plot", argc, argv)) return *rc;
  return cfr::run_app("cfr-plot", [&] {
    if (run_dirs.size() > 1) {
      if (out.empty()) throw cfr::InputError("--out: several runs are drawn together into one directory; name it with --out DIR");
      // A bot keeps its colour across runs; a run keeps its dash and point type across bots.
      std::vector<Series> wins, expl;
      std::map<std::string, int> colour;
      for (std::size_t r = 0; r < run_dirs.size(); ++r) {
        const std::string& dir = run_dirs[r];
        RunCurves c = read_run(dir);
        const std::string name = fs::path(dir).lexically_normal().filename().string();
        const std::string dash = fmt::format("dt {} pt {}", r % 5 + 1, r % 13 + 1);
        for (auto& [bot, s] : c.win_by_minute) {
          const int k = colour.try_emplace(bot, static_cast<int>(colour.size()) + 1).first->second;
          s.title = name + " " + s.title;
          s.style = fmt::format("lc {} {}", k, dash);
          wins.push_back(std::move(s));
        }
        expl.push_back({name, std::move(c.expl_by_minute.points), fmt::format("lc {} {}", r + 1, dash)});
      }
      fs::create_directories(out);
      const bool w = plot(out, "compare_win_rates", "win rate against the bots over training wall time", "win rate", wins, format,
                          false, "training wall time (minutes)");
      const bool x = plot(out, "compare_exploitability", "exploitability over training wall time", "chips per game", expl, format,
                          true, "training wall time (minutes)");
      if (!w && !x)
        throw cfr::InputError("nothing to plot: no run's metrics.jsonl holds an evaluation (win rates or exploitability)");
      return 0;
    }
    const std::string& run_dir = run_dirs.front();
    RunCurves c = read_run(run_dir);
    const fs::path out_dir = out.empty() ? fs::path(run_dir) / "plots" : fs::path(out);
    fs::create_directories(out_dir);
    int drawn = 0;
    std::vector<Series> losses = {c.adv0, c.adv1, c.strat};
    for (auto& [net, s] : c.loss) losses.push_back(s);
    drawn += plot(out_dir, "losses", "training losses (mean per iteration)", "loss", losses, format, true);
    drawn += plot(out_dir, "exploitability", "exploitability of the strategy network", "chips per game", {c.expl}, format, true);
    std::vector<Series> wins;
    for (auto& [k, s] : c.win) wins.push_back(s);
    drawn += plot(out_dir, "win_rates", "greedy strategy network against the bots", "win rate", wins, format, false);
    drawn += plot(out_dir, "nodes_per_second", "traversal throughput (traversal phases only)", "nodes/s", {c.nps}, format, false);
    drawn += plot(out_dir, "phase_times", "time per iteration", "seconds", {c.trav, c.train, c.eval}, format, false);
    if (drawn == 0)
      throw cfr::InputError(fmt::format("{}: nothing to plot (no line holds a loss, an evaluation or a phase time)",
                                        (fs::path(run_dir) / "metrics.jsonl").string()));
    return 0;
  });
}
