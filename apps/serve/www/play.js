// The play page: a game of Lost Cities against any of the server's players (docs/serve.md).
// State for the tests: body[data-state] is setup, waiting, your-card, your-draw or over, and
// body[data-moves] the game's move count.
"use strict";

let players = null;     // GET /api/players
let view = null;        // the game's view (null: no game)
let selected = null;    // the selected hand slot
let busy = false;       // a request is in flight
let hint = null;        // {moves, data}: the hint for the position after `moves` moves
let leaving = false;    // the person confirmed leaving: no second question

async function api(method, path, body) {
  // Every POST says JSON (the server refuses other types), also one without a body (abandon).
  const init = {method};
  if (method === "POST") init.headers = {"Content-Type": "application/json"};
  if (body !== undefined) init.body = JSON.stringify(body);
  const r = await fetch(path, init);
  let j = null;
  try { j = await r.json(); } catch (e) { /* not JSON */ }
  if (!r.ok) throw new Error((j && j.error) || `${r.status} ${r.statusText}`);
  return j;
}

const live = () => view !== null && !view.over;
const opponentLabel = () => (view && (view.opponent_label || view.opponent)) || "the opponent";
const entry = id => (players ? players.players.find(p => p.id === id) : null);

// ---- the players list -------------------------------------------------------------------------

const KINDS = [["model", "Shipped agents"], ["run", "Trained runs"], ["bot", "Rule bots"], ["extra", "Other programs"]];

async function loadPlayers() {
  players = await api("GET", "/api/players");
  const sel = $("opponent");
  sel.replaceChildren();
  for (const [kind, title] of KINDS) {
    const list = players.players.filter(p => p.kind === kind);
    if (!list.length) continue;
    const group = document.createElement("optgroup");
    group.label = title;
    for (const p of list) {
      const o = el("option", null, p.label);
      o.value = p.id;
      if (p.id === players.default) o.selected = true;
      group.append(o);
    }
    sel.append(group);
  }
  const s = players.search || {};
  for (const [key, input] of [["k", $("search-k")], ["n", $("search-n")]]) {
    const lim = s.limits && s.limits[key];
    if (lim) { input.min = lim[0]; input.max = lim[1]; }
    input.value = (s.default && s.default[key]) || (lim ? lim[0] : 1);
  }
  searchControls();
}

function searchControls() {
  const e = entry($("opponent").value);
  const network = !!(e && e.network);
  $("search-box").classList.toggle("off", !network);
  $("search").disabled = !network;
  $("search-k").disabled = $("search-n").disabled = !network || !$("search").checked;
}

// ---- the in-page confirmation -----------------------------------------------------------------

let confirmResolve = null;

function confirmAbandon(text) {
  $("confirm-text").textContent = text;
  $("confirm").showModal();
  $("confirm-no").focus();
  return new Promise(resolve => { confirmResolve = resolve; });
}

function confirmDone(ok) {
  const resolve = confirmResolve;
  confirmResolve = null;
  if ($("confirm").open) $("confirm").close();
  if (resolve) resolve(ok);
}

// Ends the game in progress on the server (it is forgotten there); errors are not the person's concern.
async function abandonGame() {
  if (!live()) return;
  const id = view.id;
  view = null; selected = null; hint = null;
  history.replaceState(null, "", location.pathname + location.search);
  try { await api("POST", `/api/games/${encodeURIComponent(id)}/abandon`); } catch (e) { /* gone already */ }
}

// ---- drawing ----------------------------------------------------------------------------------

function renderLog(v) {
  const ol = $("log");
  ol.replaceChildren();
  let li = null;
  for (const e of v.log || []) {
    if (!li || li.dataset.who !== e.who || e.kind === "play" || e.kind === "discard") {
      li = el("li", `turn ${e.who}`);
      li.dataset.who = e.who;
      li.append(el("span", "who", e.who === "you" ? "You" : "Opponent"), " ");
      ol.append(li);
    } else {
      li.append(", then ");
    }
    li.append(logEntryNode(e));
  }
  if (!ol.children.length) ol.append(el("li", "none", "No moves yet."));
  ol.scrollTop = ol.scrollHeight;
  // The opponent's moves since the person's last one, under the status line.
  const recent = [];
  for (const e of (v.log || []).slice().reverse()) { if (e.who === "you") break; recent.unshift(e); }
  const box = $("last-moves");
  box.replaceChildren();
  if (recent.length) {
    box.append(el("span", "who", opponentLabel()), " ");
    recent.forEach((e, i) => { if (i) box.append(", then "); box.append(logEntryNode(e)); });
  }
}

