#include "python/vector_env.h"

#include <algorithm>
#include <array>
#include <concepts>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/core/rng.h"
#include "engine/games/bots.h"
#include "engine/games/games.h"
#include "engine/games/match.h"
#include "python/states.h"

namespace cfr::py {

struct VectorEnv::Impl {
  virtual ~Impl() = default;
  virtual int size() const = 0;
  virtual int observation_size() const = 0;
  virtual int num_actions() const = 0;
  virtual void reset(const StepBuffers& out) = 0;
  virtual void step(std::span<const std::int64_t> actions, const StepBuffers& out) = 0;
  virtual std::vector<std::uint64_t> deal_seeds() const = 0;
  virtual std::vector<std::int64_t> episodes() const = 0;
  virtual std::vector<std::int32_t> agent_seats() const = 0;
};

namespace {

/// run(f) calls f(t, lo, hi) for `threads` contiguous ranges of [0, n) — range 0 on the calling
/// thread, the others on threads started once — and returns when all are done. Only the calling
/// thread's exceptions propagate; the ranges' work cannot throw after step()'s checks.
class WorkerPool {
 public:
  WorkerPool(int threads, int n) : threads_(std::max(1, std::min(threads, n))), n_(n) {
    for (int t = 1; t < threads_; ++t) workers_.emplace_back([this, t] { loop(t); });
  }
  ~WorkerPool() {
    {
      std::lock_guard lock(mu_);
      quit_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  template <class F>
  void run(F&& f) {
    if (threads_ == 1) return f(0, 0, n_);
    {
      std::lock_guard lock(mu_);
      job_ = [&f](int t, int lo, int hi) { f(t, lo, hi); };
      pending_ = threads_ - 1;
      ++generation_;
    }
    wake_.notify_all();
    f(0, 0, bound(1));
    std::unique_lock lock(mu_);
    done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  int bound(int t) const { return static_cast<int>(static_cast<std::int64_t>(n_) * t / threads_); }
  void loop(int t) {
    std::uint64_t seen = 0;
    for (;;) {
      std::function<void(int, int, int)> job;
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [&] { return quit_ || generation_ != seen; });
        if (quit_) return;
        seen = generation_;
        job = job_;
      }
      job(t, bound(t), bound(t + 1));
      {
        std::lock_guard lock(mu_);
        if (--pending_ == 0) done_.notify_one();
      }
    }
  }

  int threads_;
  int n_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::function<void(int, int, int)> job_;
  std::uint64_t generation_ = 0;
  int pending_ = 0;
  bool quit_ = false;
};

template <class R>
class EnvImpl final : public VectorEnv::Impl {
 public:
  using S = typename R::State;
  static constexpr bool kLc = std::same_as<S, lc::State>;

  EnvImpl(const Game& game, const VectorEnvOptions& o) : opts_(o), rules_(game.rules()) {
    if (o.n < 1) throw InputError(fmt::format("VectorEnv: n must be at least 1, got {}", o.n));
    if (o.n > kMaxVectorEnvGames)
      throw InputError(
          fmt::format("VectorEnv: n={} is over the limit of {} games (2^20) in one VectorEnv: use several, or fewer games", o.n,
                      kMaxVectorEnvGames));
    if (o.threads < 1 || o.threads > 256)
      throw InputError(fmt::format("VectorEnv: threads must be in [1, 256], got {}", o.threads));
    if (o.max_steps < 1) throw InputError(fmt::format("VectorEnv: max_steps must be at least 1, got {}", o.max_steps));
    if (o.opponent_player != nullptr && o.opponent.empty()) throw std::logic_error("VectorEnv: a batch opponent needs its name");
    if (!o.opponent.empty()) {
      if (o.agent_seat < -1 || o.agent_seat > 1)
        throw InputError(fmt::format("VectorEnv: agent_seat must be 0, 1 or -1 (alternate), got {}", o.agent_seat));
      if (o.opponent_player != nullptr) {
        if constexpr (kLc)
          batch_ = o.opponent_player;
        else
          throw InputError(fmt::format("VectorEnv: game '{}' has no opponent '{}'; its opponents: random", S::kName, o.opponent));
      } else if (o.opponent != "random") {
        if constexpr (kLc) {
          for (int t = 0; t < o.threads; ++t) bots_.push_back(lc::make_bot(o.opponent, rules_));  // InputError listing the bots
        } else {
          throw InputError(fmt::format("VectorEnv: game '{}' has no bot '{}'; its opponents: random", S::kName, o.opponent));
        }
      }
    }
    obs_size_ = game.info_state_size();
    num_actions_ = game.num_distinct_actions();
    slots_.reserve(static_cast<std::size_t>(o.n));
    for (int i = 0; i < o.n; ++i) slots_.push_back(Slot{.s = initial()});
    pool_ = std::make_unique<WorkerPool>(o.threads, o.n);
  }

