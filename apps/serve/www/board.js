// Drawing a Lost Cities board (play and replay pages). Cards come as {name, color, face, wager}.
const COLOR_NAMES = ["yellow", "blue", "white", "green", "red", "purple", "orange", "cyan"];

function cardLabel(c) { return c.wager ? "W" : String(c.face); }

function cardElement(c, tag = "span") {
  const e = document.createElement(tag);
  e.className = `card c${c.color}`;
  e.textContent = cardLabel(c);
  e.title = `${COLOR_NAMES[c.color] || "color " + c.color} ${c.wager ? "wager" : c.face}`;
  return e;
}

// One row of expeditions: per color its cards in play order and its score.
function renderExpeditions(el, expeditions) {
  el.replaceChildren();
  el.className = "expeditions";
  expeditions.forEach((e, color) => {
    const col = document.createElement("div");
    col.className = `expedition`;
    col.dataset.color = color;
    const score = document.createElement("div");
    score.className = "score";
    score.textContent = e.cards.length ? `${e.score}` : "·";
    col.append(score);
    for (const c of e.cards) col.append(cardElement(c));
    el.append(col);
  });
}

// The discard piles and the deck. onPile(color) / onDeck() make them buttons when given.
function renderPiles(el, view, legalIds, onPile, onDeck) {
  el.replaceChildren();
  el.className = "piles";
  const drawBase = 2 * view.hand_size;
  view.piles.forEach((p, color) => {
    const box = document.createElement("div");
    box.className = "pile";
    const legal = legalIds && legalIds.has(drawBase + 1 + color);
    let top;
    if (p.top) {
      top = cardElement(p.top, "button");
    } else {
      top = document.createElement("button");
      top.className = `card c${color}`;
      top.textContent = "–";
    }
    top.id = `pile-${color}`;
    top.disabled = !legal;
    if (legal) { top.classList.add("legal"); top.onclick = () => onPile(color); }
    box.append(top, document.createElement("br"), `${p.size} card${p.size === 1 ? "" : "s"}`);
    el.append(box);
  });
  const deck = document.createElement("button");
  deck.id = "draw-deck";
  deck.className = "card";
  deck.style.background = "#2d4a6b"; deck.style.color = "white";
  deck.textContent = view.deck;
  deck.title = "draw from the deck";
  const legal = legalIds && legalIds.has(drawBase);
  deck.disabled = !legal;
  if (legal) { deck.classList.add("legal"); deck.onclick = () => onDeck(); }
  const box = document.createElement("div");
  box.className = "pile";
  box.append(deck, document.createElement("br"), "deck");
  el.append(box);
}
