#include "apps/serve/play.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>

#include <fmt/format.h>
#include <boost/asio/post.hpp>

#include "engine/core/errors.h"
#include "engine/core/rng.h"
#include "engine/games/bots.h"
#include "engine/games/external_player.h"
#include "engine/games/replay.h"

namespace cfr::serve {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct GameRoom::Game {
  std::string id;
  int index = 0;  // for the opponent's BatchBot events
  std::string opponent, opponent_label;
  std::shared_ptr<Slot> slot;
  std::string client;
  int seat = 0;  // the person's
  std::uint64_t seed = 0;
  std::array<int, lc::kMaxDeck> deck{};
  int deck_size = 0;
  // The fields below. The slot's worker is the one writer of state, actions, log, ended_told and
  // ended_message: it reads them unlocked and writes them under mu; every other reader locks mu.
  mutable std::mutex mu;
  lc::State state;
  std::vector<int> actions;
  json log = json::array();                      // every move, as the pages write it
  std::vector<std::string> last_opponent_moves;  // since the person's last move
  Rng opponent_rng{0};
  bool ended_told = false;
  bool busy = false;          // a turn of it is queued or on a worker
  bool hinting = false;       // a hint for it is queued or on a worker
  std::string ended_message;  // ended by the server (move budget, forfeit): no more moves
  Clock::time_point touched = Clock::now();