  ~EnvImpl() override {
    if (batch_ == nullptr) return;
    try {  // games in progress are abandoned (an external player hears so)
      const auto lock = lock_opponent();
      batch_->match_ended();
    } catch (...) {
    }
  }

  int size() const override { return opts_.n; }
  int observation_size() const override { return obs_size_; }
  int num_actions() const override { return num_actions_; }

  void reset(const StepBuffers& out) override {
    const bool again = started_;
    if (batch_ != nullptr) {  // deals, then the opponent's rounds where it moves first
      const auto lock = lock_opponent();
      for (int i = 0; i < opts_.n; ++i) {
        Slot& sl = slots_[i];
        if (again) ++sl.game;
        deal(0, i, sl);
        out.reward[i] = 0.0F;
        out.done[i] = false;
        out.truncated[i] = false;
      }
      opponent_rounds();
      write_views(out);
      started_ = true;
      return;
    }
    pool_->run([&](int t, int lo, int hi) {
      for (int i = lo; i < hi; ++i) {
        Slot& sl = slots_[i];
        if (again) ++sl.game;
        deal(t, i, sl);
        out.reward[i] = 0.0F;
        out.done[i] = false;
        out.truncated[i] = false;
        write_view(i, sl, out);
      }
    });
    started_ = true;
  }

  void step(std::span<const std::int64_t> actions, const StepBuffers& out) override {
    if (!started_) throw InputError("VectorEnv.step: call reset() first");
    if (static_cast<int>(actions.size()) != opts_.n)
      throw InputError(fmt::format("VectorEnv.step: {} actions for {} games", actions.size(), opts_.n));
    for (int i = 0; i < opts_.n; ++i) {
      const std::int64_t a = actions[i];
      const ActionMask m = slots_[i].mask;
      if (a < 0 || a >= kMaxActionsAnyGame || !mask_has(m, static_cast<int>(a))) {
        std::array<int, kMaxActionsAnyGame> legal{};
        const int k = mask_to_actions(m, legal);
        std::string list;
        for (int j = 0; j < k; ++j) list += fmt::format("{}{}", j > 0 ? ", " : "", legal[j]);
        throw IllegalActionError(fmt::format("VectorEnv.step: action {} is not legal in game {}; legal actions: {}", a, i, list));
      }
    }
    if (batch_ != nullptr)
      step_batched(actions, out);
    else
      pool_->run([&](int t, int lo, int hi) { step_range(t, lo, hi, actions, out); });
  }

  /// With a batch opponent: every slot's action, then the opponent's rounds (one call for every
  /// slot where it is to move, until none is), then the finished games' ends and new deals and the
  /// opponent's rounds in those, then the observations (on the pool's threads).
  void step_batched(std::span<const std::int64_t> actions, const StepBuffers& out) {
    if constexpr (kLc) {
      const auto lock = lock_opponent();
      for (int i = 0; i < opts_.n; ++i) played(i, slots_[i], static_cast<int>(actions[i]));
      opponent_rounds();
      for (int i = 0; i < opts_.n; ++i) {
        Slot& sl = slots_[i];
        const bool terminal = sl.s.is_terminal();
        const bool truncated = !terminal && sl.steps >= opts_.max_steps;
        out.done[i] = terminal || truncated;
        out.truncated[i] = truncated;
        out.reward[i] = terminal || truncated ? static_cast<float>(sl.s.returns(sl.seat)) : 0.0F;
        if (terminal || truncated) {
          batch_->game_ended(game_id(i, sl), sl.s, -1);
          ++sl.game;
          deal(0, i, sl);
        }
      }
      opponent_rounds();
      write_views(out);
    }
  }

  void step_range(int t, int lo, int hi, std::span<const std::int64_t> actions, const StepBuffers& out) {
    for (int i = lo; i < hi; ++i) {
      Slot& sl = slots_[i];
      const int mover = sl.s.current_player();
      const int seat = opts_.opponent.empty() ? mover : sl.seat;
      apply(sl, static_cast<int>(actions[i]));
      if (!opts_.opponent.empty()) opponent_moves(t, sl);
      const bool terminal = sl.s.is_terminal();
      const bool truncated = !terminal && sl.steps >= opts_.max_steps;
      out.done[i] = terminal || truncated;
      out.truncated[i] = truncated;
      out.reward[i] = terminal || truncated ? static_cast<float>(sl.s.returns(seat)) : 0.0F;
      if (terminal || truncated) {
        ++sl.game;
        deal(t, i, sl);
      }
      write_view(i, sl, out);
    }
  }

