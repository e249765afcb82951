// Shared by the play and replay pages: colour names, cards and moves in words, and the board.
// Cards come from the server as {name, color, face, wager}. Every string is set with textContent.
"use strict";

// The engine's colour order (docs/lost-cities.md): the standard game's five, then the extras a
// larger rule set may add.
const COLOR_NAMES = ["yellow", "blue", "white", "green", "red", "purple", "orange", "cyan"];

const $ = id => document.getElementById(id);

function colorName(c) { return COLOR_NAMES[c] || `colour ${c}`; }

// "green 5", "red wager": a card as a player says it.
function cardWords(c) { return `${colorName(c.color)} ${c.wager ? "wager" : c.face}`; }

// An element with text (and an optional class): the only way text reaches the page.
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

// A coloured chip with the card in words ("green 5").
function chip(c) {
  const e = el("span", `chip c${c.color}`, cardWords(c));
  e.dataset.card = c.name;
  return e;
}

// A colour's chip without a card ("green").
function colorChip(color) { return el("span", `chip c${color}`, colorName(color)); }

// A card drawn as a card: its face (or W for a wager) big, its colour's name small.
function cardElement(c, tag = "span") {
  const e = el(tag, `card c${c.color}${c.wager ? " wager" : ""}`);
  e.append(el("span", "face", c.wager ? "W" : c.face), el("span", "cname", colorName(c.color)));
  e.title = cardWords(c);
  e.setAttribute("aria-label", cardWords(c));
  e.dataset.card = c.name;
  return e;
}

// A move by id, in words with coloured chips ("play [green 5]"), from the view it is legal in:
// 2·slot plays the hand's slot, 2·slot+1 discards it, 2H draws from the deck, 2H+1+c takes pile c.
function actionNode(view, a, hand) {
  const H = view.hand_size, span = el("span", "move-words");
  hand = hand || view.hand;
  if (a < 2 * H) {
    const c = hand[a >> 1];
    span.append(a % 2 ? "discard " : "play ", c ? chip(c) : `card ${(a >> 1) + 1}`);
  } else if (a === 2 * H) {
    span.append("draw from the deck");
  } else {
    const color = a - 2 * H - 1, top = view.piles[color] && view.piles[color].top;
    span.append("take ", top ? chip(top) : colorChip(color), " from its discard pile");
  }
  return span;
}

// One log entry {who, kind, card, color} in words: "played [green 5]", "drew from the deck".
function logEntryNode(e) {
  const span = el("span", "move");
  span.dataset.kind = e.kind;
  if (e.kind === "play") span.append("played ", chip(e.card));
  else if (e.kind === "discard") span.append("discarded ", chip(e.card));
  else if (e.kind === "take") span.append("took ", e.card ? chip(e.card) : colorChip(e.color), " from the discard pile");
  else if (e.card) span.append("drew ", chip(e.card), " from the deck");
  else span.append("drew from the deck");
  return span;
}

// A row of expeditions, one labelled column per colour: its name, its score, its cards in order.
function renderExpeditions(box, expeditions) {
  box.replaceChildren();
  box.classList.add("expeditions");
  expeditions.forEach((e, color) => {
    const col = el("div", `expedition c${color}-edge`);
    col.dataset.color = color;
    const head = el("div", "exp-head");
    head.append(el("span", `exp-name c${color}-text`, colorName(color)),
                el("span", "score", e.cards.length ? (e.score > 0 ? `+${e.score}` : `${e.score}`) : ""));
    if (e.cards.length && e.score < 0) head.lastChild.classList.add("negative");
    const cards = el("div", "exp-cards");
    for (const c of e.cards) cards.append(cardElement(c));
    if (!e.cards.length) cards.append(el("span", "not-started", "not started"));
    col.append(head, cards);
    box.append(col);
  });
}

// The discard piles (top card, labelled with its colour and size) and the deck. With legalIds,
// the piles and the deck that may be taken now are buttons (onPile(color), onDeck()).
function renderPiles(box, view, legalIds, onPile, onDeck) {
  box.replaceChildren();
  box.classList.add("piles");
  box.classList.toggle("drawing", !!legalIds && legalIds.size > 0);  // untakeable piles fade only then
  const drawBase = 2 * view.hand_size;
  view.piles.forEach((p, color) => {
    const pile = el("div", "pile");
    pile.dataset.color = color;
    const legal = !!legalIds && legalIds.has(drawBase + 1 + color);
    const top = p.top ? cardElement(p.top, "button") : el("button", `card empty c${color}-edge`);
    if (!p.top) top.append(el("span", "cname", "empty"));
    top.id = `pile-${color}`;
    top.disabled = !legal;
    top.title = p.top ? `${colorName(color)} discard pile: ${cardWords(p.top)} on top` : `${colorName(color)} discard pile: empty`;
    if (legal) { top.classList.add("legal"); top.addEventListener("click", () => onPile(color)); }
    if (view.blocked_pile === color) { pile.classList.add("blocked"); top.title += " (discarded this turn: not takeable)"; }
    pile.append(el("div", `pile-name c${color}-text`, colorName(color)), top,
                el("div", "pile-size", `${p.size} card${p.size === 1 ? "" : "s"}`));
    box.append(pile);
  });
  const deck = el("button", "card deck");
  deck.id = "draw-deck";
  deck.append(el("span", "face", view.deck), el("span", "cname", "left"));
  deck.title = "draw from the deck";
  const legal = !!legalIds && legalIds.has(drawBase);
  deck.disabled = !legal;
  if (legal) { deck.classList.add("legal"); deck.addEventListener("click", () => onDeck()); }
  const pile = el("div", "pile deck-pile");
  pile.append(el("div", "pile-name", "deck"), deck, el("div", "pile-size", `${view.deck} card${view.deck === 1 ? "" : "s"}`));
  box.append(pile);
}
