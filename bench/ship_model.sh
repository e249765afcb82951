#!/usr/bin/env bash
# Ships a trained agent (issue 18 item 4): cfr-export writes the run's playing network alone into
# MODEL_DIR, with a manifest holding the command that trained it, the revision, the run's wall time
# and iterations, the evaluation reports (one cfr-eval --json line per bot, EVAL_JSONL) and the
# ladder (LADDER_JSON from cfr-ladder --json).
#   [TRAINED_REVISION=REV] bench/ship_model.sh RUN_DIR MODEL_DIR "TRAINING COMMAND" EVAL_JSONL LADDER_JSON
# (TRAINED_REVISION: the revision whose cfr-run trained the run, when it is not HEAD.
#  FROM_RUN, FROM_COMMAND: the run whose network the run started from (mmd.initial_policy) and the
#  command that trained it; the manifest's training time and iterations then count both stages.
#  FROM_MODEL: a shipped model the run started from (models/NAME); its manifest's stages come first.
#  LABEL: the model's name on cfr-serve's pages, e.g. "Lost Cities styles agent (shipped 2026-12-04)".
#  EXPLOITABILITY: a JSON file holding the manifest's "exploitability" object: the exploiter's
#  command, minutes, iterations and its cfr-arena --json result, scripts/exploitability.sh.
#  AVERAGE: N > 1 ships the mean of the playing network's weights over the run's N newest
#  checkpoints, cfr-export --average N; the manifest lists their iterations.
#  VALUE_FROM: an MMD checkpoint or run whose value network the model holds too, cfr-export
#  --value-from (the search player's value leaves over the model); the manifest says where from.)
# Every path (the arguments, FROM_RUN, FROM_MODEL, EXPLOITABILITY, VALUE_FROM) is read from the
# current directory.
set -euo pipefail
from=$PWD
abspath() { case $1 in /* | '') printf '%s' "$1" ;; *) printf '%s' "$from/$1" ;; esac; }
[ $# -eq 5 ] || { echo "usage: $0 RUN_DIR MODEL_DIR \"TRAINING COMMAND\" EVAL_JSONL LADDER_JSON" >&2; exit 2; }
run=$(abspath "$1") model=$(abspath "$2") command=$3 evals=$(abspath "$4") ladder=$(abspath "$5")
FROM_RUN=$(abspath "${FROM_RUN:-}") FROM_MODEL=$(abspath "${FROM_MODEL:-}")
EXPLOITABILITY=$(abspath "${EXPLOITABILITY:-}") VALUE_FROM=$(abspath "${VALUE_FROM:-}")
cd "$(dirname "$0")/.."
run=$(realpath -m -s --relative-base=. "$run")  # the manifest's exported_from: relative within the checkout
extra=$(mktemp)
trap 'rm -f "$extra"' EXIT
python3 - "$run" "$command" "$evals" "$ladder" "$(git rev-parse HEAD)" "$(git rev-parse "${TRAINED_REVISION:-HEAD}")" \
  "${FROM_RUN:-}" "${FROM_COMMAND:-}" "${EXPLOITABILITY:-}" "${FROM_MODEL:-}" "${LABEL:-}" > "$extra" <<'PY'
import json, sys
run, command, evals, ladder, revision, trained, from_run, from_command, exploitability, from_model, label = sys.argv[1:]
def stage(run_dir, command):
    rows = [json.loads(l) for l in open(f"{run_dir}/metrics.jsonl")]
    return {"command": command, "training_iterations": rows[-1]["iteration"],
            "training_wall_minutes": round(sum(r["iteration_seconds"] for r in rows) / 60, 1)}
def model_stages(model_dir):
    m = json.load(open(f"{model_dir}/manifest.json"))
    return m.get("stages") or [{k: m[k] for k in ("command", "training_iterations", "training_wall_minutes")}]
stages = ((model_stages(from_model) if from_model else []) + ([stage(from_run, from_command)] if from_run else [])
          + [stage(run, command)])
reports = [json.loads(l) for l in open(evals) if l.strip()]
lad = json.load(open(ladder))
print(json.dumps({
    "command": command,
    "revision": trained,
    "shipped_at_revision": revision,
    "training_iterations": sum(s["training_iterations"] for s in stages),
    "training_wall_minutes": round(sum(s["training_wall_minutes"] for s in stages), 1),
    "config": "config.toml (beside this file: the run's resolved config)",
    "evaluation": {r["bot1"]: {k: r[k] for k in ("games", "wins", "draws", "losses", "win_rate", "win_rate_lo95",
                                                 "win_rate_hi95", "avg_score_diff", "se_score_diff", "opened_per_game0")}
                   for r in reports},
    "ladder": {"games_per_pair": lad.get("games_per_pair"), "anchor": lad.get("anchor"),
               "ratings": lad.get("ratings", lad.get("players"))},
} | ({"stages": stages} if len(stages) > 1 else {})
  | ({"exploitability": json.load(open(exploitability))} if exploitability else {})
  | ({"label": label} if label else {})))
PY
build/bin/cfr-export "$run" "$model" --manifest "$extra" ${AVERAGE:+--average "$AVERAGE"} ${VALUE_FROM:+--value-from "$VALUE_FROM"}