  std::vector<std::uint64_t> deal_seeds() const override {
    std::vector<std::uint64_t> v;
    for (const Slot& sl : slots_) v.push_back(sl.deal_seed);
    return v;
  }
  std::vector<std::int64_t> episodes() const override {
    std::vector<std::int64_t> v;
    for (const Slot& sl : slots_) v.push_back(sl.game);
    return v;
  }
  std::vector<std::int32_t> agent_seats() const override {
    std::vector<std::int32_t> v;
    for (const Slot& sl : slots_) v.push_back(opts_.opponent.empty() ? sl.s.current_player() : sl.seat);
    return v;
  }

 private:
  struct Slot {
    S s;
    Rng chance{0};
    Rng opponent{0};
    std::uint64_t deal_seed = 0;
    std::int64_t game = 0;
    int steps = 0;
    int seat = 0;
    ActionMask mask = 0;  // legal_mask() of s, as last written out
  };

  S initial() const {
    if constexpr (kLc)
      return lc::State::deal(rules_, 0);
    else if constexpr (EnumerableGame<S>)
      return S::initial();
    else {
      Rng r(0);
      return R::Adapter::from_settings(GameSettings{}).new_game(r);
    }
  }

  void resolve_chance(Slot& sl) {
    if constexpr (EnumerableGame<S>) {
      while (sl.s.is_chance_node()) {
        std::array<ChanceOutcome, kMaxChanceOutcomes> o{};
        const int k = sl.s.chance_outcomes(o);
        sl.s.apply_action(
            pick_chance_outcome(std::span<const ChanceOutcome>(o.data(), static_cast<std::size_t>(k)), sl.chance.uniform()));
      }
    }
  }

  void deal(int t, int i, Slot& sl) {
    sl.deal_seed = derive_seed(opts_.seed, static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(sl.game));
    sl.steps = 0;
    sl.opponent = Rng(derive_seed(sl.deal_seed, 1));
    sl.seat = opts_.agent_seat >= 0 ? opts_.agent_seat : static_cast<int>((i + sl.game) % 2);
    if constexpr (kLc) {
      sl.s = lc::State::deal(rules_, sl.deal_seed);
    } else if constexpr (EnumerableGame<S>) {
      sl.s = S::initial();
      sl.chance = Rng(sl.deal_seed);
      resolve_chance(sl);
    } else {
      Rng r(sl.deal_seed);
      sl.s = R::Adapter::from_settings(GameSettings{}).new_game(r);
    }
    if (batch_ != nullptr)
      batch_->game_started(game_id(i, sl), 1 - sl.seat, derive_seed(sl.deal_seed, 1));
    else if (!opts_.opponent.empty())
      opponent_moves(t, sl);
  }

  void apply(Slot& sl, int a) {
    sl.s.apply_action(a);
    ++sl.steps;
    resolve_chance(sl);
  }

  /// The opponent moves until the caller's seat is to move or the game is over (turns alternate,
  /// so this is at most one turn; the action cap is checked by step()).
  void opponent_moves(int t, Slot& sl) {
    while (!sl.s.is_terminal() && sl.s.current_player() != sl.seat) {
      int a;
      if constexpr (kLc) {
        a = bots_.empty() ? lc::random_legal_action(sl.s, sl.opponent) : bots_[t]->choose_action(sl.s, sl.opponent);
      } else {
        const ActionMask m = sl.s.legal_mask();
        a = mask_nth(m, static_cast<int>(sl.opponent.below(static_cast<std::uint32_t>(mask_count(m)))));
      }
      apply(sl, a);
    }
  }

  /// The index under which the batch opponent knows slot i's current game.
  int game_id(int i, const Slot& sl) const {
    return static_cast<int>(
        (static_cast<std::uint64_t>(sl.game) * static_cast<std::uint64_t>(opts_.n) + static_cast<std::uint64_t>(i)) %
        2147483647ULL);
  }

  std::unique_lock<std::mutex> lock_opponent() const {
    return opts_.opponent_lock != nullptr ? std::unique_lock(*opts_.opponent_lock) : std::unique_lock<std::mutex>();
  }

  /// A move of either seat in slot i, told to the batch opponent first.
  void played(int i, Slot& sl, int a) {
    if constexpr (kLc) batch_->move_made(game_id(i, sl), sl.s, a);
    apply(sl, a);
  }

