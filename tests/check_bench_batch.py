#!/usr/bin/env python3
"""check_bench_batch.py OUT_DIR -- COMMAND...

Runs a cfr-bench-batch command with --csv OUT_DIR/batch.csv --json OUT_DIR/batch.json added and
passes iff it exits 0 and its outputs agree with each other and with what was asked: one row per
requested batch size in order, positive times, per-state = per-call / batch, efficiency 1 for the
first batch, min <= median <= max, training columns iff --train, for every measured precision
(fp32, and bf16 where the CPU has it or --precisions asks); a recommended precision that is the
fastest (training step at the largest batch with --train, else forward per state), its speed-ups
over fp32 as the ratios of the times, and a recommended batch in that precision that is the
smallest within 10% of its best time per state, with the scheduler advice for the device."""
import csv, json, os, re, subprocess, sys

args = sys.argv[1:]
sep = args.index("--")
out_dir, cmd = args[0], args[sep + 1:]
os.makedirs(out_dir, exist_ok=True)
csv_path, json_path = os.path.join(out_dir, "batch.csv"), os.path.join(out_dir, "batch.json")
for p in (csv_path, json_path):
    if os.path.exists(p):
        os.remove(p)
proc = subprocess.run(cmd + ["--csv", csv_path, "--json", json_path], capture_output=True, text=True)
print(proc.stdout, proc.stderr)
errors = []
def need(cond, what):
    if not cond:
        errors.append(what)

need(proc.returncode == 0, f"exit code {proc.returncode}")
batches = [int(b) for b in cmd[cmd.index("--batches") + 1].split(",")] if "--batches" in cmd else [1, 4, 16, 64, 256, 1024, 4096]
train = "--train" in cmd
if proc.returncode == 0:
    js = json.load(open(json_path))
    precisions = js["precisions"]
    need(len(precisions) >= 1 and precisions[0] == "fp32" if "--precisions" not in cmd else len(precisions) >= 1,
         f"precisions {precisions}")
    need(set(js["rows_by_precision"]) == set(precisions), "rows_by_precision's keys")
    by = js["rows_by_precision"]
    def score(p):
        return by[p][-1]["train_us_per_step"] if train else min(r["us_per_state"] for r in by[p])
    chosen = min(precisions, key=lambda p: (score(p), precisions.index(p)))
    need(js["recommended_precision"] == chosen, f"recommended precision {js['recommended_precision']}, expected {chosen}")
    need(js["rows"] == by[chosen], "rows are the recommended precision's")
    if len(precisions) > 1:
        need(re.search(rf'^recommended: network\.precision = "{chosen}"', proc.stdout, re.M) is not None,
             "stdout precision recommendation line")
        for p in precisions:
            if p == "fp32" or "fp32" not in precisions:
                continue
            for s, a, b in zip(js["speedup_over_fp32"][p], by["fp32"], by[p]):
                need(abs(s["forward"] - a["us_per_call"] / b["us_per_call"]) <= 1e-9 * s["forward"], f"{p} forward speed-up")
                if train:
                    need(abs(s["train"] - a["train_us_per_step"] / b["train_us_per_step"]) <= 1e-9 * s["train"], f"{p} step speed-up")
    all_rows = [r for p in precisions for r in by[p]]
    for p in precisions:
        need([r["batch"] for r in by[p]] == batches, f"JSON {p} batches {[r['batch'] for r in by[p]]} != {batches}")
        need(by[p][0]["efficiency_vs_first"] == 1.0, f"{p}: first efficiency is not 1")
        for r in by[p]:
            need(abs(r["efficiency_vs_first"] - by[p][0]["us_per_state"] / r["us_per_state"]) < 1e-9 * r["efficiency_vs_first"],
                 f"{p} batch {r['batch']}: efficiency")
    rows = js["rows"]
    for r in all_rows:
        need(r["us_per_call"] > 0, f"batch {r['batch']}: us_per_call {r['us_per_call']}")
        need(abs(r["us_per_state"] - r["us_per_call"] / r["batch"]) <= 1e-9 * r["us_per_call"], f"batch {r['batch']}: per state")
        need(r["min_us_per_call"] <= r["us_per_call"] <= r["max_us_per_call"], f"batch {r['batch']}: min <= median <= max")
        need(("train_us_per_step" in r) == train, f"batch {r['batch']}: training column iff --train")
    best = min(r["us_per_state"] for r in rows)
    expected = next(r["batch"] for r in rows if r["us_per_state"] <= 1.1 * best)
    need(js["recommended_batch"] == expected, f"recommended {js['recommended_batch']}, expected {expected}")
    scheduler = "pooled" if js["device"] == "cuda" else "interleaved"
    need(f'traversal.scheduler = "{scheduler}"' in js["recommendation"], f"recommendation: {js['recommendation']}")
    need(f"max_batch = {expected}" in js["recommendation"], "recommendation's batch limit")
    need(re.search(rf"^recommended: batch {expected} ", proc.stdout, re.M) is not None, "stdout recommendation line")
    table = list(csv.DictReader(open(csv_path)))
    need([r["precision"] for r in table] == [p for p in precisions for _ in batches], "CSV precisions")
    table = [r for r in table if r["precision"] == chosen]
    need([int(r["batch"]) for r in table] == batches, "CSV batches")
    need(("train_us_per_step" in table[0]) == train, "CSV training columns iff --train")
    for c, j in zip(table, rows):
        need(abs(float(c["us_per_call"]) - j["us_per_call"]) <= 1e-4 + 1e-6 * j["us_per_call"], f"CSV/JSON differ at batch {j['batch']}")
print("PASS" if not errors else "FAIL: " + "; ".join(errors))
sys.exit(0 if not errors else 1)