  // The deck is shuffled once: the transcript records it, the game is dealt from it (as deal() would).
  Game(const lc::Rules& rules, std::uint64_t deal_seed)
      : seed(deal_seed),
        deck_size(lc::State::shuffled_deck(rules, deal_seed, deck)),
        state(lc::State::from_deck(rules, std::span<const int>(deck.data(), deck_size))) {}
};

/// One opponent: its player (used by one worker at a time) and the turns waiting for it.
struct GameRoom::Slot {
  std::string key, spec, label;
  bool slow = false;
  std::optional<lc::AnyPlayer> player;  // the worker serving the slot only
  // Under the room's mutex:
  std::deque<Turn> pending;
  bool scheduled = false;
  std::size_t live = 0;
};

struct GameRoom::Turn {
  enum class Kind { kStart, kMove, kEnd } kind;
  std::shared_ptr<Game> game;
  int action = 0;
  Done done;  // none for kEnd
};

namespace {

std::string random_id() {
  static thread_local std::random_device rd;
  std::uint64_t a = (static_cast<std::uint64_t>(rd()) << 32) ^ rd(), b = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  return fmt::format("{:016x}{:016x}", a, b);
}

json error_json(const std::string& what) { return {{"error", what}}; }

}  // namespace

double rounded_prior(double prior) {
  if (!(prior > 0.05)) return 0;  // NaN too
  double best = 0;
  for (double decade = 0.1; decade < 2000; decade *= 10)
    for (const double m : {1.0, 2.0, 5.0}) {
      const double v = std::round(decade * m * 10) / 10;  // 0.1, 0.2, 0.5, 1, ... exactly as printed
      if (v > 1000) break;
      if (std::abs(v - prior) < std::abs(best - prior)) best = v;
    }
  return best;
}

GameRoom::GameRoom(PlayOptions opts, PlayerFactory factory, Resolver resolve)
    : opts_(std::move(opts)),
      factory_(std::move(factory)),
      resolve_(std::move(resolve)),
      fast_(static_cast<std::size_t>(std::max(1, opts_.fast_workers))),
      slow_(static_cast<std::size_t>(std::max(1, opts_.slow_workers))) {}

GameRoom::~GameRoom() {
  fast_.join();
  slow_.join();
  // The opponents hear that the games still open are abandoned (an external player is told).
  for (auto& [key, s] : slots_)
    if (s->player && s->player->batch) s->player->batch->match_ended();
}

void GameRoom::enqueue_locked(Slot& s, Turn t) {
  s.pending.push_back(std::move(t));
  if (s.scheduled) return;
  s.scheduled = true;
  auto self = slots_.at(s.key);
  boost::asio::post(s.slow ? slow_ : fast_, [this, self] { serve_slot(self); });
}

void GameRoom::forget_locked(const std::shared_ptr<Game>& g) {
  if (games_.erase(g->id) == 0) return;
  if (auto it = client_games_.find(g->client); it != client_games_.end() && --it->second == 0) client_games_.erase(it);
  --g->slot->live;
  enqueue_locked(*g->slot, Turn{.kind = Turn::Kind::kEnd, .game = g, .action = 0, .done = {}});
}

void GameRoom::create(const NewGameRequest& req, const std::string& client, Done done) {
  const Offer offer = resolve_(req.opponent);  // ApiError 422: not offered
  std::string key = offer.id, spec = offer.spec, label = offer.label;
  bool slow = offer.slow;
  if (req.search) {
    if (!offer.network) throw ApiError(422, fmt::format("'{}' is not a network: there is no search over it", req.opponent));
    SearchRequest q = *req.search;
    q.prior = rounded_prior(q.prior);  // a few values, not one opponent per number
    spec =
        fmt::format("search:{}?k={}&n={}&cap={}&prior={}", offer.spec.substr(offer.spec.find(':') + 1), q.k, q.n, q.cap, q.prior);
    key = fmt::format("search {} k={} n={} cap={} prior={}", offer.id, q.k, q.n, q.cap, q.prior);
    label = fmt::format("search over {} (k={}, n={})", offer.label, q.k, q.n);
    slow = true;
  }
  const std::uint64_t seed = req.seed ? *req.seed : std::random_device{}() & 0x7fffffff;
  auto g = std::make_shared<Game>(opts_.rules, seed);
  g->id = random_id();
  g->opponent = req.search ? "search:" + offer.id : offer.id;
  g->opponent_label = label;
  g->client = client;
  g->seat = req.seat;
  g->opponent_rng = Rng(derive_seed(seed, 0, 1));
  g->busy = true;
  std::lock_guard lock(mu_);
  if (client_games_[client] >= opts_.max_games_per_client) {
    if (client_games_[client] == 0) client_games_.erase(client);
    ++stats_.refused_client_limit;
    throw ApiError(429, fmt::format("you have {} live games, this server's limit per client: finish or abandon one first",
                                    opts_.max_games_per_client));
  }
  if (games_.size() >= opts_.max_games) {
    // Full: the game idle longest goes, if it has been idle a minute; else the newcomer waits.
    std::shared_ptr<Game> oldest;
    for (const auto& [id, x] : games_) {
      std::lock_guard glock(x->mu);  // mu_ first, then a game's: never the other way
      if (!x->busy && Clock::now() - x->touched > std::chrono::minutes(1) && (!oldest || x->touched < oldest->touched))
        oldest = x;
    }
    if (!oldest) {
      ++stats_.refused_full;
      throw ApiError(503, fmt::format("the server holds {} live games, its limit; try again in a minute", opts_.max_games));
    }
    forget_locked(oldest);
    ++stats_.evicted;
  }
  auto it = slots_.find(key);
  if (it == slots_.end()) {
    if (slots_.size() >= opts_.max_opponents) {  // unload an opponent nobody plays
      auto idle = std::find_if(slots_.begin(), slots_.end(), [](const auto& kv) {
        return kv.second->live == 0 && !kv.second->scheduled && kv.second->pending.empty();
      });
      if (idle == slots_.end())
        throw ApiError(503, fmt::format("the server plays {} distinct opponents at once, its limit; try another or later",
                                        opts_.max_opponents));
      slots_.erase(idle);
    }
    auto s = std::make_shared<Slot>();
    s->key = key, s->spec = spec, s->label = label, s->slow = slow;
    it = slots_.emplace(key, std::move(s)).first;
  }
  g->slot = it->second;
  g->index = next_index_++;
  ++it->second->live;
  ++client_games_[client];
  games_.emplace(g->id, g);
  ++stats_.games_created;
  enqueue_locked(*it->second, Turn{.kind = Turn::Kind::kStart, .game = g, .action = 0, .done = std::move(done)});
}

void GameRoom::move(const std::string& id, int action, Done done) {
  const auto g = find(id);
  if (!g) throw ApiError(404, "no such game (unknown id, or expired)");
  {
    std::lock_guard glock(g->mu);
    if (!g->ended_message.empty()) throw ApiError(409, "the game was ended: " + g->ended_message);
    if (g->state.is_terminal()) throw ApiError(409, "the game is over");
    if (g->busy || g->state.current_player() != g->seat) throw ApiError(409, "it is not your turn (the opponent is moving)");
    if (((g->state.legal_mask() >> action) & 1) == 0) throw ApiError(422, fmt::format("action {} is not legal now", action));
    g->busy = true;
    g->touched = Clock::now();
  }
  std::lock_guard lock(mu_);
  if (!games_.contains(id)) {  // expired or abandoned meanwhile
    std::lock_guard glock(g->mu);
    g->busy = false;
    throw ApiError(404, "no such game (unknown id, or expired)");
  }
  enqueue_locked(*g->slot, Turn{.kind = Turn::Kind::kMove, .game = g, .action = action, .done = std::move(done)});
}

void GameRoom::abandon(const std::string& id) {
  std::lock_guard lock(mu_);
  const auto it = games_.find(id);
  if (it == games_.end()) throw ApiError(404, "no such game (unknown id, or expired)");
  forget_locked(std::shared_ptr<Game>(it->second));
}

void GameRoom::hint(const std::string& id, Done done) {
  if (!opts_.hint) throw ApiError(503, "no hint agent: this server was started without a model to ask (--hint-model)");
  const auto g = find(id);
  if (!g) throw ApiError(404, "no such game (unknown id, or expired)");
  auto state = std::make_shared<std::optional<lc::State>>();
  {
    std::lock_guard lock(mu_);
    std::lock_guard glock(g->mu);
    if (g->state.is_terminal() || g->busy || g->state.current_player() != g->seat || !g->ended_message.empty())
      throw ApiError(409, "a hint is for your turn");
    // Hints share the bots' workers: one at a time per game, a few at once in all, so a flood of
    // them cannot hold up the opponents' moves.
    if (g->hinting) throw ApiError(429, "a hint for this game is being worked out: wait for it");
    if (hints_in_flight_ >= kMaxHintsInFlight) throw ApiError(503, "the server is working out other hints; try again shortly");
    g->hinting = true;
    ++hints_in_flight_;
    state->emplace(g->state);
  }
  boost::asio::post(fast_, [this, g, state, done = std::move(done)] {
    const auto finished = [&] {
      std::lock_guard lock(mu_);
      std::lock_guard glock(g->mu);
      g->hinting = false;
      --hints_in_flight_;
    };
    const lc::State& s = **state;
    json moves = json::array();
    try {
      std::vector<float> p;
      {
        std::lock_guard lock(hint_mu_);
        p = opts_.hint(s);
      }
      for (ActionMask m = s.legal_mask(); m != 0; m &= m - 1) {
        const int a = std::countr_zero(m);
        moves.push_back({{"id", a}, {"name", lc::action_name(s, a)}, {"p", a < static_cast<int>(p.size()) ? p[a] : 0.0F}});
      }
    } catch (const std::exception& e) {
      std::cerr << "cfr-serve: the hint agent failed: " << e.what() << std::endl;
      finished();
      done(500, error_json("the hint agent failed (see the server's log)"));
      return;
    }
    finished();
    std::stable_sort(moves.begin(), moves.end(),
                     [](const json& a, const json& b) { return a["p"].get<double>() > b["p"].get<double>(); });
    done(200, {{"agent", opts_.hint_label}, {"moves", std::move(moves)}});
  });
}

std::shared_ptr<GameRoom::Game> GameRoom::find(const std::string& id) const {
  std::lock_guard lock(mu_);
  const auto it = games_.find(id);
  return it == games_.end() ? nullptr : it->second;
}

json GameRoom::view_of(const Game& g) const {
  json v = seat_view(g.state, g.seat);
  if (g.busy) v["legal"] = json::array();
  v["id"] = g.id;
  v["opponent"] = g.opponent;
  v["opponent_label"] = g.opponent_label;
  v["seed"] = g.seed;
  v["last_opponent_moves"] = g.last_opponent_moves;
  v["log"] = g.log;
  if (!g.ended_message.empty()) {
    v["ended"] = g.ended_message;
    v["legal"] = json::array();
  }
  return v;
}

json GameRoom::view(const std::string& id) const {
  const auto g = find(id);
  if (!g) throw ApiError(404, "no such game (unknown id, or expired)");
  std::lock_guard lock(g->mu);
  return view_of(*g);
}

std::string GameRoom::transcript(const std::string& id) const {
  const auto g = find(id);
  if (!g) throw ApiError(404, "no such game (unknown id, or expired)");
  std::lock_guard lock(g->mu);
  // Only a bot's name belongs in a transcript's bot fields (cfr-arena --check-bots replays them).
  std::array<std::optional<std::string>, 2> bots;
  const auto names = lc::bot_names();
  if (std::find(names.begin(), names.end(), g->opponent) != names.end()) bots[1 - g->seat] = g->opponent;
  return lc::transcript_line(0, opts_.rules, std::span<const int>(g->deck.data(), g->deck_size), g->actions, bots);
}

GameRoom::Stats GameRoom::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::size_t GameRoom::live_games() const {
  std::lock_guard lock(mu_);
  return games_.size();
}

void GameRoom::expire_idle() {
  const auto now = Clock::now();
  std::vector<std::shared_ptr<Game>> all, idle;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, g] : games_) all.push_back(g);
  }
  for (const auto& g : all) {
    std::lock_guard glock(g->mu);
    if (!g->busy && now - g->touched > opts_.idle_expiry) idle.push_back(g);
  }
  std::lock_guard lock(mu_);
  for (const auto& g : idle) {
    if (!games_.contains(g->id)) continue;
    forget_locked(g);
    ++stats_.expired;
  }
}

