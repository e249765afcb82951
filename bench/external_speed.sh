#!/usr/bin/env bash
# External players' speed (docs/external-players.md): decisions per second of a trivial external
# player (scripts/players/random_player.py) against the built-in `random`, one game at a time
# (--parallel 1: one line each way per decision) and 256 games multiplexed (one write of up to
# 256 decisions per round), median of REPEATS runs of GAMES games each, all in one run so the
# ratios hold on a noisy machine. The built-in random bot's own rate is printed for scale.
#   bench/external_speed.sh [GAMES=1000] [REPEATS=3]
set -euo pipefail
cd "$(dirname "$0")/.."
games=${1:-1000}
repeats=${2:-3}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
player="external:python3 scripts/players/random_player.py"
summary=$(mktemp)
cat > "$summary" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in sys.stdin]
assert rows and all(r["forfeits0"] == 0 and r["games"] == rows[0]["games"] for r in rows), "forfeits or missing games"
rates = [r["decisions0"] / r["seconds"] for r in rows]
n = rows[0]["decisions0"]
print(f"{statistics.median(rates):.0f} {n} {min(rates):.0f} {max(rates):.0f}")
PY
trap 'rm -rf "$logs" "$summary"' EXIT
measure() {  # BOT0 PARALLEL -> median decisions/s of bot 0
  local out
  out=$(for _ in $(seq "$repeats"); do
    build/bin/cfr-arena --bot0 "$1" --bot1 random --games "$games" --seed 0 --parallel "$2" --player-logs "$logs" --json
  done | python3 "$summary")
  [ -n "$out" ] || { echo "external_speed.sh: no measurement for $1" >&2; exit 1; }
  echo "$out"
}
echo "| player | games in flight | decisions/s (median of $repeats) | range | decisions per run |"
echo "| --- | ---: | ---: | ---: | ---: |"
for par in 1 256; do
  read -r med n lo hi <<<"$(measure "$player" "$par")"
  echo "| python random (external) | $par | $med | $lo–$hi | $n |"
done
read -r med n lo hi <<<"$(measure random 256)"
echo "| built-in random | 256 | $med | $lo–$hi | $n |"
