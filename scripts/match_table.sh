#!/usr/bin/env bash
# Reproduces lost-cities.md §5: each bot against random, 1000 games, seats alternating, and prints
# a Markdown table beside the reference's numbers.
#   scripts/match_table.sh [GAMES] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
games=${1:-1000}; seed=${2:-0}
arena=${ARENA:-build/bin/cfr-arena}
echo "| match | win rate (ref) | avg score diff (ref) | avg length (ref) | timeouts | games/s |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
while read -r bot ref_w ref_d ref_l; do
  j=$("$arena" --bot0 "$bot" --bot1 random --games "$games" --seed "$seed" --independent-deals --json)
  python3 - "$bot" "$ref_w" "$ref_d" "$ref_l" "$j" <<'PY'
import json, sys
bot, w, d, l, j = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), json.loads(sys.argv[5])
print(f"| {bot} vs random | {j['win_rate']:.3f} ({w:.3f}) | {j['avg_score_diff']:+.2f} ({d:+.2f}) | "
      f"{j['avg_length']:.1f} ({l:.0f}) | {j['timeouts']} | {j['games_per_second']:.0f} |")
PY
done <<'ROWS'
random 0.509 -0.17 287
heuristic_balanced 1.000 105.1 166
heuristic_cautious 1.000 91.3 187
heuristic_aggressive 1.000 108.6 155
heuristic_noisy 0.996 93.7 167
discard_only 0.998 57.1 142
ROWS
