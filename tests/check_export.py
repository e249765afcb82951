#!/usr/bin/env python3
"""check_export.py CFR_EXPORT CFR_EVAL RUN_DIR OUT_DIR [--kuhn]: cfr-export writes RUN_DIR's
playing network alone into OUT_DIR; passes iff cfr-export exits 0, OUT_DIR/meta.json lists exactly
one network (the run's playing one, its widths kept), manifest.json holds the export's fields and
the --manifest file's, nets.pt is smaller than the run's, and cfr-eval reports the same results
for the model as for the run (Lost Cities: the same 20 games against random, every field but the
timings; --kuhn: the same exact exploitability)."""
import json, os, subprocess, sys

export, evaluate, run_dir, out = sys.argv[1:5]
kuhn = "--kuhn" in sys.argv
problems = []
extra = out + ".manifest-extra.json"
with open(extra, "w") as f:
    json.dump({"command": "test", "wall_minutes": 1.5}, f)
r = subprocess.run([export, run_dir, out, "--manifest", extra], capture_output=True, text=True)
print(r.stdout, r.stderr, end="")
if r.returncode != 0:
    problems.append(f"cfr-export exited {r.returncode}")
else:
    meta = json.load(open(f"{out}/meta.json"))
    nets = meta.get("networks", [])
    if len(nets) != 1:
        problems.append(f"meta.json lists {len(nets)} networks, not 1")
    latest = open(f"{run_dir}/checkpoints/latest").read().strip()
    run_meta = json.load(open(f"{run_dir}/checkpoints/{latest}/meta.json"))
    run_nets = {n["name"]: n for n in run_meta["networks"]}
    if nets and (nets[0]["name"] not in ("policy", "strategy") or nets[0] != run_nets.get(nets[0]["name"])):
        problems.append(f"exported network {nets[0]} is not the run's playing network ({list(run_nets)})")
    m = json.load(open(f"{out}/manifest.json"))
    for k in ("exported_from", "iteration", "algorithm", "network", "parameters", "nets_pt_bytes", "command", "wall_minutes"):
        if k not in m:
            problems.append(f"manifest.json has no {k}")
    a, b = os.path.getsize(f"{out}/nets.pt"), os.path.getsize(f"{run_dir}/checkpoints/{latest}/nets.pt")
    if not a < b:
        problems.append(f"the model's nets.pt ({a} bytes) is not smaller than the run's ({b})")
    args = [] if kuhn else ["--opponent", "random", "--games", "20", "--seed", "4"]
    outs = []
    for src in (run_dir, out):
        e = subprocess.run([evaluate, src, "--json", *args], capture_output=True, text=True)
        if e.returncode != 0:
            problems.append(f"cfr-eval {src} exited {e.returncode}: {e.stderr.strip()}")
        line = json.loads(e.stdout.strip().splitlines()[-1]) if e.stdout.strip() else {}
        # the names ("checkpoint:SRC") and the checkpoint's path differ; the numbers must not
        outs.append({k: v for k, v in line.items() if k not in ("seconds", "games_per_second", "bot0", "checkpoint")})
    print("run:  ", outs[0])
    print("model:", outs[1])
    key = "exploitability" if kuhn else "wins"
    if key not in outs[0] or outs[0] != outs[1]:
        problems.append("the model's evaluation differs from the run's (or has no " + key + ")")
for p in problems:
    print(p)
print("PASS" if not problems else "FAIL")
sys.exit(0 if not problems else 1)
