#!/usr/bin/python3
"""check_serve_browser.py BIN_DIR SOURCE_DIR WORK_DIR CASE [SCREENSHOT.png]: cfr-serve's pages in a
real browser (headless Chromium driven by Selenium; Debian's chromium, chromium-driver and
python3-selenium, hence /usr/bin/python3). Prints "ok: CASE ..." and exits 0, or "FAIL: ..." and 1.

  play    a whole game against heuristic_balanced through clicks; the final score on the page equals
          the server's transcript, which cfr-arena --replay --check-bots accepts
  watch   a run page open while cfr-run writes metrics: a new point arrives over the WebSocket
  replay  the golden transcript (gzip) uploaded; step forward, back, to the end: the totals shown
          equal the file's
"""
import gzip
import json
import os
import random
import subprocess
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
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
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=o)


def wait(d, cond, what, timeout=30):
    try:
        return WebDriverWait(d, timeout, poll_frequency=0.05).until(lambda _: cond())
    except TimeoutException:
        fail(case, f"timed out waiting for {what}")


def play(d, server):
    d.get(server.url + "/play")
    wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, "#opponent option")) > 0, "the opponents list")
    Select(d.find_element(By.ID, "opponent")).select_by_value("heuristic_balanced")
    d.find_element(By.ID, "seed").send_keys("17")
    d.find_element(By.ID, "new-game").click()
    body = d.find_element(By.TAG_NAME, "body")
    rng = random.Random(3)
    clicks = 0
    shot_taken = False
    while True:
        state = wait(d, lambda: body.get_attribute("data-state") if body.get_attribute("data-state") in ("your-card", "your-draw", "over") else None,
                     "the person's turn or the end")
        if state == "over":
            break
        moves = body.get_attribute("data-moves")
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
        wait(d, lambda: body.get_attribute("data-moves") != moves, "the move to be applied")
    you = int(d.find_element(By.ID, "final-you").text)
    opp = int(d.find_element(By.ID, "final-opponent").text)
    game_id = d.find_element(By.ID, "game-id").text
    line = urllib.request.urlopen(f"{server.url}/api/games/{game_id}/transcript").read().decode()
    t = json.loads(line)
    if t["totals"] != [you, opp] or not t["terminal"]:
        fail(case, f"page shows {you}–{opp}, the transcript says {t['totals']} (terminal {t['terminal']})")
    path = os.path.join(work, "game.jsonl")
    open(path, "w").write(line)
    r = subprocess.run([os.path.join(bin_dir, "cfr-arena"), "--replay", path, "--check-bots", "--quiet"], capture_output=True, text=True)
    if r.returncode != 0 or "all consistent" not in r.stderr:
        fail(case, f"cfr-arena --replay rejects the transcript: {r.stderr}")
    return f"{clicks} clicks, final {you}–{opp}, transcript replayed with the bot's moves checked"


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
with Server(bin_dir, work, extra) as server:
    d = browser()
    try:
        if case == "play":
            msg = play(d, server)
        elif case == "watch":
            msg = watch(d, server, run_dir, proc)
        elif case == "replay":
            msg = replay(d, server)
        else:
            fail(case, "unknown case")
    finally:
        d.quit()
        if proc:
            proc.terminate()
            proc.wait(timeout=60)
print(f"ok: {case}: {msg}")
