// The replay page: a transcript file (plain or gzip) uploaded, stepped through move by move.
"use strict";

let bytes = null, frames = [], at = 0, names = ["seat 0", "seat 1"];

async function load(game) {
  $("error").textContent = "";
  let d;
  try {
    const r = await fetch(`/api/replay?game=${game}`, {method: "POST", headers: {"Content-Type": "application/octet-stream"}, body: bytes});
    try { d = await r.json(); } catch (e) { d = {error: `${r.status} ${r.statusText}`}; }
    if (!r.ok) throw new Error(d.error || r.statusText);
  } catch (e) { $("error").textContent = e.message; return; }
  const sel = $("game-select");
  sel.replaceChildren();
  d.games.forEach((g, i) => {
    const o = el("option", null, `game ${g.game}: ${g.bot0 || "?"} vs ${g.bot1 || "?"} (${g.actions} moves)`);
    o.value = i;
    if (i === d.index) o.selected = true;
    sel.append(o);
  });
  const g = d.games[d.index] || {};
  names = [g.bot0 ? `seat 0 (${g.bot0})` : "seat 0", g.bot1 ? `seat 1 (${g.bot1})` : "seat 1"];
  frames = d.frames; at = 0; show();
}

function show() {
  const f = frames[at], v = f.view;
  $("step").textContent = `step ${at} / ${frames.length - 1}`;
  const mv = $("move-name");
  mv.replaceChildren();
  if (at === 0) mv.textContent = "the deal";
  else {
    // The move in words, read in the position it was made in (the previous frame).
    const before = frames[at - 1].view;
    mv.append(`${names[f.player]}: `, actionNode(before, f.action, before.hands[f.player]));
  }
  for (const p of [0, 1]) {
    $(`name-${p}`).textContent = names[p];
    $(`total-${p}`).textContent = v.totals[p];
    renderExpeditions($(`exp-${p}`), v.expeditions[p]);
    $(`hand-${p}`).replaceChildren(...v.hands[p].map(c => cardElement(c)));
  }
  renderPiles($("piles"), v, null);
  document.body.dataset.step = at;
}

$("file").addEventListener("change", async () => { bytes = await $("file").files[0].arrayBuffer(); load(0); });
$("game-select").addEventListener("change", () => load(Number($("game-select").value)));
$("first").addEventListener("click", () => { if (frames.length) { at = 0; show(); } });
$("prev").addEventListener("click", () => { if (at > 0) { at -= 1; show(); } });
$("next").addEventListener("click", () => { if (at + 1 < frames.length) { at += 1; show(); } });
$("last").addEventListener("click", () => { if (frames.length) { at = frames.length - 1; show(); } });
document.addEventListener("keydown", e => {
  if (e.target.closest && e.target.closest("input, select")) return;
  if (e.key === "ArrowRight") $("next").click();
  if (e.key === "ArrowLeft") $("prev").click();
});
