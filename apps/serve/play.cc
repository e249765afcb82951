#include "apps/serve/play.h"

#include <random>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/core/rng.h"
#include "engine/games/external_player.h"
#include "engine/games/replay.h"

namespace cfr::serve {

using nlohmann::json;

struct GameRoom::Game {
  std::string id;
  int index = 0;  // for the opponent's BatchBot events
  std::string opponent;
  int seat = 0;   // the person's
  std::uint64_t seed = 0;
  std::array<int, lc::kMaxDeck> deck{};
  int deck_size = 0;
  mutable std::mutex mu;  // the fields below
  lc::State state;
  std::vector<int> actions;
  std::vector<std::string> last_opponent_moves;  // since the person's last move
  Rng opponent_rng{0};
  bool ended_told = false;
  std::chrono::steady_clock::time_point touched = std::chrono::steady_clock::now();

  // The deck is shuffled once: the transcript records it, the game is dealt from it (as deal() would).
  Game(const lc::Rules& rules, std::uint64_t deal_seed)
      : seed(deal_seed),
        deck_size(lc::State::shuffled_deck(rules, deal_seed, deck)),
        state(lc::State::from_deck(rules, std::span<const int>(deck.data(), deck_size))) {
  }
};

struct GameRoom::Job {
  enum class Kind { kCreate, kMove } kind;
  NewGameRequest create;
  std::string id;
  int action = 0;
  Done done;
};

namespace {

std::string random_id() {
  static thread_local std::random_device rd;
  std::uint64_t a = (static_cast<std::uint64_t>(rd()) << 32) ^ rd(), b = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  return fmt::format("{:016x}{:016x}", a, b);
}

json error_json(const std::string& what) { return {{"error", what}}; }

}  // namespace

GameRoom::GameRoom(PlayOptions opts, PlayerFactory factory)
    : opts_(std::move(opts)), factory_(std::move(factory)), thread_([this] { worker(); }) {}

GameRoom::~GameRoom() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void GameRoom::create(NewGameRequest req, Done done) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(Job{.kind = Job::Kind::kCreate, .create = std::move(req), .id = {}, .action = 0, .done = std::move(done)});
  }
  cv_.notify_one();
}

void GameRoom::move(std::string id, int action, Done done) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(Job{.kind = Job::Kind::kMove, .create = {}, .id = std::move(id), .action = action, .done = std::move(done)});
  }
  cv_.notify_one();
}

std::shared_ptr<GameRoom::Game> GameRoom::find(const std::string& id) const {
  std::lock_guard lock(mu_);
  const auto it = games_.find(id);
  return it == games_.end() ? nullptr : it->second;
}

json GameRoom::view_of(const Game& g) const {
  json v = seat_view(g.state, g.seat);
  v["id"] = g.id;
  v["opponent"] = g.opponent;
  v["seed"] = g.seed;
  v["last_opponent_moves"] = g.last_opponent_moves;
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

lc::AnyPlayer& GameRoom::player(const std::string& name) {
  auto it = players_.find(name);
  if (it == players_.end()) it = players_.emplace(name, factory_(name)).first;  // InputError: bad name
  return it->second;
}

void GameRoom::worker() {
  std::vector<Job> jobs;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) break;
      jobs.swap(jobs_);
    }
    run_jobs(jobs);
    jobs.clear();
  }
  // The opponents hear that the games still open are abandoned (an external player is told).
  for (auto& [name, p] : players_)
    if (p.batch) p.batch->match_ended();
}

void GameRoom::expire_idle() {
  // Lock order: the room's mutex and a game's are never held together (the I/O thread takes
  // either alone; so does the mover).
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<Game>> all, gone;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, g] : games_) all.push_back(g);
  }
  for (const auto& g : all) {
    std::lock_guard glock(g->mu);
    if (now - g->touched > opts_.idle_expiry) {
      gone.push_back(g);
      auto& p = player(g->opponent);
      if (p.batch && !g->ended_told) p.batch->game_ended(g->index, g->state, -1);
      g->ended_told = true;
    }
  }
  std::lock_guard lock(mu_);
  for (const auto& g : gone) games_.erase(g->id);
}