function renderHint(v, legal) {
  const shown = hint !== null && hint.moves === v.moves && v.to_move === "you" && !busy;
  $("hint").hidden = !shown;
  document.body.dataset.hint = shown ? "shown" : "";
  const can = players && players.hint && v.to_move === "you" && !v.over && !busy;
  $("btn-hint").disabled = !can;
  $("btn-hint").title = players && !players.hint ? "This server has no hint agent" : "The agent's probabilities over your legal moves (key H)";
  if (!shown) return;
  $("hint-agent").textContent = hint.data.agent;
  const ol = $("hint-moves");
  ol.replaceChildren();
  const best = Math.max(...hint.data.moves.map(m => m.p));
  for (const m of hint.data.moves) {
    const li = el("li", m.p === best ? "best" : "");
    li.dataset.action = m.id;
    li.dataset.p = m.p;
    const bar = el("span", "bar"), fill = el("span", "fill");
    fill.style.width = `${Math.max(0, Math.min(1, m.p)) * 100}%`;  // CSSOM: allowed under style-src 'self'
    bar.append(fill);
    li.append(legal.has(m.id) ? actionNode(v, m.id) : el("span", "move-words", m.name), bar,
              el("span", "pct", `${(m.p * 100).toFixed(m.p < 0.1 ? 1 : 0)}%`));
    ol.append(li);
    if (m.p === best) markHinted(v, m.id);
  }
}

function markHinted(v, a) {
  const H = v.hand_size;
  const target = a < 2 * H ? document.querySelector(`#hand button[data-slot="${a >> 1}"]`)
    : a === 2 * H ? $("draw-deck") : $(`pile-${a - 2 * H - 1}`);
  if (target) target.classList.add("hinted");
}

