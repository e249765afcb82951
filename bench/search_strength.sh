#!/usr/bin/env bash
# The determinized search player against the bots (docs/search.md): for a checkpoint, the network
# alone and search with network or bot rollouts, GAMES duplicate games per pair, one JSON report
# per line into OUT and a table on stdout.
#   bench/search_strength.sh RUN_DIR [GAMES=100] [OUT=search_strength.jsonl]
set -euo pipefail
cd "$(dirname "$0")/.."
run=$1
games=${2:-100}
out=${3:-search_strength.jsonl}
: > "$out"
players=("checkpoint:$run" "search:$run?k=3&n=8" "search:$run?k=8&n=8&prior=0&rollout=bot:heuristic_balanced")
for p in "${players[@]}"; do
  for opp in discard_only heuristic_cautious heuristic_balanced; do
    build/bin/cfr-arena --bot0 "$p" --bot1 "$opp" --games "$games" --seed 0 --json 2> "$out.cost" |
      python3 -c 'import json,sys; r=json.load(sys.stdin); r["bot0"]=sys.argv[1]; r["cost"]=open(sys.argv[2]).read().strip(); print(json.dumps(r))' "$p" "$out.cost" >> "$out"
  done
done
rm -f "$out.cost"
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
