// A run's page: its curves, config and ladder, updated live over a WebSocket. Every string from
// the run (its name, config, the ladder's player names) is shown as text.
"use strict";

const runName = new URLSearchParams(location.search).get("name") || "";
const $ = id => document.getElementById(id);
const charts = {};
let count = 0;

function chart(id, log) {
  return new Chart($(id), {type: "line", data: {labels: [], datasets: []},
    options: {animation: false, maintainAspectRatio: false, parsing: false, normalized: true, elements: {point: {radius: 0}},
              scales: {x: {type: "linear", title: {display: true, text: "iteration"}}, y: {type: log ? "logarithmic" : "linear"}}}});
}

function addPoint(c, label, x, y) {
  if (y === undefined || y === null || !isFinite(y)) return;
  let ds = c.data.datasets.find(d => d.label === label);
  if (!ds) {
    const colors = ["#2d4a6b", "#c0392b", "#27ae60", "#f39c12", "#8e44ad", "#16a085", "#7f8c8d"];
    ds = {label, data: [], borderColor: colors[c.data.datasets.length % colors.length], borderWidth: 1.5};
    c.data.datasets.push(ds);
  }
  ds.data.push({x, y});
}

function addLine(m) {
  const it = m.iteration;
  (m.loss_advantage || []).forEach((v, p) => addPoint(charts.loss, `advantage p${p}`, it, v));
  addPoint(charts.loss, "strategy", it, m.loss_strategy);
  if ("exploitability" in m) { $("eval-title").textContent = "Exploitability"; addPoint(charts.eval, "exploitability", it, m.exploitability); }
  for (const [opp, r] of Object.entries(m.evaluation || {})) addPoint(charts.eval, `win rate vs ${opp}`, it, r.win_rate);
  addPoint(charts.speed, "nodes/s", it, m.nodes_per_second);
  addPoint(charts.phases, "traversal", it, m.traversal_seconds);
  addPoint(charts.phases, "training", it, m.train_seconds);
  addPoint(charts.phases, "evaluation", it, m.eval_seconds);
  $("run-iteration").textContent = it;
  count += 1;
}

function status(s) {
  $("run-state").textContent = s.state;
  $("run-eta").textContent = s.eta_seconds === null || s.eta_seconds === undefined ? "–" : `${Math.round(s.eta_seconds)} s`;
}

function update() { for (const c of Object.values(charts)) c.update(); $("points").textContent = count; }

function fixed(x) { return typeof x === "number" ? x.toFixed(0) : "–"; }

function ladder(l) {
  const t = $("ladder");
  t.replaceChildren();
  const head = t.insertRow();
  for (const [text, cls] of [["player", "l"], ["Elo", ""], ["95% interval", ""]]) {
    const th = document.createElement("th");
    th.textContent = text;
    th.className = cls;
    head.append(th);
  }
  for (const x of l.ratings) {
    const row = t.insertRow();
    const cells = [String(x.name), fixed(x.elo), `${fixed(x.elo_lo95)} … ${fixed(x.elo_hi95)}`];
    cells.forEach((text, i) => { const td = row.insertCell(); td.textContent = text; if (i === 0) td.className = "l"; });
  }
  $("ladder-panel").hidden = false;
}

async function main() {
  document.title = `${runName} — cfr-serve`;
  const r = await fetch(`/api/runs/${encodeURIComponent(runName)}`);
  let d;
  try { d = await r.json(); } catch (e) { d = {error: `${r.status} ${r.statusText}`}; }
  if (!r.ok) { $("run-name").textContent = d.error || r.statusText; $("live").textContent = ""; return; }
  $("run-name").textContent = d.name; $("run-game").textContent = d.game; $("run-algorithm").textContent = d.algorithm;
  $("config").textContent = d.config;
  charts.loss = chart("chart-loss", true); charts.eval = chart("chart-eval", false);
  charts.speed = chart("chart-speed", false); charts.phases = chart("chart-phases", false);
  // The run's curve as the server keeps it (at most a few thousand points, the evaluations all in),
  // then every line as it is written.
  d.metrics.forEach(addLine); status(d); update();
  if (d.ladder && Array.isArray(d.ladder.ratings)) ladder(d.ladder);
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/runs/${encodeURIComponent(runName)}/live?from=${d.lines}`);
  ws.onopen = () => { $("live").textContent = "live"; };
  ws.onclose = () => { $("live").textContent = "disconnected"; };
  ws.onmessage = ev => { const msg = JSON.parse(ev.data); msg.lines.forEach(addLine); status(msg.status); update(); };
}

main();