function render() {
  const v = view;
  $("game-info").hidden = !v;
  if (!v) {
    for (const id of ["opp-expeditions", "my-expeditions", "piles", "hand", "log", "last-moves"]) $(id).replaceChildren();
    $("result").hidden = true;
    $("hint").hidden = true;
    $("btn-play").disabled = $("btn-discard").disabled = $("btn-hint").disabled = true;
    $("status").textContent = "Choose an opponent and start a game.";
    document.body.dataset.state = "setup";
    return;
  }
  const label = opponentLabel();
  $("game-id").textContent = v.id;
  $("opp-label").textContent = label;
  $("game-seed").textContent = v.seed === undefined ? "–" : v.seed;
  $("my-seat").textContent = v.seat === 0 ? "first" : "second";
  $("opp-name").textContent = label;
  $("log-opp").textContent = label;
  $("opp-hand").textContent = v.opponent_hand_size;
  $("opp-total").textContent = v.totals.opponent;
  $("my-total").textContent = v.totals.you;
  renderExpeditions($("opp-expeditions"), v.expeditions.opponent);
  renderExpeditions($("my-expeditions"), v.expeditions.you);
  const mine = v.to_move === "you" && !busy;
  const legal = new Set(mine ? v.legal.map(a => a.id) : []);
  renderPiles($("piles"), v, v.phase === "draw" ? legal : null, c => move(2 * v.hand_size + 1 + c), () => move(2 * v.hand_size));
  const cardPhase = mine && v.phase === "card";
  if (selected !== null && (!cardPhase || selected >= v.hand.length)) selected = null;
  const hand = $("hand");
  hand.replaceChildren();
  v.hand.forEach((c, slot) => {
    const b = cardElement(c, "button");
    b.dataset.slot = slot;
    b.disabled = !(cardPhase && (legal.has(2 * slot) || legal.has(2 * slot + 1)));
    if (cardPhase && legal.has(2 * slot)) b.classList.add("legal");
    if (selected === slot) b.classList.add("selected");
    b.append(el("span", "slot-key", slot + 1));
    b.addEventListener("click", () => select(slot));
    hand.append(b);
  });
  hand.classList.toggle("idle", !cardPhase);
  if (selected !== null) {
    const color = v.hand[selected].color;
    for (const q of [`#my-expeditions .expedition[data-color="${color}"]`, `#piles .pile[data-color="${color}"]`]) {
      const t = document.querySelector(q);
      if (t) t.classList.add("target");
    }
  }
  const sel = selected === null ? null : v.hand[selected];
  $("btn-play").disabled = sel === null || !legal.has(2 * selected);
  $("btn-discard").disabled = sel === null || !legal.has(2 * selected + 1);
  $("btn-play").textContent = sel ? `Play ${cardWords(sel)}` : "Play";
  $("btn-discard").textContent = sel ? `Discard ${cardWords(sel)}` : "Discard";
  renderLog(v);
  renderHint(v, legal);
  let state, text;
  if (v.over) {
    state = "over";
    const r = v.result;
    text = `Game over: ${r.outcome === "win" ? "you win" : r.outcome === "loss" ? "you lose" : "a draw"}, ${r.you} – ${r.opponent}`;
    $("result").hidden = false;
    $("outcome").textContent = text;
    $("final-you").textContent = r.you;
    $("final-opponent").textContent = r.opponent;
    $("final-opp-name").textContent = label;
    renderBreakdown(r, label);
    $("transcript").href = `/api/games/${encodeURIComponent(v.id)}/transcript`;
  } else if (busy || v.to_move !== "you") {
    state = "waiting"; text = `${label} is thinking…`;
  } else if (v.phase === "card") {
    state = "your-card";
    text = sel ? `Play or discard ${cardWords(sel)} (P / D), or pick another card` : "Your turn: pick a card (1–8), then play (P) or discard (D) it";
  } else {
    state = "your-draw"; text = "Now draw: the deck (0 or Enter) or the top of a discard pile";
  }
  $("result").hidden = !v.over;
  $("status").textContent = text;
  document.body.dataset.moves = v.moves;
  document.body.dataset.state = state;
}

function renderBreakdown(r, label) {
  const t = $("breakdown");
  t.replaceChildren();
  const row = (cells, head) => {
    const tr = document.createElement("tr");
    cells.forEach((c, i) => {
      const td = el(head ? "th" : "td", i === 0 ? "l" : "");
      if (c instanceof Node) td.append(c); else td.textContent = c;
      tr.append(td);
    });
    t.append(tr);
  };
  row(["expedition", "you", label], true);
  for (const b of r.breakdown) row([colorChip(b.color), b.you_cards ? b.you : "–", b.opponent_cards ? b.opponent : "–"]);
  row(["total", r.you, r.opponent], true);
}

// ---- moves ------------------------------------------------------------------------------------

function select(slot) {
  if (!view || view.to_move !== "you" || view.phase !== "card" || busy || slot >= view.hand.length) return;
  selected = slot;
  render();
}

async function move(action) {
  if (busy || !live()) return;
  busy = true;
  document.body.dataset.state = "waiting";
  $("error").textContent = "";
  try {
    view = await api("POST", `/api/games/${encodeURIComponent(view.id)}/move`, {action});
    selected = null;
  } catch (e) { $("error").textContent = e.message; }
  busy = false;
  render();
}

function tryMove(action) {
  if (view && !busy && view.to_move === "you" && view.legal.some(a => a.id === action)) move(action);
}

async function showHint() {
  if (!live() || busy || view.to_move !== "you" || !players || !players.hint) return;
  const at = view.moves;
  $("error").textContent = "";
  try {
    const data = await api("GET", `/api/games/${encodeURIComponent(view.id)}/hint`);
    if (view && view.moves === at) { hint = {moves: at, data}; render(); }
  } catch (e) { $("error").textContent = e.message; }
}

