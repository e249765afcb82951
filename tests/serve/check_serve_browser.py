#!/usr/bin/python3
"""check_serve_browser.py BIN_DIR SOURCE_DIR WORK_DIR CASE [SCREENSHOT.png]: cfr-serve's pages in a
real browser (headless Chromium driven by Selenium; Debian's chromium, chromium-driver and
python3-selenium, hence /usr/bin/python3). Prints "ok: CASE ..." and exits 0, or "FAIL: ..." and 1.

  play       a whole game against heuristic_balanced through clicks; the final score on the page equals
             the server's transcript, which cfr-arena --replay --check-bots accepts; the move log says
             both sides' moves in words, one per transcript action, of the transcript's kinds
  play_keys  keyboard play (1-8 select, D discard, P play, 0/Enter the deck, a colour's letter or
             Shift+digit its pile), each move seen in the log; starting a new game or leaving
             mid-game asks in the page: cancelling keeps the game, confirming abandons it (404)
  hint       the hint shows the agent's probabilities over exactly the legal moves, summing to 1,
             the best highlighted, in both phases
  runs_text  a run named "run é 1" (listed, linked, opened) whose ladder names a player
             <img src=x onerror=alert(1)> and whose config holds markup: all shown as text
  watch   a run page open while cfr-run writes metrics: a new point arrives over the WebSocket
  replay     the golden transcript (gzip) uploaded; step forward, back, to the end: the totals shown
             equal the file's
Every case also checks that the server sends a Content-Security-Policy without 'unsafe-inline' and
that the browser's console logged no Content Security Policy violation.
"""
import gzip
import json
import os
import random
import re
import subprocess
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_helpers import Server, fail  # noqa: E402

bin_dir, src, work, case = sys.argv[1:5]
shot = sys.argv[5] if len(sys.argv) > 5 else None
work = os.path.join(work, "serve_browser_" + case)
os.makedirs(work, exist_ok=True)


def browser():
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1300,1100", "--disable-gpu"):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=o)


def wait(d, cond, what, timeout=30):
    try:
        return WebDriverWait(d, timeout, poll_frequency=0.05).until(lambda _: cond())
    except TimeoutException:
        fail(case, f"timed out waiting for {what}")




# ---- shared checks --------------------------------------------------------------------------------

console = []  # the browser's console messages so far (get_log empties the browser's buffer)


def check_console(d):
    """No Content Security Policy violation logged in the browser's console (an inline script or
    style, or an inline handler, would be refused and logged)."""
    console.extend(d.get_log("browser"))
    bad = [m["message"] for m in console if "Content Security Policy" in m["message"]]
    if bad:
        fail(case, f"{len(bad)} Content Security Policy violation(s) in the console, the first: {bad[0]}")


def check_csp_header(server):
    """The pages come with a Content-Security-Policy that allows no inline script or style, so that
    check_console means something."""
    with urllib.request.urlopen(server.url + "/play", timeout=30) as r:
        csp = r.headers.get("Content-Security-Policy") or ""
    if "script-src 'self'" not in csp or "style-src 'self'" not in csp or "unsafe-inline" in csp:
        fail(case, f"/play's Content-Security-Policy is {csp!r}")


def body(d):
    return d.find_element(By.TAG_NAME, "body")


def wait_state(d, states, what):
    b = body(d)
    return wait(d, lambda: b.get_attribute("data-state") if b.get_attribute("data-state") in states else None, what)


def press(d, *keys, shift=False):
    chain = ActionChains(d)
    if shift:
        chain.key_down(Keys.SHIFT)
    chain.send_keys(*keys)
    if shift:
        chain.key_up(Keys.SHIFT)
    chain.perform()


def start_game(d, server, opponent, seed, seat="0"):
    d.get(server.url + "/play")
    wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, "#opponent option")) > 0, "the opponents list")
    if opponent:
        Select(d.find_element(By.ID, "opponent")).select_by_value(opponent)
    Select(d.find_element(By.ID, "seat")).select_by_value(seat)
    d.find_element(By.ID, "seed").send_keys(seed)
    d.find_element(By.ID, "new-game").click()
    wait_state(d, ("your-card", "your-draw", "over"), "the game to start")
    return d.find_element(By.ID, "game-id").text