void GameRoom::serve_slot(std::shared_ptr<Slot> s) {
  std::vector<Turn> turns;
  {
    std::lock_guard lock(mu_);
    // A batch at a time, then the slot goes to the back of the queue: slots take turns. A slow
    // slot takes at most kSlowRoundGames games' turns a batch (ends cost nothing and come along):
    // the rest wait for its next turn, so one client's many games cannot hold a slow worker for
    // minutes, nor push every game of the batch over the move budget.
    std::size_t games = 0;
    while (!s->pending.empty()) {
      if (s->slow && s->pending.front().kind != Turn::Kind::kEnd && games == kSlowRoundGames) break;
      if (s->pending.front().kind != Turn::Kind::kEnd) ++games;
      turns.push_back(std::move(s->pending.front()));
      s->pending.pop_front();
    }
  }
  std::vector<std::pair<int, json>> results(turns.size(), {0, json()});
  if (!s->player) {
    try {
      s->player.emplace(factory_(s->spec));
    } catch (const std::exception& e) {
      // The reason may name a path or a command: it goes to the server's log, not to the page.
      std::cerr << fmt::format("cfr-serve: opponent '{}' could not be made: {}", s->label, e.what()) << std::endl;
      std::lock_guard lock(mu_);
      for (std::size_t i = 0; i < turns.size(); ++i) {
        results[i] = {422, error_json(fmt::format("opponent '{}' could not be loaded (the server's log says why)", s->label))};
        forget_locked(turns[i].game);
      }
      // The kEnd turns just queued (and any other) have no player to tell; turns queued by other
      // requests while the load ran stay, and the next round tries the load again for them.
      std::erase_if(s->pending, [](const Turn& t) { return t.kind == Turn::Kind::kEnd; });
    }
  }
  if (s->player) try {
      lc::AnyPlayer& p = *s->player;
      // A batch opponent's event hooks run without the game's mutex, which the I/O thread takes to
      // answer the game's requests: a hook may take time (an external player that is started again
      // waits for its hello). Only this worker writes the game's state and ended_told meanwhile, so
      // it reads them unlocked; each write holds the mutex. The hooks use the fixed index, seat, seed.
      auto tell_move = [&](Game& g, int action) {  // every move, to a batch opponent (external players follow the game)
        if (p.batch) p.batch->move_made(g.index, g.state, action);
        bool tell_end = false;
        {
          std::lock_guard glock(g.mu);
          g.log.push_back(move_entry(g.state, action, g.seat));
          g.state.apply_action(action);
          g.actions.push_back(action);
          tell_end = g.state.is_terminal() && p.batch && !g.ended_told;
          if (tell_end) g.ended_told = true;
        }
        if (tell_end) p.batch->game_ended(g.index, g.state, -1);
      };
      std::vector<std::size_t> waiting;  // turns whose game may need the opponent
      for (std::size_t i = 0; i < turns.size(); ++i) {
        Turn& t = turns[i];
        Game& g = *t.game;
        switch (t.kind) {
          case Turn::Kind::kStart:
            if (p.batch) p.batch->game_started(g.index, 1 - g.seat, derive_seed(g.seed, 0, 1));
            results[i].first = 201;
            waiting.push_back(i);
            break;
          case Turn::Kind::kMove: {
            {
              std::lock_guard glock(g.mu);
              // A move queued for a game its failed opponent ended meanwhile (opponent_failed) is refused.
              if (!g.ended_message.empty()) {
                results[i] = {409, error_json("the game was ended: " + g.ended_message)};
                break;
              }
              g.last_opponent_moves.clear();
            }
            tell_move(g, t.action);
            results[i].first = 200;
            waiting.push_back(i);
            break;
          }
          case Turn::Kind::kEnd: {
            bool tell_end = false;
            {
              std::lock_guard glock(g.mu);
              tell_end = p.batch && !g.ended_told;
              g.ended_told = true;
            }
            if (tell_end) p.batch->game_ended(g.index, g.state, -1);
            break;
          }
        }
      }
      // Rounds: every game whose opponent is to move gets one move, all in one call.
      std::vector<std::size_t> todo;
      for (;;) {
        todo.clear();
        for (const std::size_t i : waiting) {
          const Game& g = *turns[i].game;
          std::lock_guard glock(g.mu);
          if (results[i].first < 300 && !g.state.is_terminal() && g.state.current_player() != g.seat && g.ended_message.empty())
            todo.push_back(i);
        }
        if (todo.empty()) break;
        std::vector<const lc::State*> states;
        std::vector<Rng*> rngs;
        std::vector<int> indices, actions(todo.size());
        // Only this worker writes a game's state while its turn is here, so it reads them unlocked;
        // each write below holds that game's mutex (the I/O thread reads views under it).
        for (const std::size_t i : todo) {
          states.push_back(&turns[i].game->state);
          rngs.push_back(&turns[i].game->opponent_rng);
          indices.push_back(turns[i].game->index);
        }
        // Each game is charged its own move's time: a bot's own, a batch's time shared by its games
        // (a batch of k games that took T charges each T/k), so a batch is no reason to end a game.
        std::vector<Clock::duration> took(todo.size());
        if (p.batch) {
          const auto t0 = Clock::now();
          p.batch->choose_actions(states, rngs, indices, actions);
          std::fill(took.begin(), took.end(), (Clock::now() - t0) / static_cast<long>(todo.size()));
        } else {
          for (std::size_t k = 0; k < todo.size(); ++k) {
            const auto t0 = Clock::now();
            actions[k] = p.bot->choose_action(*states[k], *rngs[k]);
            took[k] = Clock::now() - t0;
          }
        }
        long moved = 0, over_budget = 0;
        for (std::size_t k = 0; k < todo.size(); ++k) {
          const std::size_t i = todo[k];
          Game& g = *turns[i].game;
          if (actions[k] == lc::BatchBot::kForfeit) {
            // An external opponent failed: the game cannot go on; the person is told why.
            {
              std::lock_guard glock(g.mu);
              g.ended_message = fmt::format("the opponent forfeits: {}", p.batch->forfeit_cause(g.index));
              results[i] = {502, error_json(g.ended_message)};
              g.ended_told = true;
            }
            p.batch->game_ended(g.index, g.state, 1 - g.seat);
          } else if (took[k] > opts_.move_budget) {
            ++over_budget;
            {
              std::lock_guard glock(g.mu);
              g.ended_message = fmt::format(
                  "the opponent took {:.1f} s for one move, over this server's budget of {:.1f} s: the game is ended",
                  std::chrono::duration<double>(took[k]).count(), std::chrono::duration<double>(opts_.move_budget).count());
              results[i] = {504, error_json(g.ended_message)};
              g.ended_told = true;
            }
            if (p.batch) p.batch->game_ended(g.index, g.state, -1);
          } else {
            {
              std::lock_guard glock(g.mu);
              g.last_opponent_moves.push_back(lc::action_name(g.state, actions[k]));
            }
            tell_move(g, actions[k]);
            ++moved;
          }
        }
        std::lock_guard lock(mu_);
        ++stats_.rounds;
        stats_.opponent_moves += moved;
        stats_.over_budget += over_budget;
        stats_.largest_batch = std::max(stats_.largest_batch, static_cast<long>(todo.size()));
      }
    } catch (const std::exception& e) {
      opponent_failed(*s, turns, results, e.what());
    } catch (...) {
      opponent_failed(*s, turns, results, "an exception that is not a std::exception");
    }
  finish_turns(*s, turns, results);
  std::lock_guard lock(mu_);
  s->scheduled = false;
  if (!s->pending.empty() && slots_.contains(s->key)) {
    s->scheduled = true;
    boost::asio::post(s->slow ? slow_ : fast_, [this, s] { serve_slot(s); });
  }
}

