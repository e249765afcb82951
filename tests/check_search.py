#!/usr/bin/env python3
"""check_search.py CFR_ARENA RUN_DIR: the determinized search player (apps/players/search_player.h).
check_search.py --value CFR_ARENA MMD_RUN_DIR DEEP_CFR_RUN_DIR: its value leaves (depth=D), below.
  1. search:RUN?k=1&n=1&prior=0 plays exactly the network's moves: its report equals
     checkpoint:RUN's, field for field (but the names and timings), on the same seeds;
  3. rollout=bot:NAME rolls out with the bot (no forwards); k=0 is refused (exit 2, naming it);
  2. search:RUN?k=2&n=2 searches (its cost line counts searched decisions and rollouts), plays every
     game to its end, and gives the same report twice (its RNG streams are fixed by game and move);
  4. its rollouts are coroutines batched by a scheduler: with chunk=8 (every forward 8 rows) the
     report is the same under recursive, interleaved and pooled (sched=NAME), and the batches differ;
  5. belief=2&pool=8 weighs its deals (the cost's belief line: decisions weighed, an effective pool
     below 8, i.e. unequal weights), the same under recursive and interleaved; btemp=0 is exit 2;
  6. reply=3 searches the opponent's replies: 3 rollouts per candidate and deal (its cost line:
     k·n·3 rollouts per searched decision), the same under recursive and interleaved, other
     moves than reply=1 on the same deals; with rollout=bot:NAME it is refused (exit 2).
  7. z=Z (the paired test): z=0 is the same match as without it; a huge z overrides the network on
     fewer decisions than z=0 on the same deals; z=-1 is refused (exit 2);
  8. peek=1|2 (a diagnostic that cheats: the opponent's real hand, or the real deal) plays other
     games than the uniform deals; peek=3 is refused (exit 2).
  9. win=W (finished rollouts valued win_shaped): win=0 is the same match as without it over a
     checkpoint without mmd.win_reward; win=1000 plays other games; win=-1 is refused (exit 2).
 10. rtemp=T (sampled rollouts from softmax(logits / T)): rtemp=1 is the same match as without it;
     rtemp=5 plays other games; rtemp=0, and rtemp with greedy rollouts, are refused (exit 2).
 11. sims=S (the tree over the turn, engine/traversal/turn_tree.h): sims=8 plays exactly the
     network's moves with k=1; sims=24&wave=8&chunk=8 searches (its cost line: 24 rollouts a searched
     decision, and a tree line), the same under recursive and pooled, other games than the flat
     search on the same deals; sims with belief, and wave=0, are refused (exit 2).
 12. opp=MODEL|... (who plays the opponent in the rollouts): opp=net is the same match as without
     it; opp=bot:heuristic_balanced plays other games; opp=bot:random|bot:heuristic_balanced weighs
     the models by the opponent's moves, most of the posterior on bot:random against the random
     bot and on bot:heuristic_balanced against heuristic_balanced; with net among the models too
     (the network's likelihood), the same match under recursive and pooled (each rollout its own
     bot instance); a model that is neither net nor bot:NAME, an
     unknown bot, opp with sims, and eps=0 are refused (exit 2).
 13. nest=K (a nested search in every rollout at the decider's next decision): nest=1 is the same
     match as without it; with greedy rollouts, nn=1 and z=1000 (one deal: the paired test never
     passes, so the nested search plays the network's first move, as a greedy rollout does) the same
     match as without nest while its rollouts play more than twice the moves (the nested rollouts
     ran); nest=2&nn=2 plays other games than no nest, the same under recursive and pooled with
     chunk=8; nest with sims, reply, opp or bot rollouts, nest=17, nd=-1 and a key given twice are
     refused (exit 2). --value: nest=2&nd=2 (nested value leaves) plays reproducibly with more
     forwards; nd=2 on a checkpoint without a value network is refused.
Prints "ok: ..." or "FAIL: ..." (exit 1)."""
import json
import subprocess
import sys

value_mode = sys.argv[1] == "--value"
arena, run = sys.argv[2:4] if value_mode else sys.argv[1:3]