def game_view(server, game_id):
    status, v = server.call("GET", f"/api/games/{game_id}")
    if status != 200:
        fail(case, f"GET /api/games/{game_id}: {status} {v}")
    return v


COLOR_NAMES = ["yellow", "blue", "white", "green", "red"]  # the engine's colour order (board.js)
COLOR = f"(?:{'|'.join(COLOR_NAMES)})"
CARD = rf"{COLOR} (?:wager|[0-9]+)"
WORDS = {"play": rf"played {CARD}", "discard": rf"discarded {CARD}",
         "draw_deck": rf"drew (?:{CARD} )?from the deck", "take": rf"took {CARD} from the discard pile"}
LOG_JS = ("return [...document.querySelectorAll('#log li')].flatMap(li => [...li.querySelectorAll('.move')]"
          ".map(m => [li.dataset.who, m.dataset.kind, m.textContent]))")


def page_log(d):
    """The move log as shown: [(who, kind, words)], every entry's words checked."""
    log = [tuple(x) for x in d.execute_script(LOG_JS)]
    for who, kind, words in log:
        if who not in ("you", "opponent") or kind not in WORDS or not re.fullmatch(WORDS[kind], words):
            fail(case, f"a log entry not in words: {who!r} {kind!r} {words!r}")
    return log


# ---- the cases ------------------------------------------------------------------------------------

