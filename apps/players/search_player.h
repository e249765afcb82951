#pragma once
// The determinized search player `search:CHECKPOINT[?k=3&n=8&prior=20&z=0&cap=200&depth=0&rollout=sampled|greedy|bot:NAME
// &sched=interleaved&chunk=0]`
// (docs/search.md): at each decision the strategy network's top-k legal moves are each tried on
// the same n deals consistent with what the player has seen (State::resample_hidden), each deal
// finished by rollouts in which the network plays both sides; a move's value is its mean final
// score difference, plus prior × its network probability, so that search overrides the network
// only on clear evidence. With depth=D a rollout stops after D moves and the checkpoint's value
// network (an MMD run's) values the state it reached, so that many more deals cost the same. Every rollout is a coroutine that
// suspends at each network query, and a scheduler (sched=NAME, as in cfr-run) batches the queries of all the rollouts of all the
// games a match has pending, exactly as it batches traversals; with chunk=N every forward has N rows, so the moves chosen are the
// same under every scheduler. The rule itself (candidates, the prior, the choice) is
// engine/traversal/determinized_search.h's, shared with MMD's search teacher. With sims=S the
// player searches a tree over its turn instead (engine/traversal/turn_tree.h: sequential halving
// over the top-k moves at the root on common deals, PUCT through the rest of the turn, the same
// rollouts below it; docs/search.md "A tree over the turn").
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/games/lost_cities.h"
#include "engine/games/match.h"