  /// The batch opponent's rounds: one call for every slot where it is to move, until it is to move
  /// in none (a Lost Cities turn is two moves of the same seat: two rounds). A forfeit (an external
  /// player's fault) is an InputError, an illegal answer an IllegalActionError: the environment is
  /// then mid-step and should be discarded.
  void opponent_rounds() {
    if constexpr (kLc) {
      for (;;) {
        pending_.clear();
        states_.clear();
        rngs_.clear();
        games_.clear();
        for (int i = 0; i < opts_.n; ++i) {
          Slot& sl = slots_[i];
          if (sl.s.is_terminal() || sl.s.current_player() == sl.seat) continue;
          pending_.push_back(i);
          states_.push_back(&sl.s);
          rngs_.push_back(&sl.opponent);
          games_.push_back(game_id(i, sl));
        }
        if (pending_.empty()) return;
        chosen_.assign(pending_.size(), 0);
        batch_->choose_actions(states_, rngs_, games_, chosen_);
        for (std::size_t k = 0; k < pending_.size(); ++k) {
          const int i = pending_[k], a = chosen_[k];
          Slot& sl = slots_[i];
          if (a == lc::BatchBot::kForfeit)
            throw InputError(fmt::format("VectorEnv: the opponent '{}' forfeited game {} (slot {}): {}", opts_.opponent,
                                         games_[k], i, batch_->forfeit_cause(games_[k])));
          if (a < 0 || a >= kMaxActionsAnyGame || !mask_has(sl.s.legal_mask(), a))
            throw IllegalActionError(fmt::format(
                "VectorEnv: the opponent '{}' chose action {} in slot {}, which is not legal there", opts_.opponent, a, i));
          played(i, sl, a);
        }
      }
    }
  }

  void write_views(const StepBuffers& out) {
    pool_->run([&](int, int lo, int hi) {
      for (int i = lo; i < hi; ++i) write_view(i, slots_[i], out);
    });
  }

  void write_view(int i, Slot& sl, const StepBuffers& out) const {
    float* obs = out.observation + static_cast<std::size_t>(i) * static_cast<std::size_t>(obs_size_);
    bool* mask = out.legal_mask + static_cast<std::size_t>(i) * static_cast<std::size_t>(num_actions_);
    const int p = sl.s.current_player();  // a slot never holds a finished game here
    out.current_player[i] = p;
    sl.s.encode_info_state(p, std::span<float>(obs, static_cast<std::size_t>(obs_size_)));
    const ActionMask m = sl.s.legal_mask();
    sl.mask = m;
    for (int a = 0; a < num_actions_; ++a) mask[a] = ((m >> a) & 1U) != 0;
  }

  VectorEnvOptions opts_;
  lc::Rules rules_;
  std::vector<std::unique_ptr<lc::Bot>> bots_;  // one per thread (a bot is used by one thread at a time)
  lc::BatchBot* batch_ = nullptr;               // a batch opponent (opts_.opponent_player), or none
  std::vector<int> pending_, games_, chosen_;   // its rounds' scratch: slots, game indices, answers
  std::vector<const lc::State*> states_;
  std::vector<Rng*> rngs_;
  int obs_size_ = 0;
  int num_actions_ = 0;
  bool started_ = false;
  std::vector<Slot> slots_;
  std::unique_ptr<WorkerPool> pool_;  // made once the options are checked
};

}  // namespace

VectorEnv::VectorEnv(const Game& game, const VectorEnvOptions& opts) {
  impl_ = visit_registered_game(game.name(),
                                [&]<class R>(R) -> std::unique_ptr<Impl> { return std::make_unique<EnvImpl<R>>(game, opts); });
}
VectorEnv::~VectorEnv() = default;

int VectorEnv::size() const noexcept { return impl_->size(); }
int VectorEnv::observation_size() const noexcept { return impl_->observation_size(); }
int VectorEnv::num_actions() const noexcept { return impl_->num_actions(); }
void VectorEnv::reset(const StepBuffers& out) {
  std::lock_guard lock(mu_);
  impl_->reset(out);
}
void VectorEnv::step(std::span<const std::int64_t> actions, const StepBuffers& out) {
  std::lock_guard lock(mu_);
  impl_->step(actions, out);
}
std::vector<std::uint64_t> VectorEnv::deal_seeds() const {
  std::lock_guard lock(mu_);
  return impl_->deal_seeds();
}
std::vector<std::int64_t> VectorEnv::episodes() const {
  std::lock_guard lock(mu_);
  return impl_->episodes();
}
std::vector<std::int32_t> VectorEnv::agent_seats() const {
  std::lock_guard lock(mu_);
  return impl_->agent_seats();
}

}  // namespace cfr::py