async function newGame() {
  if (live() && !(await confirmAbandon("Start a new game? The game in progress will be abandoned."))) return;
  await abandonGame();
  render();
  $("error").textContent = "";
  const body = {opponent: $("opponent").value, seat: Number($("seat").value)};
  const seed = $("seed").value.trim();
  if (seed !== "") {
    if (!/^[0-9]+$/.test(seed)) { $("error").textContent = "The seed is a whole number (or empty for a random deal)."; return; }
    body.seed = Number(seed);
  }
  const e = entry(body.opponent);
  if (e && e.network && $("search").checked) body.search = {k: Number($("search-k").value), n: Number($("search-n").value)};
  busy = true;
  document.body.dataset.state = "waiting";
  $("status").textContent = "Dealing…";
  try {
    view = await api("POST", "/api/games", body);
    selected = null; hint = null;
    history.replaceState(null, "", `#${view.id}`);
    if (document.activeElement) document.activeElement.blur();  // the keys now go to the board
  } catch (err) { $("error").textContent = err.message; }
  busy = false;
  render();
}

// ---- keys -------------------------------------------------------------------------------------

function onKey(e) {
  if (e.ctrlKey || e.altKey || e.metaKey || $("confirm").open) return;
  if (e.target.closest && e.target.closest("input, select, textarea")) return;
  if (e.key === "Enter" && e.target.closest && e.target.closest("button:not(.card), a")) return;  // Enter presses it
  if (!live()) return;
  const v = view, H = v.hand_size, key = e.key.toLowerCase();
  const digit = /^Digit[0-9]$/.test(e.code) ? Number(e.code.slice(5)) : /^Numpad[0-9]$/.test(e.code) ? Number(e.code.slice(6)) : null;
  let handled = true;
  if (e.shiftKey && digit !== null && digit >= 1 && digit <= v.piles.length) tryMove(2 * H + digit);
  else if (!e.shiftKey && digit !== null && digit >= 1) select(digit - 1);
  else if (digit === 0 || e.key === "Enter") tryMove(2 * H);
  else if (key === "p") { if (selected !== null) tryMove(2 * selected); }
  else if (key === "d") { if (selected !== null) tryMove(2 * selected + 1); }
  else if (key === "h") showHint();
  else if (e.key === "Escape") { selected = null; render(); }
  else {
    const color = v.piles.findIndex((_, c) => colorName(c)[0] === key &&
                                            COLOR_NAMES.slice(0, v.piles.length).filter(n => n[0] === key).length === 1);
    if (color >= 0) tryMove(2 * H + 1 + color); else handled = false;
  }
  if (handled) e.preventDefault();
}

// ---- wiring -----------------------------------------------------------------------------------

$("opponent").addEventListener("change", searchControls);
$("search").addEventListener("change", searchControls);
$("new-game").addEventListener("click", newGame);
$("btn-play").addEventListener("click", () => { if (selected !== null) tryMove(2 * selected); });
$("btn-discard").addEventListener("click", () => { if (selected !== null) tryMove(2 * selected + 1); });
$("btn-hint").addEventListener("click", showHint);
$("confirm-yes").addEventListener("click", () => confirmDone(true));
$("confirm-no").addEventListener("click", () => confirmDone(false));
$("confirm").addEventListener("close", () => confirmDone(false));  // Escape closes it too
document.addEventListener("keydown", onKey);
// Leaving through the page's own links asks in the page; closing or reloading the tab, the browser's way.
for (const a of document.querySelectorAll("header a")) {
  a.addEventListener("click", async e => {
    if (!live()) return;
    e.preventDefault();
    if (!(await confirmAbandon("Leave this page? The game in progress will be abandoned."))) return;
    await abandonGame();
    leaving = true;
    location.href = a.href;
  });
}
window.addEventListener("beforeunload", e => {
  if (live() && !leaving) { e.preventDefault(); e.returnValue = ""; }
});

loadPlayers().then(async () => {
  const id = location.hash.slice(1);
  if (id) {
    try { view = await api("GET", `/api/games/${encodeURIComponent(id)}`); } catch (e) { history.replaceState(null, "", location.pathname); }
  }
  render();
}).catch(e => { $("error").textContent = `Could not load the players: ${e.message}`; });