def play(d, server):
    game_id = start_game(d, server, "heuristic_balanced", "17")
    b = body(d)
    _, players = server.call("GET", "/api/players")
    label = next(p["label"] for p in players["players"] if p["id"] == "heuristic_balanced")
    if d.find_element(By.ID, "game-seed").text != "17" or d.find_element(By.ID, "opp-label").text != label:
        fail(case, f"the page shows seed {d.find_element(By.ID, 'game-seed').text!r} against "
                   f"{d.find_element(By.ID, 'opp-label').text!r} (expected 17, {label!r})")
    rng = random.Random(3)
    clicks = 0
    shot_taken = False
    while True:
        state = wait_state(d, ("your-card", "your-draw", "over"), "the person's turn or the end")
        if state == "over":
            break
        moves = b.get_attribute("data-moves")
        if state == "your-card":
            cards = [c for c in d.find_elements(By.CSS_SELECTOR, "#hand button.card") if c.is_enabled()]
            if not cards:
                fail(case, "no usable card in the card phase")
            cards[rng.randrange(len(cards))].click()
            play_btn, discard_btn = d.find_element(By.ID, "btn-play"), d.find_element(By.ID, "btn-discard")
            (play_btn if play_btn.is_enabled() and rng.random() < 0.5 else discard_btn).click()
        else:
            if shot and not shot_taken and int(moves) > 40:
                d.save_screenshot(shot)
                shot_taken = True
            # Illegal moves are refused: a disabled pile does nothing; the deck is always legal here.
            d.find_element(By.ID, "draw-deck").click()
        clicks += 1
        wait(d, lambda: b.get_attribute("data-moves") != moves, "the move to be applied")
    you = int(d.find_element(By.ID, "final-you").text)
    opp = int(d.find_element(By.ID, "final-opponent").text)
    if d.find_element(By.ID, "game-id").text != game_id:
        fail(case, "the game id changed during the game")
    view = game_view(server, game_id)
    line = urllib.request.urlopen(f"{server.url}/api/games/{game_id}/transcript").read().decode()
    t = json.loads(line)
    if t["totals"] != [you, opp] or not t["terminal"]:
        fail(case, f"page shows {you}–{opp}, the transcript says {t['totals']} (terminal {t['terminal']})")
    # The log: one entry per action, both sides', each of the kind its action is, in words.
    h = view["hand_size"]
    expected = [("you" if (i // 2) % 2 == view["seat"] else "opponent",
                 "draw_deck" if a == 2 * h else "take" if a > 2 * h else "discard" if a % 2 else "play")
                for i, a in enumerate(t["actions"])]
    log = page_log(d)
    if [(who, kind) for who, kind, _ in log] != expected:
        fail(case, f"the move log ({len(log)} entries) differs from the transcript's {len(expected)} actions")
    path = os.path.join(work, "game.jsonl")
    open(path, "w").write(line)
    r = subprocess.run([os.path.join(bin_dir, "cfr-arena"), "--replay", path, "--check-bots", "--quiet"], capture_output=True, text=True)
    if r.returncode != 0 or "all consistent" not in r.stderr:
        fail(case, f"cfr-arena --replay rejects the transcript: {r.stderr}")
    return (f"{clicks} clicks, final {you}–{opp}, the log's {len(log)} moves in words as the transcript's, "
            "transcript replayed with the bot's moves checked")


def play_keys(d, server):
    game_id = start_game(d, server, "heuristic_balanced", "5")
    b = body(d)
    used = set()
    wanted = {"select", "play", "discard", "deck by 0", "deck by Enter", "pile by letter", "pile by Shift+digit"}
    for _ in range(60):
        if used >= wanted:
            break
        wait_state(d, ("your-card",), "the card phase")
        v = game_view(server, game_id)
        h, legal = v["hand_size"], {a["id"] for a in v["legal"]}
        plays = sorted(a for a in legal if a < 2 * h and a % 2 == 0)
        kind = "play" if plays and "play" not in used else "discard"
        slot = plays[0] // 2 if kind == "play" else len(v["hand"]) - 1
        press(d, str(slot + 1))
        wait(d, lambda: "selected" in d.find_element(By.CSS_SELECTOR, f'#hand button[data-slot="{slot}"]').get_attribute("class"),
             f"key {slot + 1} to select the card")
        used.add("select")
        press(d, kind[0])
        wait_state(d, ("your-draw",), f"key {kind[0].upper()} to {kind}")
        used.add(kind)
        after = game_view(server, game_id)
        last = after["log"][-1]
        if (last["who"], last["kind"], last["card"]["name"]) != ("you", kind, v["hand"][slot]["name"]):
            fail(case, f"key {kind[0].upper()} on slot {slot + 1} ({v['hand'][slot]['name']}): the log says {last}")
        legal = {a["id"] for a in after["legal"]}
        piles = sorted(a - 2 * h - 1 for a in legal if a > 2 * h)
        if piles and "pile by letter" not in used:
            how, color = "pile by letter", piles[0]
            press(d, COLOR_NAMES[color][0])
        elif piles and "pile by Shift+digit" not in used:
            how, color = "pile by Shift+digit", piles[-1]
            press(d, str(color + 1), shift=True)
        elif "deck by 0" not in used:
            how, color = "deck by 0", None
            press(d, "0")
        else:
            how, color = "deck by Enter", None
            press(d, Keys.ENTER)
        wait(d, lambda: int(b.get_attribute("data-moves")) > after["moves"], f"the {how} key's draw")
        mine = game_view(server, game_id)["log"][after["moves"]]
        if mine["who"] != "you" or mine["kind"] != ("take" if color is not None else "draw_deck") or \
                (color is not None and mine["color"] != color):
            fail(case, f"{how} (colour {color}): the log says {mine}")
        used.add(how)
    if used < wanted:
        fail(case, f"keys never exercised: {sorted(wanted - used)}")
    keys_msg = f"{len(wanted)} kinds of key moves"
    # Starting a new game mid-game asks first; cancelling keeps the game.
    wait_state(d, ("your-card", "your-draw"), "the person's turn")
    dialog_open = lambda: d.execute_script("return document.getElementById('confirm').open")  # noqa: E731
    d.find_element(By.ID, "new-game").click()
    wait(d, dialog_open, "the confirmation before abandoning a game")
    d.find_element(By.ID, "confirm-no").click()
    wait(d, lambda: not dialog_open(), "the confirmation to close")
    if d.find_element(By.ID, "game-id").text != game_id or game_view(server, game_id)["over"]:
        fail(case, "cancelling the confirmation did not keep the game")
    # So does leaving through the page's links (Escape cancels too).
    d.find_element(By.LINK_TEXT, "Runs").click()
    wait(d, dialog_open, "the confirmation before leaving mid-game")
    press(d, Keys.ESCAPE)
    wait(d, lambda: not dialog_open(), "Escape to close the confirmation")
    if not d.current_url.split("#")[0].endswith("/play"):
        fail(case, f"left the game although cancelled: {d.current_url}")
    # Confirming abandons it: the server forgets it, a new game starts.
    d.find_element(By.ID, "new-game").click()
    wait(d, dialog_open, "the confirmation, again")
    d.find_element(By.ID, "confirm-yes").click()
    wait(d, lambda: d.find_element(By.ID, "game-id").text not in ("", "–", game_id), "the new game")
    status, _ = server.call("GET", f"/api/games/{game_id}")
    if status != 404:
        fail(case, f"the abandoned game still answers {status}")
    return f"{keys_msg} applied as the log says; the confirmation kept the game when cancelled and abandoned it when confirmed"


def advance(d, server, game_id, turns):
    """Plays `turns` turns by keys: the first playable card (else the last card discarded), then the deck."""
    b = body(d)
    for _ in range(turns):
        if wait_state(d, ("your-card", "over"), "the card phase") == "over":
            return
        v = game_view(server, game_id)
        h = v["hand_size"]
        plays = sorted(a["id"] for a in v["legal"] if a["id"] < 2 * h and a["id"] % 2 == 0)
        slot = plays[0] // 2 if plays else len(v["hand"]) - 1
        press(d, str(slot + 1), "p" if plays else "d")
        wait_state(d, ("your-draw",), "the draw phase")
        moves = b.get_attribute("data-moves")
        press(d, "0")
        wait(d, lambda: b.get_attribute("data-moves") != moves, "the draw")


def hint(d, server):
    status, players = server.call("GET", "/api/players")
    if status != 200 or not players.get("hint"):
        fail(case, f"the server offers no hint agent (GET /api/players: {status}, hint {players.get('hint') if status == 200 else None!r})")
    game_id = start_game(d, server, None, "11")  # the server's default opponent
    advance(d, server, game_id, 10)               # a position with something on the table
    b = body(d)
    checked = []
    for phase in ("your-card", "your-draw"):
        wait_state(d, (phase,), phase)
        v = game_view(server, game_id)
        legal = sorted(a["id"] for a in v["legal"])
        if phase == "your-card":
            d.find_element(By.ID, "btn-hint").click()
        else:
            press(d, "h")
        wait(d, lambda: b.get_attribute("data-hint") == "shown", f"the hint in the {phase[5:]} phase")
        rows = d.execute_script("return [...document.querySelectorAll('#hint-moves li')].map(li => [Number(li.dataset.action), "
                                "Number(li.dataset.p), li.classList.contains('best'), li.querySelector('.pct').textContent, "
                                "li.querySelector('.move-words').textContent])")
        ids = sorted(r[0] for r in rows)
        total = sum(r[1] for r in rows)
        if ids != legal:
            fail(case, f"the hint's moves {ids} are not the legal moves {legal}")
        if abs(total - 1) > 1e-2 or any(not 0 <= r[1] <= 1 for r in rows):
            fail(case, f"the hint's probabilities sum to {total}")
        best = max(r[1] for r in rows)
        if not rows[0][2] or any(r[2] != (r[1] == best) for r in rows):
            fail(case, "the best move is not the one highlighted")
        for _, p, _, pct, words in rows:
            if not re.fullmatch(r"[0-9]+(\.[0-9])?%", pct) or abs(float(pct[:-1]) - 100 * p) > 0.51:
                fail(case, f"percentage {pct!r} for p = {p}")
            if not re.fullmatch(rf"(play|discard) {CARD}|draw from the deck|take {CARD} from its discard pile", words):
                fail(case, f"a hint's move not in words: {words!r}")
        if len(d.find_elements(By.CSS_SELECTOR, ".card.hinted")) != 1:
            fail(case, f"the agent's choice is not marked on the board ({len(d.find_elements(By.CSS_SELECTOR, '.card.hinted'))} marks)")
        checked.append(f"{len(rows)} moves, best {100 * best:.0f}%")
        if phase == "your-card":
            if shot:
                d.save_screenshot(shot)
            moves = b.get_attribute("data-moves")
            d.find_element(By.CSS_SELECTOR, '#hand button[data-slot="0"]').click()
            d.find_element(By.ID, "btn-discard").click()
            wait(d, lambda: b.get_attribute("data-moves") != moves and b.get_attribute("data-hint") != "shown",
                 "the move, and the hint gone with its position")
    return "hint over exactly the legal moves, summing to 1, in both phases: " + "; ".join(checked)


EVIL = "<img src=x onerror=alert(1)>"
RUN_NAME = "run é 1"


def make_runs(root):
    subprocess.run(["rm", "-rf", root])
    run = os.path.join(root, RUN_NAME)
    os.makedirs(run)
    with open(os.path.join(run, "config.toml"), "w") as f:
        f.write('# markup in a comment: <b id="injected">bold</b>\n[run]\ngame = "kuhn"\nmax_iterations = 10\n')
    with open(os.path.join(run, "metrics.jsonl"), "w") as f:
        f.write(json.dumps({"iteration": 1, "exploitability": 0.5, "nodes_per_second": 1000.0, "traversal_seconds": 0.1,
                            "train_seconds": 0.1, "eval_seconds": 0.01}) + "\n")
    with open(os.path.join(run, "ladder.json"), "w") as f:
        json.dump({"anchor": "random", "ratings": [{"name": EVIL, "elo": 120.0, "elo_lo95": 80.0, "elo_hi95": 160.0, "games": 10},
                                                   {"name": "random", "elo": 0.0, "elo_lo95": 0.0, "elo_hi95": 0.0, "games": 10}]}, f)


def no_alert(d):
    try:
        text = d.switch_to.alert.text
    except NoAlertPresentException:
        return
    fail(case, f"an alert opened: {text!r}")


def runs_text(d, server):
    d.get(server.url + "/runs")
    wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "#runs tr.run a"), "the runs list")
    link = d.find_element(By.CSS_SELECTOR, "#runs tr.run a")
    if link.text != RUN_NAME:
        fail(case, f"the run is listed as {link.text!r}")
    link.click()
    wait(d, lambda: d.find_element(By.ID, "run-name").text == RUN_NAME, f"the run page of {RUN_NAME!r}")
    wait(d, lambda: d.find_element(By.ID, "ladder-panel").is_displayed(), "the ladder")
    cells = [c.text for c in d.find_elements(By.CSS_SELECTOR, "#ladder td.l")]
    if cells[:1] != [EVIL]:
        fail(case, f"the ladder's first player is shown as {cells[:1]}")
    config = d.find_element(By.ID, "config").text
    if '<b id="injected">bold</b>' not in config or d.find_elements(By.ID, "injected"):
        fail(case, "the config's markup was not shown as text")
    if d.find_elements(By.TAG_NAME, "img"):
        fail(case, "an <img> element was created from the ladder")
    wait(d, lambda: d.find_element(By.ID, "live").text == "live", "the WebSocket of a run with a space and an accent")
    no_alert(d)
    return f"{RUN_NAME!r} listed, linked and opened (live); the ladder's {EVIL} and the config's markup shown as text"