def match(bot0, games=10, bot1="random"):
    p = subprocess.run([arena, "--bot0", bot0, "--bot1", bot1, "--games", str(games), "--seed", "3", "--json"],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        print(f"FAIL: {bot0}: exit {p.returncode}: {p.stderr[-1000:]}")
        sys.exit(1)
    return json.loads(p.stdout), p.stderr


def same(a, b, what):
    skip = {"bot0", "bot1", "seconds", "games_per_second"}
    bad = [k for k in sorted(set(a) | set(b)) if k not in skip and (k not in a or k not in b or a[k] != b[k])]
    if bad:
        print(f"FAIL: {what}: differ in {bad}: {[(a.get(k), b.get(k)) for k in bad][:5]}")
        sys.exit(1)


def differs(a, b, what):
    if all(a[k] == b[k] for k in ("avg_score_diff", "avg_score0", "decisions0")):
        print(f"FAIL: {what}")
        sys.exit(1)


def cost_field(err, after, before, what):
    """The text between `after` and `before` in the search player's cost line."""
    try:
        return err.split(after)[1].split(before)[0]
    except IndexError:
        print(f"FAIL: {what}: no cost line: {err[-500:]}")
        sys.exit(1)


def cost(err, what):
    """The forwards count and the searched decisions of the search player's cost line."""
    try:
        return int(err.split(" forwards")[0].split()[-1]), int(err.split("(")[1].split(" searched")[0])
    except (IndexError, ValueError):
        print(f"FAIL: {what}: no cost line: {err[-500:]}")
        sys.exit(1)


if value_mode:
    # depth=D: rollouts stop after D moves and an MMD checkpoint's value network values the state.
    #   1. depth ≥ cap is the full rollout: the same report as depth=0;
    #   2. depth=2 plays every game, reproducibly, with fewer forwards than full rollouts (each
    #      rollout: 2 policy queries and 1 value query, not up to 40);
    #   3. with chunk=8 the same under recursive and interleaved;
    #   4. a checkpoint without a value network (Deep CFR) is refused with depth, exit 2 naming it.
    deep_cfr_run = sys.argv[4]
    full, err_full = match(f"search:{run}?k=2&n=2&cap=40", games=4)
    deep, _ = match(f"search:{run}?k=2&n=2&cap=40&depth=40", games=4)
    same(full, deep, "depth = cap against depth 0")
    v1, err1 = match(f"search:{run}?k=2&n=2&cap=40&depth=2", games=4)
    v2, _ = match(f"search:{run}?k=2&n=2&cap=40&depth=2", games=4)
    same(v1, v2, "the same value-leaf search twice")
    (f_full, _), (f_leaf, searched) = cost(err_full, "full rollouts"), cost(err1, "depth=2")
    if v1["games"] != 4 or v1["timeouts"] != 0 or searched < 10 or not f_leaf < f_full:
        print(f"FAIL: depth=2: {v1['games']} games, {v1['timeouts']} timeouts, {searched} searched, {f_leaf} forwards "
              f"(full rollouts {f_full})")
        sys.exit(1)
    a, _ = match(f"search:{run}?k=2&n=2&cap=40&depth=2&chunk=8&sched=recursive", games=4)
    b, _ = match(f"search:{run}?k=2&n=2&cap=40&depth=2&chunk=8&sched=interleaved", games=4)
    same(a, b, "value-leaf search under recursive and interleaved")
    p = subprocess.run([arena, "--bot0", f"search:{deep_cfr_run}?depth=2", "--bot1", "random", "--games", "2"],
                       capture_output=True, text=True)
    if p.returncode != 2 or "depth=2 needs the checkpoint's value network" not in p.stderr:
        print(f"FAIL: depth on a checkpoint without a value network: exit {p.returncode}: {p.stderr}")
        sys.exit(1)
    # depth=6: the rollouts reach the decider's next turn, where the nested search runs.
    _, err_d6 = match(f"search:{run}?k=2&n=2&cap=40&depth=6", games=4)
    n1, err_n1 = match(f"search:{run}?k=2&n=2&cap=40&depth=6&nest=2&nn=2&nd=2", games=4)
    n2, _ = match(f"search:{run}?k=2&n=2&cap=40&depth=6&nest=2&nn=2&nd=2", games=4)
    same(n1, n2, "the same nested value-leaf search twice")
    f_d6, f_nest = cost(err_d6, "depth=6")[0], cost(err_n1, "nest=2 nd=2")[0]
    if n1["games"] != 4 or not f_nest > f_d6:
        print(f"FAIL: nest=2&nd=2: {n1['games']} games, {f_nest} forwards (without nest {f_d6})")
        sys.exit(1)
    p = subprocess.run([arena, "--bot0", f"search:{deep_cfr_run}?nest=2&nd=2", "--bot1", "random", "--games", "2"],
                       capture_output=True, text=True)
    if p.returncode != 2 or "nd=2 needs the checkpoint's value network" not in p.stderr:
        print(f"FAIL: nd on a checkpoint without a value network: exit {p.returncode}: {p.stderr}")
        sys.exit(1)
    print(f"ok: depth >= cap is the full rollout; depth=2 searched {searched} decisions reproducibly with {f_leaf} forwards "
          f"(full rollouts {f_full}), the same under recursive and interleaved; refused without a value network; "
          f"nest=2&nd=2 reproducible with {f_nest} forwards (depth=6 without it {f_d6})")
    sys.exit(0)

net, _ = match(f"checkpoint:{run}")
plain, err = match(f"search:{run}?k=1&n=1&prior=0")
same(net, plain, "k=1, n=1, prior 0 against the network")
if "0 searched" not in err:
    print(f"FAIL: k=1 searched: {err}")
    sys.exit(1)
s1, err1 = match(f"search:{run}?k=2&n=2&cap=40", games=4)
s2, _ = match(f"search:{run}?k=2&n=2&cap=40", games=4)
same(s1, s2, "the same search twice")
searched = int(err1.split("(")[1].split(" searched")[0])
if s1["games"] != 4 or s1["timeouts"] != 0 or searched < 10 or " rollouts" not in err1:
    print(f"FAIL: k=2 n=2: {s1['games']} games, {s1['timeouts']} timeouts, {searched} searched decisions: {err1}")
    sys.exit(1)
b, errb = match(f"search:{run}?k=2&n=2&cap=40&rollout=bot:heuristic_balanced", games=4)
if b["games"] != 4 or "0 forwards" not in errb:
    print(f"FAIL: bot rollouts: {b['games']} games; {errb}")
    sys.exit(1)
reports, forwards = [], []
for sched in ("recursive", "interleaved", "pooled"):
    r, e = match(f"search:{run}?k=2&n=2&cap=40&chunk=8&sched={sched}", games=4)
    reports.append(r)
    forwards.append(int(e.split(" forwards")[0].split()[-1]))
for r, sched in zip(reports[1:], ("interleaved", "pooled")):
    same(reports[0], r, f"search under recursive and {sched}")
if not forwards[0] > forwards[1] or reports[0]["decisions0"] < 10:
    print(f"FAIL: the schedulers batched alike ({forwards} forwards): the comparison proves nothing")
    sys.exit(1)
# belief=L: deals drawn from a pool weighed by the opponent's last L turns under the network.
bel1, errbel = match(f"search:{run}?k=2&n=2&cap=40&belief=2&pool=8&chunk=8&sched=recursive", games=4)
bel2, _ = match(f"search:{run}?k=2&n=2&cap=40&belief=2&pool=8&chunk=8&sched=interleaved", games=4)
same(bel1, bel2, "the belief search under recursive and interleaved")
try:
    line = errbel.split("belief over ")[1]
    weighed, effective = int(line.split()[0]), float(line.split("effective pool ")[1].split()[0])
except (IndexError, ValueError):
    print(f"FAIL: belief=2: no belief line: {errbel[-500:]}")
    sys.exit(1)
if bel1["games"] != 4 or weighed < 10 or not 1.0 <= effective < 8.0:
    print(f"FAIL: belief=2: {bel1['games']} games, {weighed} decisions weighed, effective pool {effective} of 8 "
          "(equal weights would be 8)")
    sys.exit(1)
# reply=M: each (candidate, deal) rollout is played M times, the opponent's first move its network's
# 1st, 2nd, ... most probable; the candidate's value on the deal is the least of them.
rep1, errrep = match(f"search:{run}?k=2&n=2&cap=40&reply=3&chunk=8&sched=recursive", games=4)
rep2, _ = match(f"search:{run}?k=2&n=2&cap=40&reply=3&chunk=8&sched=interleaved", games=4)
same(rep1, rep2, "the reply search under recursive and interleaved")
plain1, _ = match(f"search:{run}?k=2&n=2&cap=40&chunk=8&sched=recursive", games=4)
try:
    head = errrep.split(" rollouts,")[0]
    decisions, per = int(head.split(" decisions")[0].split()[-1]), float(head.split()[-1])
    rep_searched = int(errrep.split("(")[1].split(" searched")[0])
except (IndexError, ValueError):
    print(f"FAIL: reply=3: no cost line: {errrep[-500:]}")
    sys.exit(1)
if rep_searched < 10 or abs(per * decisions / rep_searched - 12) > 0.05 * decisions / rep_searched + 1e-9:
    print(f"FAIL: reply=3: {per} rollouts a decision over {decisions} decisions, {rep_searched} searched: "
          f"want 2 candidates x 2 deals x 3 replies = 12 a searched decision")
    sys.exit(1)
differs(rep1, plain1, "reply=3 played the same games as reply=1: the replies changed nothing")
p = subprocess.run([arena, "--bot0", f"search:{run}?reply=2&rollout=bot:heuristic_balanced", "--bot1", "random", "--games", "2"],
                   capture_output=True, text=True)
if p.returncode != 2 or "reply=2 with rollout=bot:heuristic_balanced" not in p.stderr:
    print(f"FAIL: search reply=2 with bot rollouts: exit {p.returncode}: {p.stderr}")
    sys.exit(1)
p = subprocess.run([arena, "--bot0", f"search:{run}?belief=2&btemp=0", "--bot1", "random", "--games", "2"],
                   capture_output=True, text=True)
if p.returncode != 2 or "btemp=0: must be a number > 0" not in p.stderr:
    print(f"FAIL: search btemp=0: exit {p.returncode}: {p.stderr}")
    sys.exit(1)
p = subprocess.run([arena, "--bot0", f"search:{run}?sched=nobody", "--bot1", "random", "--games", "2"], capture_output=True, text=True)
if p.returncode != 2 or "unknown scheduler 'nobody'" not in p.stderr:
    print(f"FAIL: search sched=nobody: exit {p.returncode}: {p.stderr}")
    sys.exit(1)
p = subprocess.run([arena, "--bot0", f"search:{run}?k=0", "--bot1", "random", "--games", "2"], capture_output=True, text=True)
if p.returncode != 2 or "k=0: must be an integer in [1, 16]" not in p.stderr:
    print(f"FAIL: search k=0: exit {p.returncode}: {p.stderr}")
    sys.exit(1)
# z=Z: an override must lead the network's move by Z standard errors of the paired difference.
def overrides(err):
    return int(cost_field(err, " searched, ", " overriding", "z"))


z0, errz0 = match(f"search:{run}?k=3&n=4&cap=40&prior=0&z=0", games=4)
plain0, errplain0 = match(f"search:{run}?k=3&n=4&cap=40&prior=0", games=4)
same(z0, plain0, "z=0 and no z")
zbig, errzbig = match(f"search:{run}?k=3&n=4&cap=40&prior=0&z=1000", games=4)
if not overrides(errzbig) < overrides(errz0) or overrides(errz0) < 5:
    print(f"FAIL: z=1000 overrode {overrides(errzbig)} decisions, z=0 {overrides(errz0)}: want fewer with the test")
    sys.exit(1)
peek, _ = match(f"search:{run}?k=3&n=4&cap=40&prior=0&peek=2", games=4)
differs(peek, plain0, "peek=2 played the same games as the uniform deals")
win0, _ = match(f"search:{run}?k=3&n=4&cap=40&prior=0&win=0", games=4)
same(win0, plain0, "win=0 and no win")
winbig, _ = match(f"search:{run}?k=3&n=4&cap=40&prior=0&win=1000", games=4)
differs(winbig, plain0, "win=1000 played the same games as win=0")
temp1, _ = match(f"search:{run}?k=3&n=4&cap=40&prior=0&rtemp=1", games=4)
same(temp1, plain0, "rtemp=1 and no rtemp")
temp5, _ = match(f"search:{run}?k=3&n=4&cap=40&prior=0&rtemp=5", games=4)
differs(temp5, plain0, "rtemp=5 played the same games as rtemp=1")
tree1, _ = match(f"search:{run}?sims=8&k=1&cap=40")
same(tree1, net, "sims=8 k=1 and the network")
trees = [match(f"search:{run}?sims=24&wave=8&chunk=8&cap=40&depth=0&sched={s}", games=4) for s in ("recursive", "pooled")]
same(trees[0][0], trees[1][0], "sims=24 under recursive and pooled")
tree_searched = cost(trees[0][1], "sims=24")[1]
tree_per = float(trees[0][1].split("overriding the network): ")[1].split(" rollouts")[0]) if "overriding the network): " in trees[0][1] else 0
if tree_searched < 5 or "tree: " not in trees[0][1] or abs(tree_per - 24 * tree_searched / trees[0][0]["decisions0"]) > 0.06:
    print(f"FAIL: sims=24: {tree_searched} searched decisions, {tree_per} rollouts a decision over {trees[0][0]['decisions0']}: "
          f"want 24 a searched decision and a tree line: {trees[0][1][-400:]}")
    sys.exit(1)
flat_same_deals, _ = match(f"search:{run}?k=3&n=8&chunk=8&cap=40&depth=0", games=4)
differs(trees[0][0], flat_same_deals, "sims=24 played the same games as the flat search")
# opp=MODEL|...: who plays the opponent's moves in the rollouts, several weighed by the opponent's moves.
opp_net, _ = match(f"search:{run}?k=3&n=4&cap=40&prior=0&opp=net", games=4)
same(opp_net, plain0, "opp=net and no opp")
opp_bot, _ = match(f"search:{run}?k=3&n=4&cap=40&prior=0&opp=bot:heuristic_balanced", games=4)
differs(opp_bot, plain0, "opp=bot:heuristic_balanced played the same games as opp=net")


def posterior(err, model):
    """The mean posterior of `model` in the search player's opponent-models line, and the decisions weighed."""
    try:
        line = err.split("opponent models over ")[1].split("\n")[0]
        return float(line.split(f"{model} ")[1].split(",")[0]), int(line.split()[0])
    except (IndexError, ValueError):
        print(f"FAIL: no opponent-models line with {model}: {err[-500:]}")
        sys.exit(1)


two = "bot:random|bot:heuristic_balanced"
_, err_rand = match(f"search:{run}?k=2&n=16&cap=40&opp={two}", games=4)
p_rand, weighed_rand = posterior(err_rand, "bot:random")
_, err_bal = match(f"search:{run}?k=2&n=16&cap=40&opp={two}", games=4, bot1="heuristic_balanced")
p_bal, weighed_bal = posterior(err_bal, "bot:heuristic_balanced")
if weighed_rand < 10 or weighed_bal < 10 or not p_rand > 0.8 or not p_bal > 0.8:
    print(f"FAIL: opponent models: against random the posterior of bot:random {p_rand} over {weighed_rand} decisions, against "
          f"heuristic_balanced that of bot:heuristic_balanced {p_bal} over {weighed_bal}: want both above 0.8")
    sys.exit(1)
models = [match(f"search:{run}?k=2&n=4&cap=40&chunk=8&hist=4&opp=net|{two}&sched={s}", games=4, bot1="heuristic_balanced")
          for s in ("recursive", "pooled")]
same(models[0][0], models[1][0], "opponent models under recursive and pooled")
posterior(models[0][1], "net")
# nest=K: a nested search in every rollout, at the decider's first decision after the opponent moved.
nest1, _ = match(f"search:{run}?k=3&n=4&cap=40&prior=0&nest=1", games=4)
same(nest1, plain0, "nest=1 and no nest")


def rollout_moves(err, what):
    return float(cost_field(err, " rollouts, ", " rollout moves", what))


greedy, err_greedy = match(f"search:{run}?k=3&n=4&cap=40&prior=0&z=1000&rollout=greedy", games=4)
greedy_nest, err_greedy_nest = match(f"search:{run}?k=3&n=4&cap=40&prior=0&z=1000&rollout=greedy&nest=3&nn=1", games=4)
same(greedy_nest, greedy, "greedy rollouts with a nested search that never overrides, and without one")
moves_plain, moves_nest = rollout_moves(err_greedy, "greedy"), rollout_moves(err_greedy_nest, "greedy nest=3 nn=1")
if not moves_nest > 2 * moves_plain or moves_plain <= 0:
    print(f"FAIL: nest=3&nn=1: {moves_nest} rollout moves a decision, {moves_plain} without it: want the nested rollouts' too")
    sys.exit(1)
nested = [match(f"search:{run}?k=3&n=4&cap=40&prior=0&chunk=8&nest=2&nn=2&sched={s}", games=4) for s in ("recursive", "pooled")]
same(nested[0][0], nested[1][0], "nest=2 under recursive and pooled")
plain_chunk, _ = match(f"search:{run}?k=3&n=4&cap=40&prior=0&chunk=8&sched=recursive", games=4)
differs(nested[0][0], plain_chunk, "nest=2 played the same games as no nest")
for bad, want in (("nest=2&sims=8", "nest=2 with sims"), ("nest=2&reply=2", "nest=2 with reply"),
                  ("nest=2&opp=bot:random", "nest=2 with opp"), ("nest=2&rollout=bot:random", "nest=2 with rollout=bot"),
                  ("nest=17", "nest=17: must be an integer in [0, 16]"), ("nd=-1", "nd=-1: must be an integer"),
                  ("k=3&n=8&k=8", "key 'k' given twice")):
    p = subprocess.run([arena, "--bot0", f"search:{run}?{bad}", "--bot1", "random", "--games", "2"], capture_output=True, text=True)
    if p.returncode != 2 or want not in p.stderr:
        print(f"FAIL: search {bad}: exit {p.returncode}: {p.stderr}")
        sys.exit(1)
for bad, want in (("opp=bot:heuristic_balanced|bogus", "'bogus' must be net or bot:NAME"), ("opp=bot:nobody", "nobody"),
                  ("opp=net|bot:random&sims=8", "opp with sims"), ("opp=net|bot:random&eps=0", "eps=0: must be a number in (0, 1]"),
                  ("opp=net|net", "'net' twice"), ("sims=4&belief=2", "sims=4 (the tree over the turn) with belief"), ("sims=4&wave=0", "wave=0: must be an integer in [1, 4096]"),
                  ("z=-1", "z=-1: must be a number"), ("peek=3", "peek=3: must be an integer in [0, 2]"),
                  ("win=-1", "win=-1: must be a number ≥ 0"), ("rtemp=0", "rtemp=0: must be a number > 0"),
                  ("rtemp=2&rollout=greedy", "rtemp=2 needs sampled rollouts")):
    p = subprocess.run([arena, "--bot0", f"search:{run}?{bad}", "--bot1", "random", "--games", "2"], capture_output=True, text=True)
    if p.returncode != 2 or want not in p.stderr:
        print(f"FAIL: search {bad}: exit {p.returncode}: {p.stderr}")
        sys.exit(1)
print(f"ok: search k=1 n=1 plays the network's {net['decisions0']} moves exactly; k=2 n=2 searched {searched} decisions, "
      f"reproducibly; the same under recursive, interleaved and pooled ({forwards[0]}, {forwards[1]}, {forwards[2]} forwards); "
      f"belief=2 weighed {weighed} decisions (effective pool {effective:.1f} of 8), the same under two schedulers; "
      f"reply=3 played 12 rollouts a searched decision, the same under two schedulers, other games than reply=1; "
      f"z=1000 overrode {overrides(errzbig)} decisions where z=0 overrode {overrides(errz0)}; peek=2 played other games; win=1000 played other games than win=0; rtemp=5 other games than rtemp=1; "
      f"sims=8 k=1 is the network; sims=24 searched {tree_searched} decisions, the same under recursive and pooled, other games than the flat search; "
      f"opp=net is the network's rollouts, opp=bot:heuristic_balanced other games; the posterior of bot:random {p_rand:.2f} "
      f"against random, of bot:heuristic_balanced {p_bal:.2f} against it, the same under recursive and pooled; "
      f"nest=3 that never overrides is the plain greedy search with {moves_nest:.0f} rollout moves a decision against "
      f"{moves_plain:.0f}; nest=2 other games, the same under recursive and pooled")
