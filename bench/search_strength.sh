#!/usr/bin/env bash
# The determinized search player against the bots (docs/search.md): for a checkpoint, the network
# alone and search with network or bot rollouts, GAMES duplicate games per pair, one JSON report
# per line into OUT and a table on stdout.
#   bench/search_strength.sh RUN_DIR [GAMES=100] [OUT=runs/search_strength.jsonl]
# RUN_DIR and OUT are read from the current directory (the default OUT is the checkout's); BIN
# names the programs' folder (default build/bin). The reports go into a temporary file beside OUT,
# moved onto OUT once every match is done: a failed or stopped run leaves OUT as it was.
set -euo pipefail
from=$PWD
abspath() { case $1 in /* | '') printf '%s' "$1" ;; *) printf '%s' "$from/$1" ;; esac; }
if [ $# -lt 1 ] || [ -z "$1" ]; then
  echo "usage: $0 RUN_DIR [GAMES=100] [OUT=runs/search_strength.jsonl]" >&2
  exit 2
fi
run=$(abspath "$1")
games=${2:-100}
out=$(abspath "${3:-}")
bin=$(abspath "${BIN:-}")
cd "$(dirname "$0")/.."
run=$(realpath -m -s --relative-base=. "$run")  # the reports name it relative within the checkout
bin=${bin:-build/bin}
if [ -z "$out" ]; then
  out=runs/search_strength.jsonl
  mkdir -p runs
fi
[ -d "$(dirname "$out")" ] || { echo "search_strength.sh: OUT $out: no folder $(dirname "$out")" >&2; exit 2; }
[ ! -d "$out" ] || { echo "search_strength.sh: OUT $out: is a directory" >&2; exit 2; }
tmp=$(mktemp "$out.XXXXXX")
cost=$(mktemp "$out.cost.XXXXXX")
cleanup() {  # on a failure, the failed match's stderr (cfr-arena's error) is shown before it goes
  local rc=$?
  [ "$rc" -eq 0 ] || cat "$cost" >&2
  rm -f "$tmp" "$cost"
}
trap cleanup EXIT
players=("checkpoint:$run" "search:$run?k=3&n=8" "search:$run?k=8&n=8&prior=0&rollout=bot:heuristic_balanced")
for p in "${players[@]}"; do
  for opp in discard_only heuristic_cautious heuristic_balanced; do
    "$bin/cfr-arena" --bot0 "$p" --bot1 "$opp" --games "$games" --seed 0 --json 2> "$cost" |
      python3 -c 'import json,sys; r=json.load(sys.stdin); r["bot0"]=sys.argv[1]; r["cost"]=open(sys.argv[2]).read().strip(); print(json.dumps(r))' "$p" "$cost" >> "$tmp"
  done
done
chmod 644 "$tmp"
mv "$tmp" "$out"
python3 - "$out" <<'PY'
import json, re, sys
print("| player | opponent | games | win rate (95%) | score diff ± se | opened | ms per decision |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for line in open(sys.argv[1]):
    r = json.loads(line)
    m = re.search(r"([0-9.]+) ms per decision", r["cost"])
    cost = m.group(1) if m else "–"
    print(f"| {r['bot0'].split('/')[-1]} | {r['bot1']} | {r['games']} | {r['win_rate']:.3f} ({r['win_rate_lo95']:.3f}–{r['win_rate_hi95']:.3f}) | "
          f"{r['avg_score_diff']:+.1f} ± {r['se_score_diff']:.1f} | {r['opened_per_game0']:.2f} | {cost} |")
PY
