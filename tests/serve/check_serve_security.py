#!/usr/bin/env python3
"""check_serve_security.py BIN_DIR WORK_DIR CASE: cfr-serve attacked as docs/serve.md ("Security")
says it must withstand; one case per attack. Prints "ok: CASE: ..." or "FAIL: CASE: ..." (exit 1).

  program      a request naming a program, a path or a search over a path starts nothing, creates
               no file, and the answer shows no server path
  cross_site   a cross-site form post (text/plain, foreign Origin), a foreign Host, a foreign
               WebSocket Origin: refused (403/415/421) and nothing changes; security headers on
               every answer
  gzip_bomb    1 GiB of spaces gzipped (1 MiB) is refused (413) within seconds while another client
               is served within 2 s; the server's peak memory stays bounded; an endless legal game
               (200,000 actions) is refused at once; uploads write no file
  json_trees   a transcript line nested 400,000 deep is 422 naming the depth (over 64 levels) and the
               server answers on; a million deep (2 MB) and a 32 MiB line of [[],[],...] (33 KB
               gzipped) are 413 before parsing (a line over 1 MiB) with the peak memory bounded; a
               legal game padded to exactly 1 MiB replays
  slow         a slow external opponent (3 s a move) does not raise another game's latency, and
               over the move budget its game is ended with a clear message (504)
  limits       per-client live games (429), abandon, idle expiry in seconds; idle sockets at the
               connection cap lock nobody out (the idlest is closed for a newcomer) and the server
               does not spin
  token        beyond loopback every request needs the printed token (401 without; the link sets a
               cookie; the header works); --host localhost and ::1 serve
  names        a run folder with a space and a non-ASCII letter opens; a ladder's markup comes back
               as data (the page shows it as text: tests/serve/check_serve_browser.py)
  bodies       a request refused by its header (foreign Host, foreign Origin) is answered before its
               body is sent, and an API POST announcing more than the API's 64 KiB gets 413 at once:
               no announced body is waited for or buffered
  feeds        live feeds (a run page's WebSocket) are capped (503 past --max-live-feeds); a feed
               that never answers the server's pings is closed within --live-idle-seconds and its
               place freed; a feed that answers them stays open
  big_run      a run whose metrics.jsonl is 45 MB (15,000 lines, each with a 3 KB table, as a Lost
               Cities league run writes them) is read once: its page gets a thinned curve (every
               evaluation in, the last line in, under 1 MB), the server's memory grows by less than
               the file, appended lines reach a live feed, a rewritten file is read again, a line
               over 1 MiB is skipped
  hints        50 hints asked at once for one game (a build with a hint agent): each answered 200,
               429 (one per game at a time) or 503 (four at once in all), at least one of each kind
               of refusal or answer as the limits say, and a hint afterwards is served
  load_race    two games asked at once of an opponent whose load fails are both answered (422):
               the second, queued while the first load ran, is not dropped (needs a build that
               plays checkpoints: the load is held on a named pipe until both requests are in)
"""
import base64
import gzip
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_helpers import Server, fail  # noqa: E402

bin_dir, work, case = sys.argv[1:4]
work = os.path.join(work, "serve_security_" + case)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
here = os.path.dirname(os.path.abspath(__file__))
checks = 0


def check(cond, what):
    global checks
    if not cond:
        fail(case, what)
    checks += 1