def watch(d, server, run_dir, proc):
    metrics = os.path.join(run_dir, "metrics.jsonl")
    deadline = time.time() + 120
    while not (os.path.exists(metrics) and open(metrics).read().count("\n") >= 1):
        if time.time() > deadline or proc.poll() is not None:
            fail(case, "cfr-run wrote no metrics line")
        time.sleep(0.2)
    d.get(f"{server.url}/run?name={os.path.basename(run_dir)}")
    wait(d, lambda: d.find_element(By.ID, "live").text == "live", "the WebSocket to open")
    first = int(d.find_element(By.ID, "points").text)
    if first < 1:
        fail(case, f"the page shows {first} metrics lines at load")
    wait(d, lambda: int(d.find_element(By.ID, "points").text) > first, "a new point pushed while the run trains", timeout=90)
    if d.find_element(By.ID, "run-state").text != "running":
        fail(case, f"state {d.find_element(By.ID, 'run-state').text!r} while training")
    if shot:
        time.sleep(2)
        d.save_screenshot(shot)
    return f"{first} lines at load, then {d.find_element(By.ID, 'points').text} (pushed live)"


def replay(d, server):
    golden = os.path.abspath(os.path.join(src, "tests/golden/games.jsonl.gz"))
    games = [json.loads(l) for l in gzip.open(golden, "rt") if l.strip()]
    d.get(server.url + "/replay")
    d.find_element(By.ID, "file").send_keys(golden)
    step = d.find_element(By.ID, "step")
    n0 = len(games[0]["actions"])
    wait(d, lambda: step.text == f"step 0 / {n0}", "the first game's deal")
    for _ in range(5):
        d.find_element(By.ID, "next").click()
    wait(d, lambda: step.text == f"step 5 / {n0}", "step 5")
    d.find_element(By.ID, "prev").click()
    wait(d, lambda: step.text == f"step 4 / {n0}", "back to step 4")
    Select(d.find_element(By.ID, "game-select")).select_by_index(2)
    n2 = len(games[2]["actions"])
    wait(d, lambda: step.text == f"step 0 / {n2}", "game 2's deal")
    for _ in range(30):
        d.find_element(By.ID, "next").click()
    if shot:
        d.save_screenshot(shot)
    d.find_element(By.ID, "last").click()
    wait(d, lambda: step.text == f"step {n2} / {n2}", "game 2's last step")
    shown = [int(d.find_element(By.ID, f"total-{p}").text) for p in (0, 1)]
    if "totals" not in games[2] or shown != games[2]["totals"]:
        fail(case, f"totals shown {shown}, the file's {games[2].get('totals')}")
    return f"game 2: {n2} steps, totals {shown} as recorded"



