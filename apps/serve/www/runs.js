// The runs page: every run under --runs, refreshed every 5 s. Run names are shown as text and
// linked percent-encoded (any UTF-8 name opens).
"use strict";

function best(b) {
  const parts = [];
  if (typeof b.exploitability === "number") parts.push(`exploitability ${b.exploitability.toFixed(4)} (iteration ${b.iteration})`);
  for (const [k, v] of Object.entries(b)) if (k.startsWith("win_rate_vs_") && typeof v === "number") parts.push(`${k.slice(12)} ${v.toFixed(3)}`);
  return parts.join(", ") || "–";
}

function cell(row, text, cls) {
  const td = row.insertCell();
  if (cls) td.className = cls;
  if (text !== undefined) td.textContent = String(text);
  return td;
}

async function refresh() {
  const err = document.getElementById("error");
  let runs;
  try {
    const r = await fetch("/api/runs");
    runs = await r.json();
    if (!r.ok) throw new Error(runs.error || r.statusText);
    err.textContent = "";
  } catch (e) { err.textContent = `Could not list the runs: ${e.message}`; return; }
  const t = document.getElementById("runs");
  while (t.rows.length > 1) t.deleteRow(1);
  for (const r of runs) {
    const row = t.insertRow();
    row.className = "run";
    const a = document.createElement("a");
    a.href = `/run?name=${encodeURIComponent(r.name)}`;
    a.textContent = r.name;
    cell(row, undefined, "l").append(a);
    cell(row, r.game, "l");
    cell(row, r.algorithm, "l");
    cell(row, `${r.iteration}${r.max_iterations ? " / " + r.max_iterations : ""}`);
    cell(row, r.state, "l state");
    cell(row, best(r.best || {}), "l");
  }
}

refresh();
setInterval(refresh, 5000);