def request(url, method="GET", path="/", body=None, headers=None, timeout=60):
    """(status, headers, text) of one request; never raises for an HTTP error status."""
    req = urllib.request.Request(url + path, method=method, data=body, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode(errors="replace")


def raw(url, text, timeout=30):
    """Raw HTTP bytes to the server; returns (status, the whole answer)."""
    host, port = url.split("//")[1].rsplit(":", 1)
    with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as s:
        s.sendall(text.encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    text = data.decode(errors="replace")
    return int(text.split(" ")[1]), text


def new_game(srv, opponent="heuristic_balanced", **kw):
    return srv.call("POST", "/api/games", {"opponent": opponent, **kw})


def peak_rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def make_run(name, config, metrics=None):
    """A run folder WORK/runs/NAME with its config.toml (and metrics.jsonl): (the runs folder, the run)."""
    runs = os.path.join(work, "runs")
    run = os.path.join(runs, name)
    os.makedirs(run)
    open(os.path.join(run, "config.toml"), "w").write(config)
    if metrics is not None:
        open(os.path.join(run, "metrics.jsonl"), "w").write(metrics)
    return runs, run


def program():
    marker = os.path.join(work, "MARKER")
    with Server(bin_dir, work) as srv:
        for opp in (f"external:sh -c 'touch {marker}'", f"external:touch {marker}", "checkpoint:/etc/passwd",
                    "checkpoint:" + work, f"search:/etc?k=1", "snapshots:/tmp", "../../etc/passwd"):
            st, body = new_game(srv, opp)
            check(st == 422 and "is offered" in body.get("error", ""), f"opponent {opp!r}: {st} {body}")
            check("/etc" not in json.dumps(body) and work not in json.dumps(body), f"the answer shows a path: {body}")
        st, body = srv.call("POST", "/api/games", {"opponent": "heuristic_balanced", "search": {"k": 99}})
        check(st in (400, 422), f"search over a bot with k=99: {st}")
        time.sleep(1.0)
        check(not os.path.exists(marker), "a request ran a program: the marker file exists")
        st, stats = srv.call("GET", "/api/stats")
        check(stats["games_created"] == 0, f"refused requests created games: {stats}")
    return f"{checks} checks: no program ran, no path probed, no path shown"


def cross_site():
    with Server(bin_dir, work) as srv:
        base = srv.url.split("//")[1]
        form = b'{"opponent": "heuristic_balanced", "x": "="}'
        # A plain HTML form on another site: enctype text/plain, its Origin; no JavaScript needed.
        st, _, text = request(srv.url, "POST", "/api/games", form, {"Content-Type": "text/plain", "Origin": "http://evil.example"})
        check(st == 403, f"a cross-site form post: {st} {text}")
        st, _, text = request(srv.url, "POST", "/api/games", form, {"Content-Type": "text/plain"})
        check(st == 415, f"a text/plain post without Origin: {st} {text}")
        st, _, text = request(srv.url, "POST", "/api/games", form,
                              {"Content-Type": "application/x-www-form-urlencoded", "Origin": "null"})
        check(st == 403, f"a post from an opaque origin: {st} {text}")
        st, _, text = request(srv.url, "GET", "/api/players", None, {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"})
        check(st == 403, f"a cross-site fetch of the API: {st}")
        # DNS rebinding: a foreign name in Host.
        st, _ = raw(srv.url, f"GET /api/players HTTP/1.1\r\nHost: evil.example:{base.rsplit(':', 1)[1]}\r\nConnection: close\r\n\r\n")
        check(st == 421, f"a foreign Host: {st}")
        st, _ = raw(srv.url, f"POST /api/games HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n"
                             f"Content-Length: {len(form)}\r\nConnection: close\r\n\r\n{form.decode()}")
        check(st == 421, f"a foreign Host posting a game: {st}")
        st, _ = raw(srv.url, "GET /api/players HTTP/1.1\r\nConnection: close\r\n\r\n")
        check(st in (400, 421), f"no Host: {st}")
        # The WebSocket upgrade from another site.
        ws = (f"GET /api/runs/x/live HTTP/1.1\r\nHost: {base}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: http://evil.example\r\n\r\n")
        st, _ = raw(srv.url, ws, timeout=10)
        check(st == 403, f"a cross-site WebSocket upgrade: {st}")
        st, _ = raw(srv.url, f"OPTIONS /api/games HTTP/1.1\r\nHost: {base}\r\nOrigin: http://{base}\r\nConnection: close\r\n\r\n")
        check(st == 405, f"a preflight: {st}")
        st, stats = srv.call("GET", "/api/stats")
        check(st == 200 and stats["games_created"] == 0, f"a refused request created a game: {stats}")
        # The same origin works, with Origin, and its answers carry the security headers.
        st, _, text = request(srv.url, "POST", "/api/games", form[:-11] + b"}",
                              {"Content-Type": "application/json", "Origin": srv.url})
        check(st == 201, f"a same-origin post: {st} {text}")
        for path in ("/play", "/api/players", "/static/style.css", "/nothing"):
            st, h, _ = request(srv.url, "GET", path)
            csp = h.get("Content-Security-Policy", "")
            check("script-src 'self'" in csp and "frame-ancestors 'none'" in csp, f"{path}: CSP {csp!r}")
            check(h.get("X-Content-Type-Options") == "nosniff" and h.get("Referrer-Policy") == "no-referrer",
                  f"{path}: headers {h}")
            check("Access-Control-Allow-Origin" not in h, f"{path}: a CORS header")
    return f"{checks} checks: cross-site, foreign Host and WebSocket Origin refused, nothing changed, headers set"


def gzip_bomb():
    tmp = os.path.join(work, "tmp")
    os.makedirs(tmp)
    env_tmp = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = tmp  # the server's temp folder: uploads must leave nothing there
    try:
        srv_ctx = Server(bin_dir, work)
        srv = srv_ctx.__enter__()
    finally:
        if env_tmp is None:
            del os.environ["TMPDIR"]
        else:
            os.environ["TMPDIR"] = env_tmp
    try:
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as z:
            block = b" " * (1 << 20)
            for _ in range(1024):
                z.write(block)
        bomb = buf.getvalue()
        check(len(bomb) < 2 << 20, f"the bomb is {len(bomb)} bytes")
        rss0 = peak_rss_mib(srv.proc.pid)
        out = {}

        def upload():
            t0 = time.time()
            out["st"], _, out["text"] = request(srv.url, "POST", "/api/replay", bomb, {"Content-Type": "application/octet-stream"})
            out["s"] = time.time() - t0

        th = threading.Thread(target=upload)
        th.start()
        time.sleep(0.05)
        worst = 0.0
        while th.is_alive() or worst == 0.0:
            t0 = time.time()
            st, _ = srv.call("GET", "/api/players")
            worst = max(worst, time.time() - t0)
            check(st == 200, "another client was refused during the upload")
            if not th.is_alive():
                break
        th.join()
        check(out["st"] == 413 and "MiB" in out["text"], f"the bomb: {out['st']} {out['text'][:200]}")
        check(out["s"] < 10, f"the bomb took {out['s']:.1f} s to refuse")
        check(worst < 2.0, f"another client waited {worst:.2f} s during the bomb")
        rss = peak_rss_mib(srv.proc.pid)
        check(rss - rss0 < 400, f"peak memory grew {rss - rss0:.0f} MiB on the bomb")
        # A legal game that never ends: the draw/take loop, 200,000 actions.
        deck = json.loads(gzip.open(os.path.join(here, "..", "golden", "games.jsonl.gz"), "rt").readline())["deck"]
        endless = json.dumps({"deck": deck, "actions": [0, 16] * 100000}) + "\n"
        t0 = time.time()
        st, _, text = request(srv.url, "POST", "/api/replay", endless.encode(), {"Content-Type": "application/octet-stream"})
        check(st == 413 and "at most" in text, f"an endless game: {st} {text[:200]}")
        check(time.time() - t0 < 5, f"the endless game took {time.time() - t0:.1f} s to refuse")
        st, _, text = request(srv.url, "POST", "/api/replay", b"\n\n", {"Content-Type": "application/octet-stream"})
        check(st == 422 and "no games" in text, f"an empty transcript: {st} {text}")
        golden = os.path.join(here, "..", "golden", "games.jsonl.gz")
        st, _, text = request(srv.url, "POST", "/api/replay?game=3", open(golden, "rb").read(),
                              {"Content-Type": "application/octet-stream"})
        check(st == 200 and json.loads(text)["index"] == 3, f"the golden transcript: {st}")
        check(os.listdir(tmp) == [], f"uploads left files in the temp folder: {os.listdir(tmp)}")
    finally:
        srv_ctx.__exit__(None, None, None)
    return (f"{checks} checks: bomb refused in {out['s']:.2f} s, another client's worst wait {worst * 1000:.0f} ms, "
            f"peak memory +{rss - rss0:.0f} MiB")


def json_trees():
    """Transcript lines whose JSON tree would cost the server its stack or its memory."""
    def upload(srv, data, game=0):
        try:
            return request(srv.url, "POST", f"/api/replay?game={game}", data, {"Content-Type": "application/octet-stream"})[::2]
        except OSError as e:  # the server died: no answer
            return None, f"no answer: {e!r}"

    golden = os.path.join(here, "..", "golden", "games.jsonl.gz")
    first = gzip.open(golden, "rt").readline().strip()
    with Server(bin_dir, work) as srv:
        rss0 = peak_rss_mib(srv.proc.pid)
        # 400,000 levels of arrays (an 800 KB line, under the line limit): a million-deep dump() in
        # the error message overflowed the upload worker's stack and the whole server died (SIGSEGV).
        n = 400_000
        st, text = upload(srv, ('{"deck": ' + "[" * n + "]" * n + ', "actions": []}\n').encode())
        check(st == 422 and "upload:1: JSON nested deeper than 64 levels" in text, f"400,000 levels: {st} {text[:300]}")
        st, _ = srv.call("GET", "/api/players")
        check(st == 200, f"after the deep line the server answers {st}")
        # A million levels (2 MB): over the line limit, refused before it is parsed.
        n = 1_000_000
        line = '{"deck": ' + "[" * n + "]" * n + ', "actions": []}'
        st, text = upload(srv, (line + "\n").encode())
        check(st == 413 and f"line 1 is {len(line)} bytes" in text and "at most 1024 KiB" in text,
              f"a million levels: {st} {text[:300]}")
        # Shallow but wide: one 32 MiB line of [[],[],...] in a 33 KB gzip. Its tree was ~16 times
        # its text (~1 GB) before any game limit was checked; now 413 before parsing.
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as z:
            z.write(b"[" + b"[]," * ((32 << 20) // 3 - 2) + b"[]]\n")
        check(len(buf.getvalue()) < 100_000, f"the wide upload is {len(buf.getvalue())} bytes gzipped")
        t0 = time.time()
        st, text = upload(srv, buf.getvalue())
        took = time.time() - t0
        check(st == 413 and "at most 1024 KiB" in text, f"a 32 MiB line of empty arrays: {st} {text[:300]}")
        check(took < 5, f"the wide line took {took:.1f} s to refuse")
        grew = peak_rss_mib(srv.proc.pid) - rss0
        check(grew < 200, f"peak memory grew {grew:.0f} MiB on the wide line")
        # The limit is a line's length: a legal game padded to exactly 1 MiB replays, one byte more is 413.
        padded = "{" + " " * ((1 << 20) - len(first)) + first[1:]
        check(len(padded.encode()) == 1 << 20, f"the padded line is {len(padded)} bytes")
        st, text = upload(srv, (padded + "\n").encode())
        check(st == 200 and json.loads(text)["games"][0]["actions"] == len(json.loads(first)["actions"]),
              f"a legal game of exactly 1 MiB: {st} {text[:300]}")
        st, text = upload(srv, ("{ " + padded[1:] + "\n").encode())
        check(st == 413 and f"line 1 is {(1 << 20) + 1} bytes" in text, f"1 MiB + 1: {st} {text[:300]}")
        st, text = upload(srv, open(golden, "rb").read(), game=3)
        check(st == 200 and json.loads(text)["index"] == 3, f"the golden transcript afterwards: {st} {text[:300]}")
    return f"{checks} checks: deep lines refused (422 naming the depth, 413 over 1 MiB), the wide line 413 in {took:.2f} s, peak memory +{grew:.0f} MiB"


def slow():
    player = os.path.join(here, "slow_player.py")
    with Server(bin_dir, work, extra=["--opponent", f"external:python3 {player} 3", "--move-budget", "1",
                                      "--move-timeout", "30"]) as srv:
        quick = new_game(srv, "heuristic_balanced", seat=0, seed=5)[1]
        out = {}

        def against_slow():
            t0 = time.time()
            out["st"], out["body"] = new_game(srv, "extra:1", seat=1, seed=6)
            out["s"] = time.time() - t0

        th = threading.Thread(target=against_slow)
        th.start()
        time.sleep(0.3)
        worst, moves = 0.0, 0
        v = quick
        while th.is_alive() and not v["over"]:
            t0 = time.time()
            st, v = srv.call("POST", f"/api/games/{quick['id']}/move", {"action": v["legal"][0]["id"]})
            worst = max(worst, time.time() - t0)
            check(st == 200, f"a quick game's move: {st} {v}")
            moves += 1
        th.join()
        check(moves >= 4, f"only {moves} quick moves while the slow opponent thought")
        check(worst < 0.5, f"a quick game's move waited {worst:.2f} s beside the slow opponent")
        check(out["st"] == 504 and "budget" in out["body"].get("error", ""), f"the slow game: {out['st']} {out['body']}")
        check(out["s"] < 10, f"the slow game answered after {out['s']:.1f} s")
        st, stats = srv.call("GET", "/api/stats")
        check(stats["over_budget"] >= 1, f"stats: {stats}")
    return f"{checks} checks: {moves} quick moves beside a 3 s opponent, worst {worst * 1000:.0f} ms; the slow game ended (504)"


def limits():
    with Server(bin_dir, work, extra=["--max-games-per-client", "4", "--idle-minutes", "0.05", "--max-connections", "8"]) as srv:
        ids = []
        for i in range(4):
            st, g = new_game(srv, seed=i)
            check(st == 201, f"game {i}: {st} {g}")
            ids.append(g["id"])
        st, body = new_game(srv)
        check(st == 429 and "limit" in body.get("error", ""), f"a fifth game: {st} {body}")
        st, body = srv.call("POST", f"/api/games/{ids[0]}/abandon", {})
        check(st == 200, f"abandon: {st} {body}")
        check(srv.call("GET", f"/api/games/{ids[0]}")[0] == 404, "an abandoned game is still there")
        st, g = new_game(srv)
        check(st == 201, f"a game after abandoning one: {st} {g}")
        # Idle games expire (here after 3 s; the timer looks every second).
        time.sleep(5)
        for i in ids[1:]:
            check(srv.call("GET", f"/api/games/{i}")[0] == 404, "an idle game outlived the expiry")
        st, stats = srv.call("GET", "/api/stats")
        check(stats["expired"] >= 3 and stats["refused_client_limit"] == 1, f"stats {stats}")
        # The connection cap: idle sockets fill it, yet a newcomer is served (the connection idle
        # longest is closed for it), and the full server does not spin on a core.
        host, port = srv.url.split("//")[1].rsplit(":", 1)
        socks = [socket.create_connection((host, int(port))) for _ in range(8)]
        time.sleep(0.3)
        c0 = cpu_seconds(srv.proc.pid)
        kept = []  # newcomers that stay connected (keep-alive): each needs a slot of its own
        for k in range(3):
            nc = socket.create_connection((host, int(port)), timeout=10)
            nc.sendall(f"GET /api/players HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            head = nc.recv(65536).decode(errors="replace")
            check(head.startswith("HTTP/1.1 200"), f"newcomer {k} beside 8 idle sockets at the cap of 8: {head[:80]!r}")
            kept.append(nc)
        time.sleep(2)
        spent = cpu_seconds(srv.proc.pid) - c0
        check(spent < 0.5, f"the server used {spent:.2f} s of CPU in 2 s while full")
        st, stats = srv.call("GET", "/api/stats")
        check(st == 200 and stats["evicted_connections"] >= 3, f"stats {stats}")
        closed = 0
        for s in socks:
            s.settimeout(0.5)
            try:
                closed += s.recv(1) == b""
            except (socket.timeout, OSError):
                pass
            s.close()
        check(closed >= 3, f"only {closed} idle sockets were closed for newcomers")
        for nc in kept:
            nc.close()
    return (f"{checks} checks: 429 past 4 games, abandon, expiry in seconds; at a cap of 8 connections held by idle "
            f"sockets newcomers are served ({closed} idle ones closed), CPU {spent:.2f} s in 2 s")


def token():
    log_path = os.path.join(work, "serve.log")
    with open(log_path, "w") as log:
        p = subprocess.Popen([os.path.join(bin_dir, "cfr-serve"), "--port", "0", "--host", "0.0.0.0"], stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + 30
            while "?token=" not in open(log_path).read():
                check(p.poll() is None and time.time() < deadline, f"no token printed: {open(log_path).read()}")
                time.sleep(0.05)
            text = open(log_path).read()
            check("warning" in text and "other machines" in text, f"no warning beyond loopback: {text}")
            port, tok = re.search(r":(\d+)/\?token=([0-9a-f]+)", text).groups()
            url = f"http://127.0.0.1:{port}"
            st, _, body = request(url, "GET", "/api/players")
            check(st == 401 and "token" in body, f"no token: {st}")
            st, _, body = request(url, "GET", "/api/players", None, {"X-CFR-Token": "0" * len(tok)})
            check(st == 401, f"a wrong token: {st}")
            st, _, body = request(url, "GET", "/api/players", None, {"X-CFR-Token": tok})
            check(st == 200, f"the header: {st} {body[:100]}")
            st, answer = raw(url, f"GET /?token={tok} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n")
            check(st == 303 and f"cfr_serve_token={tok}" in answer and "HttpOnly" in answer and "SameSite=Strict" in answer,
                  f"the link: {st} {answer[:300]}")
            st, _, body = request(url, "GET", "/api/players", None, {"Cookie": f"cfr_serve_token={tok}"})
            check(st == 200, f"the cookie: {st}")
        finally:
            p.send_signal(2)
            check(p.wait(timeout=30) == 0, "exit code after SIGINT")
    served = ["127.0.0.1"]
    for host in ("localhost", "::1"):
        log_path = os.path.join(work, f"serve-{host.replace(':', '')}.log")
        with open(log_path, "w") as log:
            p = subprocess.Popen([os.path.join(bin_dir, "cfr-serve"), "--port", "0", "--host", host], stdout=log, stderr=subprocess.STDOUT)
            deadline = time.time() + 30
            while "listening on" not in open(log_path).read() and p.poll() is None and time.time() < deadline:
                time.sleep(0.05)
            text = open(log_path).read()
            if host == "::1" and p.poll() is not None and "Cannot assign" in text:
                print(f"note: no IPv6 loopback on this machine: {text.strip()}")
                continue
            check("listening on" in text, f"--host {host}: {text}")
            port = re.search(r":(\d+)/ ", text).group(1)
            url = f"http://[::1]:{port}" if host == "::1" else f"http://localhost:{port}"
            try:
                st, _, _ = request(url, "GET", "/api/players")
            except OSError:
                st = None
            check(st == 200, f"--host {host}: {st}")
            check("token" not in text, f"--host {host} asked for a token: {text}")
            served.append(host)
            p.send_signal(2)
            check(p.wait(timeout=30) == 0, f"--host {host}: exit code after SIGINT")
    return f"{checks} checks: token required beyond loopback (401, header, cookie link); served on {', '.join(served)}"


def names():
    runs, run = make_run("run é 1", '[run]\ngame = "kuhn"\nmax_iterations = 5\n', '{"iteration": 1, "exploitability": 0.5}\n')
    evil = "<img src=x onerror=alert(1)>"
    json.dump({"players": [{"name": evil, "rating": 0}]}, open(os.path.join(run, "ladder.json"), "w"))
    with Server(bin_dir, work, extra=["--runs", runs]) as srv:
        st, lst = srv.call("GET", "/api/runs")
        check(st == 200 and [r["name"] for r in lst] == ["run é 1"], f"runs: {lst}")
        st, d = srv.call("GET", "/api/runs/" + urllib.request.quote("run é 1"))
        check(st == 200 and d["name"] == "run é 1", f"the run by its encoded name: {st} {str(d)[:200]}")
        check(d["ladder"]["players"][0]["name"] == evil, "the ladder's text came back changed")
        for bad in ("%2e%2e", "%2fetc", "%ff", "%0a", "%"):
            st, _ = raw(srv.url, f"GET /api/runs/{bad} HTTP/1.1\r\nHost: {srv.url.split('//')[1]}\r\nConnection: close\r\n\r\n")
            check(st == 400, f"/api/runs/{bad}: {st}")
    return f"{checks} checks: a UTF-8 run name opens, escapes refused"


def head_within(srv, text, seconds):
    """Sends raw HTTP (a header announcing a body it does not send) and returns the status line and
    headers the server answers within `seconds`, or None when it waits for the body instead."""
    host, port = srv.url.split("//")[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=seconds) as s:
        s.sendall(text.encode())
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except socket.timeout:
            return None
    return data.decode(errors="replace")


def bodies():
    with Server(bin_dir, work) as srv:
        base = srv.url.split("//")[1]
        port = base.rsplit(":", 1)[1]
        sixteen = 16 * 1024 * 1024 - 100
        for what, head, want in (
                ("a foreign Host announcing 16 MiB", f"POST /api/games HTTP/1.1\r\nHost: evil.example:{port}\r\n"
                 f"Content-Type: application/json\r\nContent-Length: {sixteen}\r\n\r\n", 421),
                ("a foreign Origin's upload announcing 16 MiB", f"POST /api/replay HTTP/1.1\r\nHost: {base}\r\n"
                 f"Origin: http://evil.example\r\nContent-Type: application/octet-stream\r\nContent-Length: {sixteen}\r\n\r\n", 403),
                ("a text/plain form announcing 16 MiB", f"POST /api/games HTTP/1.1\r\nHost: {base}\r\n"
                 f"Content-Type: text/plain\r\nContent-Length: {sixteen}\r\n\r\n", 415),
                ("an API POST announcing 1 MiB", f"POST /api/games HTTP/1.1\r\nHost: {base}\r\n"
                 f"Content-Type: application/json\r\nContent-Length: {1 << 20}\r\n\r\n", 413)):
            answer = head_within(srv, head, 5)
            check(answer is not None, f"{what}: no answer within 5 s (the server waits for the body)")
            check(answer.startswith(f"HTTP/1.1 {want} "), f"{what}: {answer[:120]!r}, expected {want}")
        # Within the limits nothing changed: a game, and a 60 KiB API body read whole (its JSON refused).
        st, g = new_game(srv)
        check(st == 201, f"a game after the refusals: {st} {g}")
        st, body = srv.call("POST", "/api/games", raw=b'{"opponent": "' + b"x" * 60000 + b'"}')
        check(st in (400, 422) and "opponent" in str(body), f"a 60 KiB body within the API's limit: {st} {str(body)[:100]}")
        st, stats = srv.call("GET", "/api/stats")
        check(st == 200 and stats["games_created"] == 1, f"stats {stats}")
    return f"{checks} checks: refused by the header before any body, 413 at once past the API's limit"


def ws_upgrade(srv, path):
    """A raw WebSocket upgrade: (socket, the answer's status line and headers)."""
    host, port = srv.url.split("//")[1].rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(1)  # one byte at a time: the frames after the header stay in the socket
        if not chunk:
            break
        data += chunk
    return s, data.decode(errors="replace")


def ws_frame(s):
    """(opcode, payload) of the server's next frame (unmasked); None when the server closed."""
    def exactly(n):
        out = b""
        while len(out) < n:
            chunk = s.recv(n - len(out))
            if not chunk:
                return None
            out += chunk
        return out
    h = exactly(2)
    if h is None:
        return None
    n = h[1] & 0x7F
    if n >= 126:
        ext = exactly(2 if n == 126 else 8)
        if ext is None:
            return None
        n = int.from_bytes(ext, "big")
    payload = exactly(n) if n else b""
    return None if payload is None else (h[0] & 0x0F, payload)


def feeds():
    runs, _ = make_run("r1", '[run]\ngame = "kuhn"\nmax_iterations = 5\n', '{"iteration": 1, "exploitability": 0.5}\n')
    with Server(bin_dir, work, extra=["--runs", runs, "--max-live-feeds", "2", "--live-idle-seconds", "2"]) as srv:
        silent = []
        for k in range(2):
            s, head = ws_upgrade(srv, "/api/runs/r1/live")
            check(head.startswith("HTTP/1.1 101"), f"feed {k}: {head[:80]!r}")
            silent.append(s)
        s, head = ws_upgrade(srv, "/api/runs/r1/live")
        check(head.startswith("HTTP/1.1 503") and "live feeds" in head + s.recv(4096).decode(errors="replace"),
              f"a third feed past --max-live-feeds 2: {head[:80]!r}")
        s.close()
        st, stats = srv.call("GET", "/api/stats")
        check(st == 200 and stats["live_feeds"] == 2, f"stats {stats}")
        # The two never answer the pings: closed by the server within the idle time (2 s) and a margin.
        t0 = time.time()
        opcodes = []
        for s in silent:
            s.settimeout(15)
            try:
                while (f := ws_frame(s)) is not None:
                    opcodes.append(f[0])
            except ConnectionResetError:
                pass  # closed with data unread: a reset instead of an end of stream
            s.close()
        closed_in = time.time() - t0
        check(closed_in < 10, f"silent feeds closed after {closed_in:.1f} s")
        check(9 in opcodes, f"no ping was sent before the close: opcodes {opcodes}")
        until = time.time() + 5  # the server counts a feed out once its reader has ended too
        while (stats := srv.call("GET", "/api/stats")[1])["live_feeds"] != 0 and time.time() < until:
            time.sleep(0.05)
        check(stats["live_feeds"] == 0, f"stats after the close {stats}")
        # A feed that answers the pings stays open past several idle times.
        s, head = ws_upgrade(srv, "/api/runs/r1/live")
        check(head.startswith("HTTP/1.1 101"), f"a feed after the close: {head[:80]!r}")
        s.settimeout(1)
        pongs, until = 0, time.time() + 6
        while time.time() < until:
            try:
                f = ws_frame(s)
            except socket.timeout:
                continue
            check(f is not None, f"a feed answering its pings was closed after {pongs} pongs")
            if f[0] == 9:  # ping: a masked pong with the same payload
                mask = os.urandom(4)
                s.sendall(bytes([0x8A, 0x80 | len(f[1])]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(f[1])))
                pongs += 1
        check(pongs >= 2, f"only {pongs} pings in 6 s at an idle time of 2 s")
        s.close()
    return f"{checks} checks: 503 past 2 feeds, silent feeds closed in {closed_in:.1f} s, an answering feed kept ({pongs} pongs)"


def big_run():
    runs, run = make_run("big", '[run]\ngame = "lost_cities"\nmax_iterations = 100000\n')
    metrics = os.path.join(run, "metrics.jsonl")
    table = {f"opponent {k}": {"weight": 0.1 * k, "games": 100 + k, "score": -1.5 * k} for k in range(48)}
    n, every = 15000, 500
    best = 0.0
    with open(metrics, "w") as f:
        for i in range(1, n + 1):
            line = {"iteration": i, "iteration_seconds": 0.2, "nodes_per_second": 5e4 + i, "league": table,
                    "losses": {"policy": 0.1, "value": 0.05}}
            if i % every == 0:
                rate = 0.4 + 0.3 * ((i * 7919) % 1000) / 1000
                best = max(best, rate)
                line["evaluation"] = {"heuristic_expert": {"win_rate": rate, "avg_score_diff": 1.0, "games": 200}}
            f.write(json.dumps(line) + "\n")
            if i == n // 2:
                f.write('{"iteration": "x", "pad": "' + "y" * (2 << 20) + '"}\n')  # 2 MiB: not a metrics line
    size_mib = os.path.getsize(metrics) / (1 << 20)
    with Server(bin_dir, work, extra=["--runs", runs]) as srv:
        rss0 = peak_rss_mib(srv.proc.pid)
        st, lst = srv.call("GET", "/api/runs")
        check(st == 200 and lst[0]["name"] == "big" and lst[0]["iteration"] == n, f"runs {str(lst)[:300]}")
        check(abs(lst[0]["best"].get("win_rate_vs_heuristic_expert", -1) - best) < 1e-9, f"best {lst[0]['best']} != {best}")
        st, _, text = request(srv.url, "GET", "/api/runs/big")
        check(st == 200 and len(text) < (1 << 20), f"the run's answer: {st}, {len(text)} bytes")
        d = json.loads(text)
        pts = d["metrics"]
        its = [p["iteration"] for p in pts]
        check(d["lines"] == n and d["iteration"] == n and d["state"] in ("stopped", "running"), f"lines {d['lines']} state {d['state']}")
        check(len(pts) <= 4001 and its == sorted(set(its)) and its[-1] == n, f"{len(pts)} points, last {its[-1:]}")
        evals = [p["iteration"] for p in pts if "evaluation" in p]
        check(evals == list(range(every, n + 1, every)), f"evaluations drawn at {evals[:5]}... ({len(evals)})")
        check(all(set(p) <= {"iteration", "nodes_per_second", "evaluation"} for p in pts), f"a point's fields: {sorted(pts[0])}")
        grew = peak_rss_mib(srv.proc.pid) - rss0
        # Under a sanitizer freed memory is held back (ASan's quarantine): only the answer's size says.
        sanitized = any("libasan" in m or "libtsan" in m for m in open(f"/proc/{srv.proc.pid}/maps"))
        check(sanitized or grew < size_mib, f"the server's peak memory grew {grew:.0f} MiB reading a {size_mib:.0f} MiB file")
        # Appended lines: in the next answer and on a live feed from the count the page got.
        s, head = ws_upgrade(srv, f"/api/runs/big/live?from={n}")
        check(head.startswith("HTTP/1.1 101"), f"the live feed: {head[:80]!r}")
        with open(metrics, "a") as f:
            for i in range(n + 1, n + 11):
                f.write(json.dumps({"iteration": i, "nodes_per_second": 1.0}) + "\n")
        got, s_deadline = [], time.time() + 10
        s.settimeout(1)
        while len(got) < 10 and time.time() < s_deadline:
            try:
                f = ws_frame(s)
            except socket.timeout:
                continue
            check(f is not None, "the live feed closed")
            if f[0] == 1:
                got += [p["iteration"] for p in json.loads(f[1])["lines"]]
        s.close()
        check(got == list(range(n + 1, n + 11)), f"the feed sent {got}")
        st, d = srv.call("GET", "/api/runs/big")
        check(d["lines"] == n + 10 and d["metrics"][-1]["iteration"] == n + 10, f"after appending: {d['lines']}")
        # Rewritten shorter (a run started again in the folder): read again from its start.
        with open(metrics, "w") as f:
            for i in range(1, 6):
                f.write(json.dumps({"iteration": i}) + "\n")
        st, d = srv.call("GET", "/api/runs/big")
        check(d["lines"] == 5 and [p["iteration"] for p in d["metrics"]] == [1, 2, 3, 4, 5], f"rewritten: {str(d)[:200]}")
    os.remove(metrics)
    return (f"{checks} checks: a {size_mib:.0f} MiB metrics file read once, {len(pts)} points sent ({len(evals)} evaluations), "
            f"peak memory +{grew:.0f} MiB{' (a sanitizer build: not bounded here)' if sanitized else ''}, "
            "appended lines pushed live, a rewrite read again")


def hints():
    with Server(bin_dir, work) as srv:
        st, players = srv.call("GET", "/api/players")
        check(st == 200 and players.get("hint"), f"no hint agent in this build: {str(players)[:200]}")
        st, g = new_game(srv, seat=0, seed=1)
        check(st == 201 and g["legal"], f"a game on my turn: {st} {str(g)[:200]}")
        answers = []
        lock = threading.Lock()

        def ask():
            st, body = srv.call("GET", f"/api/games/{g['id']}/hint")
            with lock:
                answers.append((st, body))

        threads = [threading.Thread(target=ask) for _ in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        codes = sorted(st for st, _ in answers)
        check(len(answers) == 50 and set(codes) <= {200, 429, 503}, f"answers {codes}")
        check(codes.count(200) >= 1 and codes.count(429) >= 1, f"answers {codes}: want some served and some refused")
        check(all("being worked out" in b.get("error", "") for st, b in answers if st == 429), "a 429 without its reason")
        st, h = srv.call("GET", f"/api/games/{g['id']}/hint")
        check(st == 200 and h.get("moves"), f"a hint after the flood: {st} {str(h)[:200]}")
        st, after = srv.call("POST", f"/api/games/{g['id']}/move", {"action": h["moves"][0]["id"]})
        check(st == 200, f"the game goes on: {st} {str(after)[:200]}")
    return f"{checks} checks: 50 hints at once answered {codes.count(200)} served, {codes.count(429)} 429, {codes.count(503)} 503"


def load_race():
    runs, run = make_run("broken", open(os.path.join(here, "..", "..", "configs", "league_styles_2h.toml")).read())
    os.makedirs(os.path.join(run, "checkpoints"))
    fifo = os.path.join(run, "checkpoints", "latest")
    os.mkfifo(fifo)  # the load blocks reading it until this script writes (a name that is no checkpoint)
    answers = {}

    def ask(k):
        try:
            answers[k] = new_game(srv, "run:broken")
        except OSError as e:  # the connection closed without an answer
            answers[k] = (None, {"error": f"no answer: {e}"})

    with Server(bin_dir, work, extra=["--runs", runs]) as srv:
        st, players = srv.call("GET", "/api/players")
        check(st == 200 and "run:broken" in [p["id"] for p in players["players"]], f"players {players}")
        first = threading.Thread(target=ask, args=(0,), daemon=True)
        first.start()
        time.sleep(1.0)  # the first request's load is now waiting on the pipe
        second = threading.Thread(target=ask, args=(1,), daemon=True)
        second.start()
        time.sleep(1.0)  # the second request is queued behind it
        done = threading.Event()

        def feed_pipe():  # every time the server opens the pipe, it reads a name that is no checkpoint
            while not done.is_set():
                try:
                    fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                except OSError:  # no reader yet
                    time.sleep(0.01)
                    continue
                try:
                    os.write(fd, b"not-a-checkpoint\n")
                finally:
                    os.close(fd)
                time.sleep(0.01)

        feeder = threading.Thread(target=feed_pipe, daemon=True)
        feeder.start()
        first.join(20)
        second.join(20)
        done.set()
        for k in (0, 1):
            check(k in answers, f"request {k} got no answer within 20 s (dropped while the load ran)")
            st, body = answers[k]
            check(st == 422 and "could not be loaded" in body.get("error", ""), f"request {k}: {st} {body}")
        st, stats = srv.call("GET", "/api/stats")
        check(st == 200 and stats["live_games"] == 0, f"stats {stats}")
    return f"{checks} checks: both requests answered 422, none dropped"


cases = {"program": program, "cross_site": cross_site, "gzip_bomb": gzip_bomb, "json_trees": json_trees, "slow": slow, "limits": limits,
         "token": token, "names": names, "bodies": bodies, "feeds": feeds, "big_run": big_run,
         "hints": hints, "load_race": load_race}
print(f"ok: {case}: {cases[case]()}")