extra = []
proc = None
run_dir = None
if case == "watch":
    run_dir = os.path.join(work, "runs", "kuhn-live")
    subprocess.run(["rm", "-rf", os.path.join(work, "runs")])
    os.makedirs(os.path.join(work, "runs"))
    proc = subprocess.Popen([os.path.join(bin_dir, "cfr-run"), os.path.join(src, "configs/kuhn.toml"), "--run-dir", run_dir,
                             "--set", "run.max_iterations=100000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    extra = ["--runs", os.path.join(work, "runs")]
elif case == "runs_text":
    make_runs(os.path.join(work, "runs"))
    extra = ["--runs", os.path.join(work, "runs")]
cases = {"play": lambda: play(d, server), "play_keys": lambda: play_keys(d, server), "hint": lambda: hint(d, server),
         "watch": lambda: watch(d, server, run_dir, proc), "replay": lambda: replay(d, server),
         "runs_text": lambda: runs_text(d, server)}
if case not in cases:
    fail(case, f"unknown case (one of {', '.join(cases)})")
with Server(bin_dir, work, extra) as server:
    d = browser()
    try:
        check_csp_header(server)
        msg = cases[case]()
        check_console(d)
    finally:
        d.quit()
        if proc:
            proc.terminate()
            proc.wait(timeout=60)
print(f"ok: {case}: {msg}; no Content Security Policy violation")
