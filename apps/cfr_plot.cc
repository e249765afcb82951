// cfr-plot: draws a run's curves from metrics.jsonl with gnuplot (PNG or SVG): losses, the
// evaluation (exploitability for Kuhn/Leduc, win rate against each bot for Lost Cities),
// traversal nodes/s, and phase times per iteration.
//   cfr-plot RUN_DIR [--format png|svg] [--out DIR]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
  std::vector<std::pair<int, double>> points = {};
};

void plot(const fs::path& out_dir, const std::string& name, const std::string& title, const std::string& ylabel,
          const std::vector<Series>& series, const std::string& format, bool logy) {
  std::vector<const Series*> used;
  for (const auto& s : series)
    if (!s.points.empty()) used.push_back(&s);
  if (used.empty()) return;
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
    g << "set output '" << image.string() << "'\n";
    g << "set title '" << title << "'\nset xlabel 'iteration'\nset ylabel '" << ylabel << "'\nset grid\nset key outside\n";
    if (logy) g << "set logscale y\n";
    g << "plot ";
    for (std::size_t i = 0; i < used.size(); ++i)
      g << (i ? ", " : "") << "'" << data.string() << "' index " << i << " with linespoints title '" << used[i]->title << "'";
    g << "\n";
    cfr::write_file_atomic(script.string(), g.str());
  }
  const int rc = std::system(fmt::format("gnuplot '{}'", script.string()).c_str());
  if (rc != 0) throw std::runtime_error(fmt::format("gnuplot failed on {} (is gnuplot installed? scripts/setup.sh installs it)", script.string()));
  std::cout << image.string() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cfr-plot: a run's curves from metrics.jsonl, drawn by gnuplot"};
  std::string run_dir, format = "png", out;
  app.add_option("RUN_DIR", run_dir, "run directory (holds metrics.jsonl)")->required()->check(cfr::kNonEmpty);
  app.add_option("--format", format, "png or svg")->check(CLI::IsMember({"png", "svg"}));
  app.add_option("--out", out, "where to write the plots (default RUN_DIR/plots)")->check(cfr::kNonEmpty);
  if (const auto rc = cfr::parse_command_line(app, "cfr-plot", argc, argv)) return *rc;
  return cfr::run_app("cfr-plot", [&] {
    const fs::path metrics = fs::path(run_dir) / "metrics.jsonl";
    cfr::require_readable_file(metrics.string());
    std::ifstream in(metrics);
    if (!in) throw cfr::InputError(fmt::format("{}: cannot open", metrics.string()));
    const fs::path out_dir = out.empty() ? fs::path(run_dir) / "plots" : fs::path(out);
    fs::create_directories(out_dir);
    Series adv0{"advantage net 0"}, adv1{"advantage net 1"}, strat{"strategy net"}, expl{"exploitability"}, nps{"traversal nodes/s"},
        trav{"traversal"}, train{"training"}, eval{"evaluation"};
    std::map<std::string, Series> win;
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception& e) {
        throw cfr::InputError(fmt::format("{}:{}: invalid JSON: {}", metrics.string(), lineno, e.what()));
      }
      if (!j.is_object()) throw cfr::InputError(fmt::format("{}:{}: not a JSON object", metrics.string(), lineno));
      try {
      const int it = j.value("iteration", 0);
      if (j.contains("loss_advantage")) {
        adv0.points.emplace_back(it, j["loss_advantage"][0].get<double>());
        adv1.points.emplace_back(it, j["loss_advantage"][1].get<double>());
      }
      if (j.contains("loss_strategy")) strat.points.emplace_back(it, j["loss_strategy"].get<double>());
      if (j.contains("exploitability")) expl.points.emplace_back(it, j["exploitability"].get<double>());
      if (j.contains("nodes_per_second")) nps.points.emplace_back(it, j["nodes_per_second"].get<double>());
      if (j.contains("traversal_seconds")) trav.points.emplace_back(it, j["traversal_seconds"].get<double>());
      if (j.contains("train_seconds")) train.points.emplace_back(it, j["train_seconds"].get<double>());
      if (j.contains("eval_seconds")) eval.points.emplace_back(it, j["eval_seconds"].get<double>());
      if (j.contains("evaluation"))
        for (const auto& [bot, r] : j["evaluation"].items()) {
          auto& s = win[bot];
          s.title = "vs " + bot;
          s.points.emplace_back(it, r.value("win_rate", 0.0));
        }
      } catch (const nlohmann::json::exception& e) {  // a field of another type than cfr-run writes
        throw cfr::InputError(fmt::format("{}:{}: {}", metrics.string(), lineno, e.what()));
      }
    }
    plot(out_dir, "losses", "training losses (mean per iteration)", "loss", {adv0, adv1, strat}, format, true);
    plot(out_dir, "exploitability", "exploitability of the strategy network", "chips per game", {expl}, format, true);
    std::vector<Series> wins;
    for (auto& [k, s] : win) wins.push_back(s);
    plot(out_dir, "win_rates", "greedy strategy network against the bots", "win rate", wins, format, false);
    plot(out_dir, "nodes_per_second", "traversal throughput (traversal phases only)", "nodes/s", {nps}, format, false);
    plot(out_dir, "phase_times", "time per iteration", "seconds", {trav, train, eval}, format, false);
    return 0;
  });
}