namespace cfr {

struct SearchOptions {
  int top_k = 3;        // candidates: the network's k most probable legal moves
  int deals = 8;        // determinizations per decision, the same for every candidate
  double prior = 20.0;  // bonus per unit of network probability (score-difference points)
  /// z=Z > 0: a move other than the network's first overrides it only when its mean difference
  /// from the first over the same deals exceeds Z standard errors (a paired test); 0: no test.
  double z = 0.0;
  int rollout_cap = 200;  // moves per rollout, then the score difference as it stands
  int depth = 0;  // depth=D > 0: after D rollout moves the checkpoint's value network values the state (0: play to the end)
  bool sampled_rollouts = true;  // rollouts sample the network's softmax (false: argmax)
  double rollout_temp = 1.0;     // rtemp=T: sampled rollouts draw from softmax(logits / T)
  std::string rollout_bot;       // rollout=bot:NAME: a bot plays both sides of the rollouts instead
  /// opp=MODEL[|MODEL...], MODEL = net or bot:NAME: who plays the opponent's moves in the
  /// rollouts (the network always plays the decider's). One model: that one (empty, or net: the
  /// network plays both sides, as before). Several: at each decision each model's likelihood of
  /// the opponent's last `hist` turns is measured on every deal's rebuilt history (as belief=L
  /// rebuilds it), and the deals are shared among the models by their posterior (a uniform prior),
  /// so that the search plays against who the opponent's moves say it is (docs/search.md
  /// "Opponent models").
  std::vector<std::string> opponent_models;
  int model_turns = 8;       // hist=L: the opponent's last L turns weigh the models
  double model_noise = 0.1;  // eps=E: a bot's move is the one seen with probability 1 − E (E spread over the legal moves)
  std::string scheduler = "interleaved";  // sched=NAME: the scheduler that batches the rollouts' queries
  int chunk = 0;  // chunk=N: every forward has exactly N rows (batch-invariant: the same result under every scheduler)
  /// belief=L > 0: deals are drawn from a pool weighed by the likelihood of the opponent's last L
  /// turns under the network (engine/games/opponent_turns.h); 0: every consistent deal alike.
  int belief_turns = 0;
  int pool = 0;              // pool=M: deals weighed (0: 4·n), n of them resampled by weight
  double belief_temp = 1.0;  // btemp=T: the log-likelihoods divided by T (T > 1 trusts the model less)
  double belief_ess = 0.0;   // ess=F: flatter weights where needed to keep an effective pool of F·pool
  /// reply=M > 1: the opponent's replies are searched. Each candidate's rollout on each deal is
  /// played M times; at the opponent's first decision copy i plays its network's (i+1)-th most
  /// probable legal move (the last one where fewer are legal), then all continue as before on the
  /// same RNG stream; the candidate's value on the deal is the least of the M (the opponent
  /// answers with the reply worst for the decider). 1: the network's sampled reply, as before.
  int replies = 1;
  /// peek=1|2: a diagnostic that cheats, never a player to rank: every deal has the opponent's
  /// real hand, the deck resampled (1: what a perfect belief would give), or is the real deal, the
  /// deck's order too (2: perfect information); only the rollouts' random streams differ between
  /// deals. It measures how much the uniform deals cost the search.
  int peek = 0;
  /// win=W ≥ 0: a finished rollout's value is win_shaped(return, W) (W more for a win, W less for
  /// a loss), whatever the checkpoint's mmd.win_reward; with depth=0 every rollout finishes, so the
  /// search weighs winning beside the score difference at every decision. Unset (NaN): the
  /// checkpoint's mmd.win_reward, as its value leaves are.
  double win = std::nan("");
  /// sims=S > 0: a tree over the decider's turn instead of the flat search (engine/traversal/turn_tree.h,
  /// docs/search.md "A tree over the turn"): sequential halving over the network's k most probable
  /// moves at the root on common deals (S/⌈log2 k⌉ simulations a round, split between the moves
  /// still in, at least one each), each simulation a deal, the rest of the turn by PUCT, then a
  /// rollout as above (depth, rtemp, win, cap); the move the halving leaves is played if it passes
  /// the paired test z against the network's first on their common deals. n and prior are the flat
  /// search's (unused); belief, reply, peek and bot rollouts are refused with it.
  int sims = 0;
  int wave = 32;       // wave=B: simulations selected before any returns (their rollouts batched together)
  double puct = 20.0;  // c=C: PUCT's exploration constant, in the game's return units (score points)
  int turn_depth = 8;  // turn=D: the turn's first D decisions in the tree (1: the root only; then the rollouts play)
  /// nest=K > 1: a nested search in every rollout (docs/search.md "A nested search in the rollouts"):
  /// at the decider's first decision after the opponent has moved, the rollout does not sample the
  /// network but searches as the root does (the network's K most probable moves on `nn` deals
  /// resampled from the decider's view of the rollout's state, common to the moves, each finished by
  /// a rollout of `nd` moves and the value leaf, or to the end with nd=0; the same prior and paired
  /// test z), plays the move found and goes on. 0: off. Refused with sims, reply, opp and bot rollouts.
  int nest_k = 0;
  int nest_deals = 8;   // nn=N: the nested search's deals
  int nest_depth = -1;  // nd=D: the nested rollouts' moves before the value leaf (−1: depth's; 0: to the end)
  /// ismcts=N > 0: information-set MCTS instead (engine/games/ismcts_bot.h, the `ismcts` bot's
  /// defaults: c=0.2, heuristic_expert rollouts or rollout=bot:NAME's, the rollout bot's progressive
  /// bias below the root) of N iterations, whose root moves are biased toward the network's
  /// probabilities by iw · π / (visits + 1), its most probable move tried first; the root's most
  /// visited move is played. k, n, prior, z and the network's rollouts are unused; refused with
  /// sims, nest, opp, reply, belief, peek and depth. 0: off.
  int ismcts_iters = 0;
  double ismcts_weight = 1.0;  // iw=W
  /// sym=K > 1: the network's probabilities at the decision (the candidates and the prior; not the
  /// rollouts') averaged over K namings of the colours (the identity and K − 1 others drawn once
  /// from a fixed stream, at most n_colors! in all): Lost Cities treats every colour alike, so each
  /// naming is the same position, and the mean is a test-time ensemble of the one network. With k=1
  /// the player is that averaged network, greedy.
  int sym = 1;
};

/// Parses
/// "CHECKPOINT?k=3&n=8&prior=20&z=0&cap=200&depth=0&rollout=sampled|greedy|bot:NAME&opp=net|bot:NAME|...&hist=L&eps=E&sched=NAME&chunk=N
/// &belief=L&pool=M&btemp=T&ess=F&reply=M&peek=0|1|2&win=W&rtemp=T&sims=S&wave=B&c=C&turn=D&nest=K&nn=N&nd=D&ismcts=N&iw=W&sym=K"
/// (all keys optional); InputError naming a bad key or value.
SearchOptions parse_search_spec(const std::string& spec, std::string& checkpoint);

/// The search player over a checkpoint's strategy network. Its RNG streams: deal j of game g's
/// decision at move m is resampled from derive_seed(kSearchStream, g, m, j); the rollouts from that
/// deal use derive_seed(kSearchStream + 1, g, m, j) for every candidate (common random numbers).
/// At match end it prints its cost per decision to stderr. Its name in reports is "search:SPEC".
std::unique_ptr<lc::BatchBot> make_search_player(const std::string& spec, const lc::Rules& rules);
inline constexpr std::uint64_t kSearchStream = 0x5345415243480000ULL;  // "SEARCH"

}  // namespace cfr
