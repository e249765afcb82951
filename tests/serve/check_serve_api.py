#!/usr/bin/env python3
"""check_serve_api.py BIN_DIR WORK_DIR: cfr-serve's API without a browser. Bad input gets a clear
4xx and changes nothing: malformed JSON, unknown fields, unknown ids, illegal moves, moves out of
turn or after the end, oversized bodies, paths outside the served folders, wrong methods; a game
is private to its id; SIGINT exits 0. Prints "ok: ..." or "FAIL: ..." (exit 1)."""
import json
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_helpers import Server, fail  # noqa: E402

bin_dir, work = sys.argv[1:3]
work = os.path.join(work, "serve_api")
os.makedirs(work, exist_ok=True)
checks = 0


def expect(got, status, words, what):
    global checks
    st, body = got
    if st != status:
        fail("api", f"{what}: status {st}, expected {status}: {body}")
    if words and (not isinstance(body, dict) or words not in body.get("error", "")):
        fail("api", f"{what}: error {body!r} lacks {words!r}")
    checks += 1
    return body


def raw_request(url, text):
    """Sends raw HTTP bytes (paths urllib would normalise) and returns the status code. HOST in
    the text is replaced by the server's own host:port."""
    hostport = url.split("//")[1]
    host, port = hostport.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(text.replace("Host: x", "Host: " + hostport).encode())
        data = s.recv(4096).decode(errors="replace")
    return int(data.split(" ")[1])


player = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "players", "random_player.py")
with Server(bin_dir, work, extra=["--opponent", f"external:python3 {player}"]) as srv:
    c = srv.call
    expect(c("POST", "/api/games", raw=b"{not json"), 400, "not valid JSON", "malformed JSON")
    expect(c("POST", "/api/games", raw=b"[1,2]"), 400, "JSON object", "an array body")
    expect(c("POST", "/api/games", {"opponent": "heuristic_balanced", "colour": 1}), 400, "unknown field 'colour'", "unknown field")
    expect(c("POST", "/api/games", {"seat": 0}), 400, "'opponent'", "missing opponent")
    expect(c("POST", "/api/games", {"opponent": "heuristic_balanced", "seat": 2}), 400, "'seat'", "seat 2")
    expect(c("POST", "/api/games", {"opponent": "heuristic_balanced", "seed": -1}), 400, "'seed'", "negative seed")
    expect(c("POST", "/api/games", {"opponent": "nobody"}), 422, "no opponent 'nobody' is offered", "unknown bot")
    expect(c("POST", "/api/games", {"opponent": "checkpoint:/no/such/run"}), 422, "is offered", "a path as the opponent")
    expect(c("POST", "/api/games", {"opponent": "heuristic_balanced", "search": {"k": 3}}), 422, "not a network",
           "search over a bot")
    expect(c("GET", "/api/games"), 405, "POST", "GET on the games collection")
    expect(c("GET", "/api/games/0123456789abcdef0123456789abcdef"), 404, "no such game", "unknown id")
    expect(c("POST", "/api/games/0123456789abcdef0123456789abcdef/move", {"action": 1}), 404, "no such game", "move in an unknown game")
    # The play page's preselected opponent is one it offers; the strongest shipped agent
    # (models/lost-cities-styles-4h, docs/strength.md) is it wherever this build offers it. No entry
    # shows a path.
    pl = expect(c("GET", "/api/players"), 200, None, "the players")
    ids = [p["id"] for p in pl.get("players", [])]
    shipped = [i for i in ids if i == "model:lost-cities-styles-4h"]
    if pl.get("default") not in ids or (shipped and pl.get("default") != shipped[0]) or "extra:1" not in ids:
        fail("api", f"players: default {pl.get('default')!r} (shipped {shipped}, offered {ids})")
    if any("/" in p["label"] for p in pl["players"]):
        fail("api", f"a player's label shows a path: {pl['players']}")
    g = expect(c("POST", "/api/games", {"opponent": "heuristic_balanced", "seat": 0, "seed": 9}), 201, None, "a new game")
    gid = g["id"]
    if len(gid) != 32 or g["to_move"] != "you" or g["phase"] != "card":
        fail("api", f"new game: id {gid!r}, to_move {g['to_move']}, phase {g['phase']}")
    other = expect(c("POST", "/api/games", {"opponent": "random", "seat": 1, "seed": 9}), 201, None, "a second game")
    if other["id"] == gid:
        fail("api", "two games share an id")
    before = expect(c("GET", f"/api/games/{gid}"), 200, None, "the game's view")
    expect(c("POST", f"/api/games/{gid}/move", raw=b'{"action": "x"}'), 400, "'action'", "a string action")
    expect(c("POST", f"/api/games/{gid}/move", {"action": 99}), 400, "'action'", "an action out of range")
    expect(c("POST", f"/api/games/{gid}/move", {"action": 16}), 422, "not legal", "drawing in the card phase")
    expect(c("POST", f"/api/games/{gid}/move", raw=b'{"action": 1' + b' ' * 70000 + b'}'), 413, "too large", "an oversized body")
    after = expect(c("GET", f"/api/games/{gid}"), 200, None, "the view after refused moves")
    if after != before:
        fail("api", "a refused request changed the game")
    # The hint: the shipped agent's probabilities over exactly the legal moves (when this build has one).
    if pl.get("hint"):
        h = expect(c("GET", f"/api/games/{gid}/hint"), 200, None, "a hint")
        if sorted(m["id"] for m in h["moves"]) != sorted(a["id"] for a in after["legal"]) or \
                abs(sum(m["p"] for m in h["moves"]) - 1) > 1e-3 or h["moves"] != sorted(h["moves"], key=lambda m: -m["p"]):
            fail("api", f"hint {h} for legal {after['legal']}")
    else:
        expect(c("GET", f"/api/games/{gid}/hint"), 503, "no hint agent", "a hint without an agent")
    # Play the game out with legal moves; then no more moves.
    v = after
    while not v["over"]:
        pick = v["legal"][-1 if v["phase"] == "card" else 0]["id"]  # the draw phase: the deck, so the game ends
        v = expect(c("POST", f"/api/games/{gid}/move", {"action": pick}), 200, None, "a legal move")
    expect(c("POST", f"/api/games/{gid}/move", {"action": 1}), 409, "over", "a move after the end")
    if pl.get("hint"):
        expect(c("GET", f"/api/games/{gid}/hint"), 409, "your turn", "a hint after the end")
    # The move log: every move of both sides, in order, as the page writes them.
    if len(v["log"]) != v["moves"] or {e["who"] for e in v["log"]} != {"you", "opponent"} or \
            any(e["kind"] not in ("play", "discard", "draw_deck", "take") for e in v["log"]):
        fail("api", f"log of {len(v['log'])} entries for {v['moves']} moves: {v['log'][:4]}")
    st, line = c("GET", f"/api/games/{gid}/transcript")
    if st != 200 or line.get("totals") != [v["result"]["you"], v["result"]["opponent"]] or line.get("bot1") != "heuristic_balanced":
        fail("api", f"transcript: {st} {str(line)[:200]}")
    checks += 1
    # Paths outside the served folders, odd characters, unknown pages and resources.
    for path in ("/static/../../etc/passwd", "/static/..", "/api/../../etc/passwd", "/static/%2e%2e/x", "/a//b", "/static/a\\b"):
        st = raw_request(srv.url, f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        if st != 400:
            fail("api", f"GET {path}: status {st}, expected 400")
        checks += 1
    expect(c("GET", "/static/nothing.js"), 404, "no such page", "a missing static file")
    expect(c("GET", "/static/style.css/x"), 404, None, "a path under a file")
    expect(c("GET", "/etc/passwd"), 404, "no such page", "an unknown page")
    expect(c("GET", "/api/nothing"), 404, "no such API resource", "an unknown API resource")
    expect(c("GET", "/api/runs/nothing"), 404, "no run of that name", "an unknown run")
    expect(c("POST", "/api/replay", raw=b"not a transcript\n"), 422, "invalid JSON", "a bad transcript")
    expect(c("POST", "/api/replay", raw=b'{"deck": [1], "actions": []}\n'), 422, "deck", "a transcript with a bad deck")
    expect(c("POST", "/api/replay?game=x", raw=b"{}"), 400, "'game'", "a bad game index")
    st = raw_request(srv.url, "POST /api/replay HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                              "Content-Length: 99999999\r\n\r\n")
    if st != 413:
        fail("api", f"a 100 MB upload announced: status {st}, expected 413")
    checks += 1
    # An external program as the opponent (docs/external-players.md): it answers through the protocol.
    ext = expect(c("POST", "/api/games", {"opponent": "extra:1", "seat": 1, "seed": 4}), 201, None,
                 "a game against an external player (an --opponent extra)")
    if ext["to_move"] != "you" or len(ext["last_opponent_moves"]) != 2:
        fail("api", f"external opponent: to_move {ext['to_move']}, its moves {ext['last_opponent_moves']}")
    expect(c("POST", f"/api/games/{other['id']}/abandon", {}), 200, None, "abandoning a game")
    expect(c("GET", f"/api/games/{other['id']}"), 404, "no such game", "an abandoned game")
    expect(c("POST", f"/api/games/{other['id']}/abandon", {}), 404, "no such game", "abandoning it again")
    st, stats = c("GET", "/api/stats")
    if st != 200 or stats.get("games_created") != 3 or stats.get("live_games") != 2:
        fail("api", f"stats {stats}: expected exactly the 3 games created, 2 live")
    checks += 1
log = open(os.path.join(work, "serve.log")).read()
if log.count(" ms\n") < checks:
    fail("api", f"{log.count(' ms')} request lines logged for {checks} requests")
print(f"ok: api: {checks} checks; every request logged; SIGINT exits 0")