void GameRoom::opponent_failed(Slot& s, std::vector<Turn>& turns, std::vector<std::pair<int, json>>& results,
                               std::string_view what) {
  // The reason may name a path: it goes to the server's log, not to the page.
  std::cerr << fmt::format("cfr-serve: opponent '{}' failed: {}; the games of its batch are ended", s.label, what) << std::endl;
  const std::string message =
      fmt::format("the opponent '{}' failed on the server (its log says why): the game is ended", s.label);
  // Its player may be left half way through an event: the next batch makes it anew. A batch player
  // (an external program) kept per-game state that the new one lacks: its other games end too.
  const bool stateful = s.player && s.player->batch;
  s.player.reset();
  std::lock_guard lock(mu_);
  ++stats_.opponent_failures;
  for (std::size_t i = 0; i < turns.size(); ++i) {
    if (turns[i].kind == Turn::Kind::kEnd) continue;
    Game& g = *turns[i].game;
    std::lock_guard glock(g.mu);
    g.ended_told = true;
    if (results[i].first >= 300) continue;  // already answered with its own error
    if (g.ended_message.empty()) g.ended_message = message;
    results[i] = {500, error_json(message)};
  }
  if (stateful)
    for (const auto& [id, g] : games_) {
      if (g->slot.get() != &s) continue;
      std::lock_guard glock(g->mu);
      g->ended_told = true;
      if (g->ended_message.empty() && !g->state.is_terminal()) g->ended_message = message;
    }
}

void GameRoom::finish_turns(Slot& s, std::vector<Turn>& turns, std::vector<std::pair<int, json>>& results) {
  for (std::size_t i = 0; i < turns.size(); ++i) {
    Turn& t = turns[i];
    if (t.kind == Turn::Kind::kEnd) continue;
    try {
      {
        std::lock_guard glock(t.game->mu);
        t.game->busy = false;
        t.game->touched = Clock::now();
        if (results[i].first < 300) results[i].second = view_of(*t.game);
      }
      t.done(results[i].first, std::move(results[i].second));
    } catch (const std::exception& e) {
      // Out of memory, most likely: the game is freed (busy is cleared first); its request is
      // answered if it still can be.
      std::cerr << fmt::format("cfr-serve: answering a turn against '{}' failed: {}", s.label, e.what()) << std::endl;
      try {
        t.done(500, error_json("the server failed to answer (its log says why)"));
      } catch (const std::exception&) {  // the connection's answer is lost; the server goes on
      }
    }
  }
}

}  // namespace cfr::serve