void GameRoom::run_jobs(std::vector<Job>& jobs) {
  struct Pending {
    std::shared_ptr<Game> game;
    std::size_t job;
  };
  std::vector<Pending> waiting;  // games whose opponent is to move
  std::vector<std::pair<int, json>> results(jobs.size(), {0, json()});
  auto tell_move = [&](Game& g, int action) {  // every move, to a batch opponent (external players follow the game)
    auto& p = player(g.opponent);
    if (p.batch) p.batch->move_made(g.index, g.state, action);
    g.state.apply_action(action);
    g.actions.push_back(action);
    if (g.state.is_terminal() && p.batch && !g.ended_told) {
      p.batch->game_ended(g.index, g.state, -1);
      g.ended_told = true;
    }
  };
  if (std::any_of(jobs.begin(), jobs.end(), [](const Job& j) { return j.kind == Job::Kind::kCreate; })) expire_idle();
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    Job& job = jobs[j];
    try {
      std::shared_ptr<Game> g;
      if (job.kind == Job::Kind::kCreate) {
        if (live_games() >= opts_.max_games)
          throw ApiError(503, fmt::format("the server holds {} games, its limit; try again later", opts_.max_games));
        lc::AnyPlayer* p;
        try {
          p = &player(job.create.opponent);
        } catch (const InputError& e) {
          throw ApiError(422, fmt::format("opponent '{}': {}", job.create.opponent, e.what()));
        }
        const std::uint64_t seed = job.create.seed ? *job.create.seed : std::random_device{}() & 0x7fffffff;
        g = std::make_shared<Game>(opts_.rules, seed);
        g->id = random_id();
        g->index = next_index_++;
        g->opponent = job.create.opponent;
        g->seat = job.create.seat;
        g->opponent_rng = Rng(derive_seed(seed, 0, 1));
        if (p->batch) p->batch->game_started(g->index, 1 - g->seat, derive_seed(seed, 0, 1));
        {
          std::lock_guard lock(mu_);
          games_.emplace(g->id, g);
          ++stats_.games_created;
        }
        results[j].first = 201;
      } else {
        g = find(job.id);
        if (!g) throw ApiError(404, "no such game (unknown id, or expired)");
        std::lock_guard glock(g->mu);
        g->touched = std::chrono::steady_clock::now();
        if (g->state.is_terminal()) throw ApiError(409, "the game is over");
        if (g->state.current_player() != g->seat) throw ApiError(409, "it is not your turn (the opponent is moving)");
        if (((g->state.legal_mask() >> job.action) & 1) == 0)
          throw ApiError(422, fmt::format("action {} is not legal now", job.action));
        g->last_opponent_moves.clear();
        tell_move(*g, job.action);
        results[j].first = 200;
      }
      waiting.push_back({g, j});
    } catch (const ApiError& e) {
      results[j] = {e.status, error_json(e.what())};
    }
  }
  // Rounds: every game whose opponent is to move gets one move; games against the same batch
  // opponent are decided in one call.
  std::vector<Pending> todo;
  for (;;) {
    todo.clear();
    for (const auto& w : waiting) {
      std::lock_guard glock(w.game->mu);
      if (!w.game->state.is_terminal() && w.game->state.current_player() != w.game->seat) todo.push_back(w);
    }
    if (todo.empty()) break;
    {
      std::lock_guard lock(mu_);
      ++stats_.rounds;
    }
    std::map<std::string, std::vector<Pending*>> by_opponent;
    for (auto& t : todo) by_opponent[t.game->opponent].push_back(&t);
    for (auto& [name, group] : by_opponent) {
      auto& p = player(name);
      std::vector<const lc::State*> states;
      std::vector<Rng*> rngs;
      std::vector<int> indices, actions(group.size());
      // Only this thread writes a game's state, so it reads them unlocked; each write below holds
      // that game's mutex alone (the I/O thread reads views under it).
      for (Pending* t : group) {
        states.push_back(&t->game->state);
        rngs.push_back(&t->game->opponent_rng);
        indices.push_back(t->game->index);
      }
      if (p.batch) {
        p.batch->choose_actions(states, rngs, indices, actions);
      } else {
        for (std::size_t i = 0; i < group.size(); ++i) actions[i] = p.bot->choose_action(*states[i], *rngs[i]);
      }
      std::vector<std::string> dropped;
      for (std::size_t i = 0; i < group.size(); ++i) {
        Game& g = *group[i]->game;
        std::lock_guard glock(g.mu);
        if (actions[i] == lc::BatchBot::kForfeit) {
          // An external opponent failed: the game cannot go on; the person is told why.
          results[group[i]->job] = {502, error_json(fmt::format("the opponent forfeits: {}", p.batch->forfeit_cause(g.index)))};
          p.batch->game_ended(g.index, g.state, 1 - g.seat);
          g.ended_told = true;
          dropped.push_back(g.id);
          continue;
        }
        g.last_opponent_moves.push_back(lc::action_name(g.state, actions[i]));
        tell_move(g, actions[i]);
      }
      std::lock_guard lock(mu_);  // never with a game's mutex held
      for (const auto& id : dropped) games_.erase(id);
      stats_.opponent_moves += static_cast<long>(group.size() - dropped.size());
      stats_.largest_batch = std::max(stats_.largest_batch, static_cast<long>(group.size()));
    }
    // A forfeited game leaves the rounds.
    std::erase_if(waiting, [&](const Pending& w) { return results[w.job].first == 502; });
  }
  for (const auto& w : waiting) {
    std::lock_guard glock(w.game->mu);
    results[w.job].second = view_of(*w.game);
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) jobs[j].done(results[j].first, std::move(results[j].second));
}

}  // namespace cfr::serve
