#!/usr/bin/env bash
# Strength diagnosis: trains the quickstart recipe with one change at a time (same seed, same
# iteration count, no wall-time cap) and evaluates each final checkpoint over 1000 duplicate
# games against random, discard_only and heuristic_cautious. Prints a Markdown table (one row per
# variant) and keeps every run under $OUT (default runs/strength).
#   bench/strength_sweep.sh [NAME="--set k=v ..."]...
#   bench/strength_sweep.sh baseline="" nnv="--set traversal.outcome_unsampled_regret=negative_node_value"
# Environment: CONFIG (default configs/quickstart_deep_cfr.toml), OUT, GAMES (1000), ITERS (140),
# BIN (the programs' folder, default build/bin). Paths given are read from the current directory;
# the defaults are the checkout's. NAME is a folder name under OUT (OUT/NAME is replaced): empty,
# '.', '..', a '/' or an argument without '=' is refused (exit 2) before anything runs.
set -euo pipefail
from=$PWD
abspath() { case $1 in /* | '') printf '%s' "$1" ;; *) printf '%s' "$from/$1" ;; esac; }
config=$(abspath "${CONFIG:-}") out=$(abspath "${OUT:-}") bin=$(abspath "${BIN:-}")
cd "$(dirname "$0")/.."
config=${config:-configs/quickstart_deep_cfr.toml}
out=${out:-runs/strength}
bin=${bin:-build/bin}
games=${GAMES:-1000}
iters=${ITERS:-140}
[ $# -gt 0 ] || set -- baseline=""
for arg in "$@"; do
  name=${arg%%=*}
  case $arg in *=*) ;; *) name=/ ;; esac
  case $name in
    '' | . | .. | */*)
      echo "strength_sweep.sh: '$arg': want NAME=\"--set k=v ...\" with NAME a folder name (not empty, . or .., no /)" >&2
      exit 2
      ;;
  esac
done
mkdir -p "$out"
echo "| variant | sets | iterations | minutes | cutoff share | vs random | vs discard_only | vs heuristic_cautious | opened/game (vs discard_only) | score diff vs discard_only |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for arg in "$@"; do
  name=${arg%%=*}
  sets=${arg#*=}
  dir="$out/$name"
  rm -rf "$dir"
  start=$(date +%s)
  # shellcheck disable=SC2086  # sets is a list of --set k=v words
  "$bin/cfr-run" "$config" --run-dir "$dir" --set run.max_minutes=0 --set run.max_iterations="$iters" \
    --set evaluation.opponents='[]' $sets > "$dir.log" 2>&1
  minutes=$(python3 -c "print(f'{($(date +%s) - $start) / 60:.1f}')")
  "$bin/cfr-eval" "$dir" --opponent random --opponent discard_only --opponent heuristic_cautious \
    --games "$games" --json > "$dir.eval.jsonl"
  python3 - "$name" "$sets" "$dir" "$minutes" <<'PY'
import json, sys
name, sets, d, minutes = sys.argv[1:5]
m = [json.loads(l) for l in open(f"{d}/metrics.jsonl") if '"iteration"' in l]
cut = sum(x.get("cutoff_share", 0) for x in m) / max(1, len(m))
ev = {j["bot1"]: j for j in map(json.loads, open(f"{d}.eval.jsonl"))}
def w(b):
    j = ev[b]
    return f"{j['win_rate']:.3f} ({j['win_rate_lo95']:.3f}–{j['win_rate_hi95']:.3f})"
dj = ev["discard_only"]
print(f"| {name} | `{sets or '—'}` | {m[-1]['iteration']} | {minutes} | {cut:.4f} | {w('random')} | {w('discard_only')} | "
      f"{w('heuristic_cautious')} | {dj['opened_per_game0']:.2f} | {dj['avg_score_diff']:+.1f} ± {dj['se_score_diff']:.1f} |")
PY
done
