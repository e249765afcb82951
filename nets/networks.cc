#include "nets/networks.h"

#include <torch/torch.h>

#if CFR_TORCH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <dlfcn.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/core/errors.h"
#include "engine/core/files.h"
#include "engine/core/resources.h"

namespace cfr {

namespace {
/// A TorchEvaluator's batches: the size it runs best at (what cfr-bench-batch measured on CPU,
/// docs/gpu.md) and the largest it accepts in one call (the batcher splits larger ones).
constexpr int kPreferredForwardBatch = 256;
constexpr int kMaxForwardBatch = 1 << 16;
}  // namespace

namespace {

struct MlpImpl : torch::nn::Module {
  MlpImpl(int in, int out, const NetworkConfig& c) : activation(c.activation) {
    int width = in;
    for (int i = 0; i < c.num_layers; ++i) {
      layers.push_back(register_module(fmt::format("fc{}", i), torch::nn::Linear(width, c.hidden_size)));
      width = c.hidden_size;
    }
    head = register_module("head", torch::nn::Linear(width, out));
  }
  torch::Tensor forward(torch::Tensor x) {
    for (auto& l : layers) x = activate(l->forward(x));
    return head->forward(x);
  }
  /// The forward of a float32 module computed in `dtype` (bfloat16): the input, the weights and
  /// the biases cast for this call (autograd carries the gradients back to the float32
  /// parameters through the casts), the output cast back to float32. What autocast does for
  /// linear layers, without its thread-local state.
  torch::Tensor forward_in(torch::Tensor x, torch::ScalarType dtype) {
    x = x.to(dtype);
    for (auto& l : layers) x = activate(torch::linear(x, l->weight.to(dtype), l->bias.to(dtype)));
    return torch::linear(x, head->weight.to(dtype), head->bias.to(dtype)).to(torch::kFloat32);
  }
  torch::Tensor activate(const torch::Tensor& x) const {
    if (activation == "relu") return torch::relu(x);
    if (activation == "tanh") return torch::tanh(x);
    return torch::gelu(x);
  }
  std::string activation;
  std::vector<torch::nn::Linear> layers;
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(Mlp);

/// Copies the parameters of `from` into `to` (converting to its dtype: rounding to bfloat16).
void copy_weights(const Mlp& from, Mlp& to) {
  torch::NoGradGuard g;
  auto src = from->parameters();
  auto dst = to->parameters();
  for (std::size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
}

// Inference on a published snapshot (net_, float32), computed in bfloat16 on a rounded copy
// (fast_) when the set's precision is bf16. On CUDA (builds whose LibTorch has CUDA): inputs are
// copied into a pinned host buffer, sent asynchronously on the evaluator's own stream (so that
// inference overlaps training on the default stream), and the outputs come back asynchronously
// into a pinned buffer; one synchronisation per batch.
class TorchEvaluator final : public Evaluator {
 public:
  TorchEvaluator(Mlp net, Mlp fast, int in, int out, torch::Device dev, int chunk)
      : net_(std::move(net)),
        fast_(std::move(fast)),
        in_(in),
        out_(out),
        chunk_(chunk),
        dev_(dev)
#if CFR_TORCH_CUDA
        ,
        stream_(dev.is_cuda() ? c10::cuda::getStreamFromPool(/*isHighPriority=*/true, dev.index() < 0 ? 0 : dev.index())
                              : c10::cuda::getDefaultCUDAStream())
#endif
  {
  }
  EvaluatorInfo info() const override { return {in_, out_, kPreferredForwardBatch, kMaxForwardBatch}; }
  void evaluate(std::span<const float> inputs, std::span<const ActionMask>, std::span<float> outputs) override {
    const auto n = static_cast<std::int64_t>(inputs.size()) / in_;
    torch::InferenceMode guard;
    if (dev_.is_cuda()) {
      evaluate_cuda(inputs, outputs, n);
    } else if (chunk_ > 0) {  // batch-invariant: every row goes through an identical chunk-row forward
      chunk_in_.resize(static_cast<std::size_t>(chunk_ * in_));
      for (std::int64_t s = 0; s < n; s += chunk_) {
        const std::int64_t rows = std::min<std::int64_t>(chunk_, n - s);
        std::memcpy(chunk_in_.data(), inputs.data() + s * in_, sizeof(float) * static_cast<std::size_t>(rows * in_));
        std::fill(chunk_in_.begin() + rows * in_, chunk_in_.end(), 0.0F);  // padding rows (last chunk)
        auto x = torch::from_blob(chunk_in_.data(), {chunk_, in_}, torch::kFloat32);
        auto y = forward(x).contiguous();
        std::memcpy(outputs.data() + s * out_, y.data_ptr<float>(), sizeof(float) * static_cast<std::size_t>(rows * out_));
      }
    } else {
      auto x = torch::from_blob(const_cast<float*>(inputs.data()), {n, in_}, torch::kFloat32);
      auto y = forward(x).contiguous();
      std::memcpy(outputs.data(), y.data_ptr<float>(), sizeof(float) * static_cast<std::size_t>(n * out_));
    }
    const std::int64_t bad = replace_nonfinite(outputs.first(static_cast<std::size_t>(n * out_)));
    if (bad) nonfinite_.fetch_add(bad, std::memory_order_relaxed);
  }
  std::int64_t take_nonfinite() { return nonfinite_.exchange(0); }
  /// The published float32 weights (read them; write them only through set_weights).
  const Mlp& net() const { return net_; }
  /// Publishes `from`'s weights into this snapshot (and its bfloat16 copy).
  void set_weights(const Mlp& from) {
    copy_weights(from, net_);
    if (fast_) copy_weights(net_, fast_);  // rounds to the nearest bfloat16
  }

 private:
  torch::Tensor forward(const torch::Tensor& x) {
    if (!fast_) return net_->forward(x);
    return fast_->forward(x.to(torch::kBFloat16)).to(torch::kFloat32);
  }

  void evaluate_cuda(std::span<const float> inputs, std::span<float> outputs, std::int64_t n) {
#if CFR_TORCH_CUDA
    if (!pinned_in_.defined() || pinned_in_.size(0) < n) {
      const auto host = torch::TensorOptions().dtype(torch::kFloat32).pinned_memory(true);
      const std::int64_t cap = std::max<std::int64_t>(n, 256);
      pinned_in_ = torch::empty({cap, in_}, host);
      pinned_out_ = torch::empty({cap, out_}, host);
    }
    std::memcpy(pinned_in_.data_ptr<float>(), inputs.data(), sizeof(float) * static_cast<std::size_t>(n * in_));
    {
      c10::cuda::CUDAStreamGuard on(stream_);
      auto x = pinned_in_.narrow(0, 0, n).to(dev_, /*non_blocking=*/true);
      auto y = forward(x);
      pinned_out_.narrow(0, 0, n).copy_(y, /*non_blocking=*/true);
    }
    stream_.synchronize();
    std::memcpy(outputs.data(), pinned_out_.data_ptr<float>(), sizeof(float) * static_cast<std::size_t>(n * out_));
#else
    auto x = torch::from_blob(const_cast<float*>(inputs.data()), {n, in_}, torch::kFloat32).to(dev_);
    auto y = forward(x).to(torch::kCPU).contiguous();
    std::memcpy(outputs.data(), y.data_ptr<float>(), sizeof(float) * static_cast<std::size_t>(n * out_));
#endif
  }

  Mlp net_;
  Mlp fast_;  // bf16: net_'s weights rounded to bfloat16; null in fp32
  int in_, out_;
  std::int64_t chunk_;
  torch::Device dev_;
  std::atomic<std::int64_t> nonfinite_{0};
  std::vector<float> chunk_in_;
#if CFR_TORCH_CUDA
  c10::cuda::CUDAStream stream_;
  torch::Tensor pinned_in_, pinned_out_;
#endif
};

}  // namespace

/// Seed-stream tags of network initialisation and re-initialisation (derive_seed's second word).
constexpr std::uint64_t kInitStream = 0x6e657473;  // "nets"
constexpr std::uint64_t kReinitStream = 0x726569;  // "rei"

struct NetworkSet::Impl {
  NetworkConfig cfg;
  std::string precision = "fp32";  // resolved: fp32 | bf16
  bool bf16 = false;
  NetworkSpecs specs;
  torch::Device device{torch::kCPU};
  std::vector<Mlp> train;  // per network (set order)
  std::vector<std::unique_ptr<torch::optim::AdamW>> optim;
  std::vector<std::unique_ptr<TorchEvaluator>> infer;
  std::vector<std::vector<std::unique_ptr<TorchEvaluator>>> extra;  // replicas 1.., per network
  // Weight averages (TrainConfig::ema_decay), created by the first training with averaging on;
  // when present they are what publish() copies.
  std::vector<Mlp> ema;
  std::vector<std::int64_t> ema_steps;  // steps averaged since the average began

  /// After a step of net n: the average moves towards the weights, with the decay warmed up as
  /// min(β, (1 + s) / (10 + s)) so that the initial weights are forgotten quickly.
  void update_ema(int n, double beta) {
    const auto k = static_cast<std::size_t>(n);
    torch::NoGradGuard g;
    if (!ema[k]) {
      ema[k] = make(n, 0);
      copy_weights(train[k], ema[k]);
      ema_steps[k] = 0;
    }
    const double s = static_cast<double>(ema_steps[k]++);
    const double b = std::min(beta, (1.0 + s) / (10.0 + s));
    auto src = train[k]->parameters();
    auto dst = ema[k]->parameters();
    for (std::size_t i = 0; i < src.size(); ++i) dst[i].mul_(b).add_(src[i], 1.0 - b);
  }
  double lr = 1e-4, wd = 1e-4;
  std::uint64_t seed = 0;
  // Batch buffers (host tensors), one set per network (networks may train concurrently).
  struct HostBatch {
    torch::Tensor in, target, legal, iter;
  };
  std::vector<HostBatch> host;

  /// A new MLP of network n's shape.
  Mlp make(int n, std::uint64_t net_seed) {
    // Initialisation draws from LibTorch's global generator: two threads re-initialising
    // networks at once must not interleave their seeding and drawing.
    static std::mutex global_generator;
    std::lock_guard lock(global_generator);
    torch::manual_seed(net_seed);
    const auto& s = specs[static_cast<std::size_t>(n)];
    Mlp m(s.input_width, s.output_width, cfg);
    m->to(device);
    return m;
  }
  /// An inference snapshot of network n (own weights and buffers) holding a copy of `from`.
  std::unique_ptr<TorchEvaluator> make_snapshot(int n, const Mlp& from) {
    Mlp snap = make(n, 0);
    snap->eval();
    Mlp fast(nullptr);
    if (bf16) {
      fast = make(n, 0);
      fast->to(torch::kBFloat16);
      fast->eval();
    }
    const auto& s = specs[static_cast<std::size_t>(n)];
    auto ev = std::make_unique<TorchEvaluator>(snap, fast, s.input_width, s.output_width, device, cfg.invariant_chunk);
    ev->set_weights(from);
    return ev;
  }
  /// Network n's training forward: float32 outputs, computed in the set's precision.
  torch::Tensor forward_train(int n, const torch::Tensor& x) {
    auto& m = train[static_cast<std::size_t>(n)];
    return bf16 ? m->forward_in(x, torch::kBFloat16) : m->forward(x);
  }
  void reset_optimizer(int n) {
    optim[static_cast<std::size_t>(n)] = std::make_unique<torch::optim::AdamW>(train[static_cast<std::size_t>(n)]->parameters(),
                                                                               torch::optim::AdamWOptions(lr).weight_decay(wd));
  }
};

NetworkSet::NetworkSet(NetworkSpecs specs, const NetworkConfig& cfg, std::uint64_t seed)
    : specs_(std::move(specs)), impl_(std::make_unique<Impl>()) {
  CFR_CHECK(!specs_.empty() && specs_.size() <= static_cast<std::size_t>(kMaxNetworks), "{} networks declared (1 to {})",
            specs_.size(), kMaxNetworks);
  for (const auto& s : specs_) {
    CFR_CHECK(s.input_width > 0 && s.output_width > 0, "network '{}' maps {} → {} floats", s.name, s.input_width, s.output_width);
    CFR_CHECK(s.loss != NetLoss::kClippedPolicyGradient || s.sample_target_width() == 4 * s.output_width + 1,
              "network '{}': a clipped policy-gradient target holds 4·{} + 1 floats, not {}", s.name, s.output_width,
              s.sample_target_width());
  }
  if (cfg.activation != "relu" && cfg.activation != "tanh" && cfg.activation != "gelu")
    throw InputError(fmt::format("network.activation = '{}'; valid: relu, tanh, gelu", cfg.activation));
  if (cfg.hidden_size < 1 || cfg.num_layers < 1)
    throw InputError(fmt::format("network.hidden_size = {} and num_layers = {} must be ≥ 1", cfg.hidden_size, cfg.num_layers));
  if (cfg.device == "cuda") {
    if (!torch::cuda::is_available())
      throw InputError(
          "run.device = 'cuda' but no CUDA device is available to LibTorch (this build or machine has none); use 'cpu'");
    const int count = static_cast<int>(torch::cuda::device_count());
    impl_->device =
        torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(std::max(0, cfg.device_index) % std::max(1, count)));
  } else if (cfg.device != "cpu") {
    throw InputError(fmt::format("device = '{}'; valid: cpu, cuda", cfg.device));
  }
  const PrecisionChoice precision = resolve_precision(cfg.precision, cfg.device, cfg.device_index);
  impl_->precision = precision.name;
  impl_->bf16 = precision.name == "bf16";
  impl_->cfg = cfg;
  impl_->seed = seed;
  impl_->specs = specs_;
  const auto count = specs_.size();
  impl_->train.assign(count, Mlp(nullptr));
  impl_->optim.resize(count);
  impl_->infer.resize(count);
  impl_->ema.assign(count, Mlp(nullptr));
  impl_->ema_steps.assign(count, 0);
  impl_->host.resize(count);
  for (int n = 0; n < size(); ++n) {
    const auto k = static_cast<std::size_t>(n);
    impl_->train[k] = impl_->make(n, derive_seed(seed, kInitStream, static_cast<std::uint64_t>(n)));
    impl_->reset_optimizer(n);
    impl_->infer[k] = impl_->make_snapshot(n, impl_->train[k]);
  }
}

NetworkSet::~NetworkSet() = default;

const NetworkSpec& NetworkSet::spec(int net) const {
  CFR_CHECK(net >= 0 && net < size(), "network {} of {}", net, size());
  return specs_[static_cast<std::size_t>(net)];
}

Evaluator& NetworkSet::evaluator(int net) {
  CFR_CHECK(net >= 0 && net < size(), "network {} of {}", net, size());
  return *impl_->infer[static_cast<std::size_t>(net)];
}

std::vector<Evaluator*> NetworkSet::evaluators(int replica) {
  std::vector<Evaluator*> out;
  for (int n = 0; n < size(); ++n) out.push_back(&evaluator(n, replica));
  return out;
}

void NetworkSet::set_replicas(int count) {
  CFR_CHECK(count >= 1, "{} replicas", count);
  auto& im = *impl_;
  im.extra.resize(static_cast<std::size_t>(count - 1));
  for (auto& set : im.extra) {
    set.resize(specs_.size());
    for (std::size_t k = 0; k < set.size(); ++k)
      if (!set[k]) set[k] = im.make_snapshot(static_cast<int>(k), im.infer[k]->net());
  }
}

const std::string& NetworkSet::precision() const noexcept { return impl_->precision; }

int NetworkSet::replicas() const noexcept { return 1 + static_cast<int>(impl_->extra.size()); }

Evaluator& NetworkSet::evaluator(int net, int replica) {
  CFR_CHECK(replica >= 0 && replica < replicas() && net >= 0 && net < size(), "replica {} of network {}", replica, net);
  if (replica == 0) return evaluator(net);
  return *impl_->extra[static_cast<std::size_t>(replica - 1)][static_cast<std::size_t>(net)];
}

std::int64_t NetworkSet::parameters(int net) const {
  std::int64_t n = 0;
  for (const auto& p : impl_->train[static_cast<std::size_t>(net)]->parameters()) n += p.numel();
  return n;
}

std::int64_t NetworkSet::total_parameters() const {
  std::int64_t n = 0;
  for (int k = 0; k < size(); ++k) n += parameters(k);
  return n;
}

void NetworkSet::publish() {
  for (int k = 0; k < size(); ++k) publish(k);
}

void NetworkSet::publish(int net) {
  CFR_CHECK(net >= 0 && net < size(), "network {}", net);
  const auto k = static_cast<std::size_t>(net);
  impl_->infer[k]->set_weights(impl_->ema[k] ? impl_->ema[k] : impl_->train[k]);
  for (auto& set : impl_->extra) set[k]->set_weights(impl_->infer[k]->net());
}

namespace {
/// Appends network m's parameters, flattened in parameter order.
void append_flat(const Mlp& m, std::vector<float>& out) {
  torch::NoGradGuard g;
  for (const auto& p : m->parameters()) {
    const auto c = p.detach().to(torch::kCPU).contiguous();
    out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
}
}  // namespace

std::vector<float> NetworkSet::published_weights() const {
  std::vector<float> out;
  out.reserve(static_cast<std::size_t>(total_parameters()));
  for (std::size_t k = 0; k < specs_.size(); ++k) append_flat(impl_->infer[k]->net(), out);
  return out;
}

std::vector<float> NetworkSet::published_weights(int net) const {
  CFR_CHECK(net >= 0 && net < size(), "network {}", net);
  std::vector<float> out;
  out.reserve(static_cast<std::size_t>(parameters(net)));
  append_flat(impl_->infer[static_cast<std::size_t>(net)]->net(), out);
  return out;
}

std::vector<float> rewire_inputs(std::span<const float> weights, int hidden, int old_inputs, std::span<const int> column_of) {
  const auto H = static_cast<std::size_t>(hidden), old_w = static_cast<std::size_t>(old_inputs), new_w = column_of.size();
  if (hidden <= 0 || old_inputs <= 0 || weights.size() < H * old_w)
    throw InputError(
        fmt::format("rewire_inputs: {} weights cannot hold a {} × {} first layer", weights.size(), hidden, old_inputs));
  for (const int c : column_of)
    if (c < -1 || c >= old_inputs)
      throw InputError(fmt::format("rewire_inputs: input {} does not exist (the network has {})", c, old_inputs));
  std::vector<float> out(H * new_w + (weights.size() - H * old_w), 0.0F);
  for (std::size_t r = 0; r < H; ++r)
    for (std::size_t j = 0; j < new_w; ++j)
      if (column_of[j] >= 0) out[r * new_w + j] = weights[r * old_w + static_cast<std::size_t>(column_of[j])];
  std::copy(weights.begin() + static_cast<std::ptrdiff_t>(H * old_w), weights.end(),
            out.begin() + static_cast<std::ptrdiff_t>(H * new_w));
  return out;
}

std::vector<float> grow_mlp(std::span<const float> weights, const MlpShape& from, int to_hidden, int to_layers,
                            const std::string& activation, std::uint64_t seed) {
  const int h = from.hidden, L = from.layers, I = from.inputs, O = from.outputs;
  if (h <= 0 || L <= 0 || I <= 0 || O <= 0)
    throw InputError(fmt::format("grow_mlp: a {}-input {}-output network of {} × {} is not a network", I, O, L, h));
  if (to_hidden < h || to_layers < L)
    throw InputError(fmt::format("grow_mlp: a {} × {} network cannot shrink to {} × {}", L, h, to_layers, to_hidden));
  if (to_layers > L && activation != "relu")
    throw InputError(
        fmt::format("grow_mlp: layers are added as identities, which only relu keeps (activation '{}')", activation));
  const auto sz = [](int a, int b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); };
  const std::size_t want = sz(h, I) + sz(h, 1) + sz(L - 1, sz(h, h) + sz(h, 1)) + sz(O, h) + sz(O, 1);
  if (weights.size() != want)
    throw InputError(
        fmt::format("grow_mlp: {} weights given; a {}-input {}-output {} × {} network has {}", weights.size(), I, O, L, h, want));
  const int H = to_hidden;
  Rng rng(seed);
  std::vector<float> out;
  out.reserve(sz(H, I) + sz(H, 1) + sz(to_layers - 1, sz(H, H) + sz(H, 1)) + sz(O, H) + sz(O, 1));
  std::size_t at = 0;  // read position in `weights`
  for (int layer = 0; layer < L; ++layer) {
    const int in_old = layer == 0 ? I : h, in_new = layer == 0 ? I : H;
    const double bound = 1.0 / std::sqrt(static_cast<double>(in_new));
    for (int r = 0; r < H; ++r)
      for (int c = 0; c < in_new; ++c) {
        if (r < h)
          out.push_back(c < in_old ? weights[at + sz(r, in_old) + static_cast<std::size_t>(c)] : 0.0F);
        else
          out.push_back(static_cast<float>((2 * rng.uniform() - 1) * bound));
      }
    at += sz(h, in_old);
    for (int r = 0; r < H; ++r) out.push_back(r < h ? weights[at + static_cast<std::size_t>(r)] : 0.0F);
    at += static_cast<std::size_t>(h);
  }
  for (int layer = L; layer < to_layers; ++layer) {
    for (int r = 0; r < H; ++r)
      for (int c = 0; c < H; ++c) out.push_back(r == c ? 1.0F : 0.0F);
    out.insert(out.end(), static_cast<std::size_t>(H), 0.0F);
  }
  for (int o = 0; o < O; ++o)
    for (int c = 0; c < H; ++c) out.push_back(c < h ? weights[at + sz(o, h) + static_cast<std::size_t>(c)] : 0.0F);
  at += sz(O, h);
  out.insert(out.end(), weights.begin() + static_cast<std::ptrdiff_t>(at), weights.end());
  return out;
}

void NetworkSet::set_weights(int net, std::span<const float> weights) {
  CFR_CHECK(net >= 0 && net < size(), "network {}", net);
  const auto want = static_cast<std::size_t>(parameters(net));
  if (weights.size() != want)
    throw InputError(fmt::format("network '{}': {} floats given, it has {}", specs_[static_cast<std::size_t>(net)].name,
                                 weights.size(), want));
  {
    torch::NoGradGuard g;
    std::size_t at = 0;
    for (auto& p : impl_->train[static_cast<std::size_t>(net)]->parameters()) {
      p.copy_(torch::from_blob(const_cast<float*>(weights.data() + at), p.sizes(), torch::kFloat32).to(p.device()));
      at += static_cast<std::size_t>(p.numel());
    }
  }
  impl_->ema[static_cast<std::size_t>(net)] = Mlp(nullptr);  // else publish() would copy the stale average
  impl_->ema_steps[static_cast<std::size_t>(net)] = 0;
  publish(net);
}

void NetworkSet::set_published_weights(std::span<const float> weights) {
  const auto want = static_cast<std::size_t>(total_parameters());
  if (weights.size() != want)
    throw InputError(fmt::format("network weights: {} floats received, these networks have {}", weights.size(), want));
  {
    torch::NoGradGuard g;
    std::size_t at = 0;
    for (std::size_t k = 0; k < specs_.size(); ++k)
      for (auto& p : impl_->train[k]->parameters()) {
        const auto n = static_cast<std::size_t>(p.numel());
        p.copy_(torch::from_blob(const_cast<float*>(weights.data() + at), p.sizes(), torch::kFloat32));
        at += n;
      }
  }
  for (std::size_t k = 0; k < specs_.size(); ++k) {  // else publish() would copy a stale average
    impl_->ema[k] = Mlp(nullptr);
    impl_->ema_steps[k] = 0;
  }
  publish();
}

std::int64_t NetworkSet::take_nonfinite_outputs(int net) {
  std::int64_t n = impl_->infer[static_cast<std::size_t>(net)]->take_nonfinite();
  for (auto& set : impl_->extra) n += set[static_cast<std::size_t>(net)]->take_nonfinite();
  return n;
}

bool NetworkSet::weights_finite(int net) const {
  torch::NoGradGuard g;
  for (const auto& p : impl_->train[static_cast<std::size_t>(net)]->parameters())
    if (!torch::isfinite(p).all().item<bool>()) return false;
  return true;
}

void NetworkSet::inject_nonfinite_weights(int net) {
  {
    torch::NoGradGuard g;
    for (auto& p : impl_->train[static_cast<std::size_t>(net)]->parameters()) p.fill_(std::nanf(""));
  }
  publish();
}

void NetworkSet::reinitialize(int n, int iteration) {
  CFR_CHECK(n >= 0 && n < size(), "network {}", n);
  impl_->train[static_cast<std::size_t>(n)] = impl_->make(
      n, derive_seed(impl_->seed, kReinitStream, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(iteration)));
  impl_->reset_optimizer(n);
  impl_->ema[static_cast<std::size_t>(n)] = Mlp(nullptr);  // a new average begins with the new weights
}

void NetworkSet::save(const std::string& path) const {
  torch::serialize::OutputArchive root;
  for (std::size_t k = 0; k < specs_.size(); ++k) {
    torch::serialize::OutputArchive net, opt;
    impl_->train[k]->save(net);
    impl_->optim[k]->save(opt);
    root.write(fmt::format("net{}", k), net);
    root.write(fmt::format("optim{}", k), opt);
    if (impl_->ema[k]) {
      torch::serialize::OutputArchive ema;
      impl_->ema[k]->save(ema);
      root.write(fmt::format("ema{}", k), ema);
      root.write(fmt::format("ema_steps{}", k), torch::tensor({impl_->ema_steps[k]}, torch::kInt64));
    }
  }
  // Serialised in memory, then written with checked writes: LibTorch's file writer fails a full
  // disk inside a destructor (std::terminate, exit 134); here it is an InputError naming the file
  // and the reason (engine/core/files.h).
  std::ostringstream bytes;
  root.save_to(bytes);
  write_file(path, bytes.view());
}

void NetworkSet::load(const std::string& path) {
  // Everything is read into new modules and optimisers first and checked against this set's
  // shapes, and only then swapped in: LibTorch's Module::load replaces a parameter with the
  // file's tensor whatever its shape, so reading straight into the training nets would leave
  // them in the file's shape (and half loaded) when the file holds other networks.
  auto& im = *impl_;
  const std::size_t count = specs_.size();
  std::vector<Mlp> train(count, Mlp(nullptr)), ema(count, Mlp(nullptr));
  std::vector<std::unique_ptr<torch::optim::AdamW>> optim(count);
  std::vector<std::int64_t> ema_steps(count, 0);
  auto check_shapes = [&](const Mlp& read, std::size_t k, const char* what) {
    const auto got = read->named_parameters();
    for (const auto& p : im.train[k]->named_parameters()) {
      const torch::Tensor* g = got.find(p.key());
      if (g == nullptr || g->sizes() != p.value().sizes())
        throw InputError(fmt::format("{}: {} '{}': parameter '{}' has shape {}, this set's ({}×{} MLP, {} → {}) needs {}", path,
                                     what, specs_[k].name, p.key(), g ? fmt::format("{}", fmt::join(g->sizes(), "×")) : "(none)",
                                     im.cfg.num_layers, im.cfg.hidden_size, specs_[k].input_width, specs_[k].output_width,
                                     fmt::join(p.value().sizes(), "×")));
    }
  };
  try {
    torch::serialize::InputArchive root;
    root.load_from(path, im.device);
    // The archive must hold exactly this set's networks: one more is another set.
    torch::serialize::InputArchive extra_net;
    if (root.try_read(fmt::format("net{}", count), extra_net))
      throw InputError(fmt::format("{}: the archive holds more than the {} networks of this set", path, count));
    for (std::size_t k = 0; k < count; ++k) {
      const int n = static_cast<int>(k);
      torch::serialize::InputArchive net, opt;
      root.read(fmt::format("net{}", k), net);
      root.read(fmt::format("optim{}", k), opt);
      train[k] = im.make(n, 0);
      train[k]->load(net);
      check_shapes(train[k], k, "network");
      optim[k] =
          std::make_unique<torch::optim::AdamW>(train[k]->parameters(), torch::optim::AdamWOptions(im.lr).weight_decay(im.wd));
      optim[k]->load(opt);
      torch::serialize::InputArchive average;
      torch::Tensor steps;
      if (root.try_read(fmt::format("ema{}", k), average) && root.try_read(fmt::format("ema_steps{}", k), steps)) {
        ema[k] = im.make(n, 0);
        ema[k]->load(average);
        check_shapes(ema[k], k, "average of network");
        ema_steps[k] = steps.item<std::int64_t>();
      }
    }
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    std::string shapes;
    for (const auto& s : specs_)
      shapes += fmt::format("{}{} {} → {}", shapes.empty() ? "" : ", ", s.name, s.input_width, s.output_width);
    throw InputError(fmt::format("{}: cannot load the networks ({}×{} MLPs: {}): {}", path, im.cfg.num_layers, im.cfg.hidden_size,
                                 shapes, what.substr(0, what.find('\n'))));
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {  // anything else a corrupt archive makes LibTorch throw
    std::string what = e.what();
    throw InputError(fmt::format("{}: cannot load the networks: {}", path, what.substr(0, what.find('\n'))));
  }
  im.train = std::move(train);
  im.optim = std::move(optim);
  im.ema = std::move(ema);
  im.ema_steps = std::move(ema_steps);
  publish();
}

namespace {

/// A loss on a batch: its value and the weight it was normalised by (a 0-dim tensor: the summed
/// sample weights, or the rows), which weights a shard's gradient in data-parallel training.
struct BatchLoss {
  torch::Tensor loss, weight;
};

/// `mem` and `rng`: the batches' source (one learner, or learner 0 of data-parallel training);
/// null for learner k > 0, whose rows come from learner 0 (cfg.data_parallel).
template <class Loss>
TrainStats train_loop(NetworkSet::Impl& im, int net, BatchSource* mem, const TrainConfig& cfg, Rng* rng, Loss&& loss_fn) {
  TrainStats st;
  const auto t0 = std::chrono::steady_clock::now();
  DataParallel* const dp = cfg.data_parallel;
  const bool draws = mem != nullptr;
  const auto& s = im.specs[static_cast<std::size_t>(net)];
  const int in_w = s.input_width, t_w = s.sample_target_width();
  // Learner 0 ends the other learners' steps however this returns.
  struct EndShards {
    DataParallel* dp;
    int in_w, t_w;
    ~EndShards() {
      try {
        if (dp != nullptr) dp->exchange_batch(-1, in_w, t_w, {}, {}, {}, {});
      } catch (...) {  // the transport ends the job itself when it cannot reach a learner
      }
    }
  } end_shards{draws ? dp : nullptr, in_w, t_w};
  if (draws && mem->rows() == 0) return st;
  const int b = draws ? static_cast<int>(std::min<std::int64_t>(cfg.batch_size, mem->rows())) : cfg.batch_size;
  // Batches are sampled straight into host tensors (pinned on CUDA, so the copies to the device
  // are asynchronous; loss.item() synchronises before the next batch overwrites them).
  const bool cuda = im.device.is_cuda();
  auto& hb = im.host[static_cast<std::size_t>(net)];
  if (!hb.in.defined() || hb.in.size(0) < b) {
    const auto host = torch::TensorOptions().dtype(torch::kFloat32).pinned_memory(cuda);
    hb.in = torch::empty({b, in_w}, host);
    hb.target = torch::empty({b, t_w}, host);
    hb.legal = torch::empty({b, t_w}, host);
    hb.iter = torch::empty({b}, host);
  }
  auto span_of = [b](torch::Tensor& t) {
    return std::span<float>(t.data_ptr<float>(), static_cast<std::size_t>(b * (t.dim() == 2 ? t.size(1) : 1)));
  };
  auto& model = im.train[static_cast<std::size_t>(net)];
  auto& opt = *im.optim[static_cast<std::size_t>(net)];
  for (auto& g : opt.param_groups()) {
    static_cast<torch::optim::AdamWOptions&>(g.options()).lr(cfg.learning_rate);
    static_cast<torch::optim::AdamWOptions&>(g.options()).weight_decay(cfg.weight_decay);
  }
  model->train();
  // Data-parallel: the weighted flat gradient, then the weight and the weighted loss.
  std::vector<float> flat;
  std::vector<torch::Tensor> params = model->parameters();
  std::size_t grads = 0;
  if (dp != nullptr) {
    for (const auto& p : params) grads += static_cast<std::size_t>(p.numel());
    flat.resize(grads + 2);
  }
  double sum = 0, grad_norm_sum = 0;
  for (int step = 0; draws ? step < cfg.updates : true; ++step) {
    if (draws && cfg.stop != nullptr && cfg.stop->load(std::memory_order_relaxed)) {
      st.stopped = true;
      break;
    }
    const auto ts0 = std::chrono::steady_clock::now();
    if (draws) mem->sample(b, *rng, span_of(hb.in), span_of(hb.target), span_of(hb.legal), span_of(hb.iter));
    int rows = b;
    const auto te0 = std::chrono::steady_clock::now();
    if (dp != nullptr) {
      rows =
          dp->exchange_batch(draws ? b : 0, in_w, t_w, span_of(hb.in), span_of(hb.target), span_of(hb.legal), span_of(hb.iter));
      if (rows < 0) break;  // learner 0 ended this network's steps
    }
    const auto ts1 = std::chrono::steady_clock::now();
    double reduce = 0;  // in the gradient sums
    auto x = hb.in.narrow(0, 0, rows).to(im.device, cuda);
    auto target = hb.target.narrow(0, 0, rows).to(im.device, cuda);
    auto legal = hb.legal.narrow(0, 0, rows).to(im.device, cuda);
    auto iters = hb.iter.narrow(0, 0, rows).to(im.device, cuda);
    opt.zero_grad();
    BatchLoss loss = loss_fn(im.forward_train(net, x), target, legal, iters);
    double l = loss.loss.item<double>();
    if (dp == nullptr) {
      if (!std::isfinite(l)) {
        ++st.skipped_nonfinite;
        continue;
      }
      loss.loss.backward();
    } else {
      // This shard's gradient times its weight; the sums over the learners then divide by the
      // summed weight: the whole batch's gradient. A non-finite loss anywhere makes the summed
      // loss non-finite, and every learner skips the step.
      const double w = rows > 0 ? loss.weight.item<double>() : 0.0;
      const bool contributes = rows > 0 && w > 0 && std::isfinite(l);
      if (contributes) loss.loss.backward();
      std::size_t at = 0;
      torch::NoGradGuard no_grad;
      for (const auto& p : params) {
        const auto n = static_cast<std::size_t>(p.numel());
        if (contributes && p.grad().defined()) {
          const auto g = p.grad().detach().to(torch::kCPU).contiguous();
          const float* d = g.data_ptr<float>();
          for (std::size_t i = 0; i < n; ++i) flat[at + i] = static_cast<float>(d[i] * w);
        } else {
          std::fill_n(flat.begin() + static_cast<std::ptrdiff_t>(at), n, 0.0F);
        }
        at += n;
      }
      flat[grads] = static_cast<float>(w);
      flat[grads + 1] = rows > 0 && w > 0 ? static_cast<float>(l * w) : 0.0F;
      const auto tr0 = std::chrono::steady_clock::now();
      dp->sum(flat);
      reduce = std::chrono::duration<double>(std::chrono::steady_clock::now() - tr0).count();
      const double total = flat[grads];
      l = total > 0 ? flat[grads + 1] / total : 0.0;
      if (!std::isfinite(l) || !(total > 0)) {
        ++st.skipped_nonfinite;
        continue;
      }
      at = 0;
      for (auto& p : params) {
        const auto n = static_cast<std::size_t>(p.numel());
        for (std::size_t i = 0; i < n; ++i) flat[at + i] = static_cast<float>(flat[at + i] / total);
        auto g = torch::from_blob(flat.data() + at, p.sizes(), torch::kFloat32).to(p.device());
        if (p.grad().defined())
          p.mutable_grad().copy_(g);
        else
          p.mutable_grad() = g.clone();
        at += n;
      }
    }
    const auto ts2 = std::chrono::steady_clock::now();
    // The norm is measured with clipping off too (an infinite bound clips nothing).
    const double norm =
        torch::nn::utils::clip_grad_norm_(params, cfg.grad_clip > 0 ? cfg.grad_clip : std::numeric_limits<double>::infinity());
    grad_norm_sum += norm;
    if (cfg.grad_clip > 0 && norm > cfg.grad_clip) ++st.clipped_steps;
    opt.step();
    if (cfg.ema_decay > 0) im.update_ema(net, cfg.ema_decay);
    const auto ts3 = std::chrono::steady_clock::now();
    st.sample_seconds += std::chrono::duration<double>(te0 - ts0).count();
    st.exchange_seconds += std::chrono::duration<double>(ts1 - te0).count() + reduce;
    st.forward_backward_seconds += std::chrono::duration<double>(ts2 - ts1).count() - reduce;
    st.step_seconds += std::chrono::duration<double>(ts3 - ts2).count();
    ++st.steps;
    sum += l;
    st.last_loss = l;
  }
  st.mean_loss = st.steps ? sum / st.steps : 0.0;
  st.mean_grad_norm = st.steps ? grad_norm_sum / st.steps : 0.0;
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

/// Network `net`'s training with its declared loss: NetworkSet::train (`mem` and `rng` given) and
/// train_shard (both null).
TrainStats train_network(NetworkSet::Impl& im, int net, BatchSource* mem, int iteration, const TrainConfig& cfg, Rng* rng) {
  const double T = std::max(1, iteration);
  const auto& spec = im.specs[static_cast<std::size_t>(net)];
  if (spec.loss == NetLoss::kMaskedMse)
    return train_loop(
        im, net, mem, cfg, rng,
        [&](const torch::Tensor& pred, const torch::Tensor& target, const torch::Tensor& legal, const torch::Tensor& iters) {
          auto w = cfg.linear_weighting ? iters / T : torch::ones_like(iters);
          auto wl = legal * w.unsqueeze(1);
          auto scaled = cfg.target_scale == 1.0 ? target : target / cfg.target_scale;
          auto weight = wl.sum().clamp_min(1e-12);
          return BatchLoss{(wl * (pred - scaled).pow(2)).sum() / weight, weight.detach()};
        });
  if (spec.loss == NetLoss::kClippedPolicyGradient) {
    const auto& pg = cfg.policy_gradient;
    std::array<double, 5> parts{};
    TrainStats st = train_loop(
        im, net, mem, cfg, rng,
        [&](const torch::Tensor& logits, const torch::Tensor& target, const torch::Tensor& legal, const torch::Tensor&) {
          const std::int64_t A = logits.size(1);
          const std::int64_t rows = logits.size(0);
          auto leg = legal.narrow(1, 0, A);
          auto logp = torch::log_softmax(logits.masked_fill(leg == 0, -1e9), 1);
          auto p = logp.exp() * leg;
          auto advantage = target.narrow(1, 0, A).sum(1);
          if (pg.normalize_advantage && cfg.data_parallel != nullptr) {
            // The whole batch's mean and standard deviation: sums over the learners.
            const auto a = advantage.to(torch::kFloat64);
            std::array<float, 3> m{static_cast<float>(a.sum().item<double>()), static_cast<float>(a.pow(2).sum().item<double>()),
                                   static_cast<float>(rows)};
            cfg.data_parallel->sum(m);
            if (m[2] > 1) {
              const double mean = m[0] / m[2], var = std::max(0.0, m[1] / m[2] - mean * mean);
              advantage = (advantage - mean) / (std::sqrt(var) + 1e-8);
            }
          } else if (pg.normalize_advantage && advantage.size(0) > 1) {
            auto centred = advantage - advantage.mean();
            advantage = centred / (centred.pow(2).mean().sqrt() + 1e-8);
          }
          auto behaviour = target.narrow(1, A, A);
          auto taken = (behaviour > 0).to(torch::kFloat32);
          auto ratio = ((logp * taken).sum(1) - behaviour.sum(1).clamp_min(1e-12).log()).exp();
          auto surrogate = -torch::min(ratio * advantage, ratio.clamp(1 - pg.clip, 1 + pg.clip) * advantage);
          auto magnet = target.narrow(1, 2 * A, A);
          // Illegal entries: p = 0 and log ρ finite (clamped), so they add nothing.
          auto kl = (p * (logp.clamp_min(-80) - magnet.clamp_min(1e-12).log())).sum(1);
          auto bc = -(target.narrow(1, 3 * A, A) * logp).sum(1);
          auto entropy = -(p * logp.clamp_min(-80)).sum(1);
          auto loss = (surrogate + pg.magnet_weight * kl + pg.bc_weight * bc - pg.entropy_weight * entropy).mean();
          // The parts of finite steps only (a skipped step would make every mean NaN),
          // read in one transfer.
          const auto clipped = ((ratio - 1).abs() > pg.clip).to(torch::kFloat32).mean();
          const auto v = torch::stack({surrogate.mean(), kl.mean(), bc.mean(), entropy.mean(), clipped}).detach().to(torch::kCPU);
          const float* pv = v.data_ptr<float>();
          if (cfg.data_parallel != nullptr) {
            // The whole batch's parts, and its loss for the finite test: row-weighted sums over
            // the learners (a shard without rows adds nothing; its means are NaN).
            std::array<float, 7> m{};
            if (rows > 0) {
              for (std::size_t k = 0; k < 5; ++k) m[k] = pv[k] * static_cast<float>(rows);
              m[5] = static_cast<float>(loss.item<double>() * static_cast<double>(rows));
            }
            m[6] = static_cast<float>(rows);
            cfg.data_parallel->sum(m);
            if (std::isfinite(m[5]) && m[6] > 0) {
              for (std::size_t k = 0; k < 5; ++k) parts[k] += m[k] / m[6];
            }
          } else if (std::isfinite(loss.item<double>())) {
            for (int k = 0; k < 5; ++k) parts[static_cast<std::size_t>(k)] += pv[k];
          }
          return BatchLoss{loss, torch::tensor(static_cast<double>(rows))};
        });
    const double n = std::max(1, st.steps);
    st.policy_gradient = {parts[0] / n, parts[1] / n, parts[2] / n, parts[3] / n, parts[4] / n};
    return st;
  }
  return train_loop(
      im, net, mem, cfg, rng,
      [&](const torch::Tensor& logits, const torch::Tensor& target, const torch::Tensor& legal, const torch::Tensor& iters) {
        auto w = cfg.linear_weighting ? iters / T : torch::ones_like(iters);
        // Illegal logits get a large finite negative value: log_softmax stays finite and
        // their targets are 0, so they add nothing (−∞ would give 0·∞ = NaN).
        auto masked = logits.masked_fill(legal == 0, -1e9);
        auto ce = -(target * torch::log_softmax(masked, 1)).sum(1);
        auto weight = w.sum().clamp_min(1e-12);
        return BatchLoss{(w * ce).sum() / weight, weight.detach()};
      });
}

}  // namespace

TrainStats NetworkSet::train(int net, BatchSource& memory, int iteration, const TrainConfig& cfg, Rng& rng) {
  CFR_CHECK(net >= 0 && net < size(), "network {}", net);
  CFR_CHECK(cfg.data_parallel == nullptr || cfg.data_parallel->index() == 0, "learner {} draws no batches",
            cfg.data_parallel->index());
  return train_network(*impl_, net, &memory, iteration, cfg, &rng);
}

TrainStats NetworkSet::train_shard(int net, int iteration, const TrainConfig& cfg) {
  CFR_CHECK(net >= 0 && net < size(), "network {}", net);
  CFR_CHECK(cfg.data_parallel != nullptr && cfg.data_parallel->index() > 0, "train_shard is for learners 1..N-1");
  return train_network(*impl_, net, nullptr, iteration, cfg, nullptr);
}

std::string NetworkSet::training_state(int net) const {
  CFR_CHECK(net >= 0 && net < size(), "network {}", net);
  const auto k = static_cast<std::size_t>(net);
  torch::serialize::OutputArchive root, weights, opt;
  impl_->train[k]->save(weights);
  impl_->optim[k]->save(opt);
  root.write("net", weights);
  root.write("optim", opt);
  std::ostringstream bytes;
  root.save_to(bytes);
  return std::move(bytes).str();
}

void NetworkSet::set_training_state(int net, const std::string& bytes) {
  CFR_CHECK(net >= 0 && net < size(), "network {}", net);
  auto& im = *impl_;
  const auto k = static_cast<std::size_t>(net);
  Mlp m(nullptr);
  std::unique_ptr<torch::optim::AdamW> opt;
  try {
    std::istringstream in(bytes);
    torch::serialize::InputArchive root, weights, state;
    root.load_from(in, im.device);
    root.read("net", weights);
    root.read("optim", state);
    m = im.make(net, 0);
    m->load(weights);
    const auto got = m->named_parameters();
    for (const auto& p : im.train[k]->named_parameters()) {
      const torch::Tensor* g = got.find(p.key());
      if (g == nullptr || g->sizes() != p.value().sizes())
        throw InputError(
            fmt::format("network '{}': a training state whose parameter '{}' has another shape", specs_[k].name, p.key()));
    }
    opt = std::make_unique<torch::optim::AdamW>(m->parameters(), torch::optim::AdamWOptions(im.lr).weight_decay(im.wd));
    opt->load(state);
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    throw InputError(
        fmt::format("network '{}': cannot read a training state: {}", specs_[k].name, what.substr(0, what.find('\n'))));
  }
  im.train[k] = std::move(m);
  im.optim[k] = std::move(opt);
}

PrecisionChoice resolve_precision(const std::string& requested, const std::string& device, int device_index) {
  if (requested != "fp32" && requested != "bf16" && requested != "auto")
    throw InputError(fmt::format("network.precision = '{}'; valid: fp32, bf16, auto", requested));
  if (requested != "auto") return {requested, "network.precision = " + requested};
  if (device == "cuda") {
    // The compute capability from the CUDA runtime that LibTorch loaded, found by name: no CUDA
    // header or library is needed to build this (ATen's CUDA context header would pull cuBLAS's
    // headers, which a PyTorch wheel's runtime headers do not include).
    using GetAttribute = int (*)(int*, int, int);
    constexpr int kCapabilityMajor = 75, kCapabilityMinor = 76;  // cudaDevAttrComputeCapabilityMajor/Minor
    auto* get = reinterpret_cast<GetAttribute>(dlsym(RTLD_DEFAULT, "cudaDeviceGetAttribute"));
    if (get != nullptr && torch::cuda::is_available()) {
      const int count = static_cast<int>(torch::cuda::device_count());
      const int index = std::max(0, device_index) % std::max(1, count);
      int major = 0, minor = 0;
      if (get(&major, kCapabilityMajor, index) == 0 && get(&minor, kCapabilityMinor, index) == 0)
        return major >= 8 ? PrecisionChoice{"bf16", fmt::format("network.precision = auto: bf16 (CUDA compute capability {}.{})",
                                                                major, minor)}
                          : PrecisionChoice{"fp32", fmt::format("network.precision = auto: fp32 (CUDA compute capability {}.{} "
                                                                "< 8.0: no fast bfloat16)",
                                                                major, minor)};
    }
    return {"fp32", "network.precision = auto: fp32 (no CUDA device or runtime to ask about bfloat16)"};
  }
  std::vector<std::string> found;
  for (const char* f : {"avx512_bf16", "amx_bf16"})
    if (cpu_has(f)) found.push_back(f);
  if (found.empty()) return {"fp32", "network.precision = auto: fp32 (the CPU has neither avx512_bf16 nor amx_bf16)"};
  if (!at::hasMKLDNN())
    return {"fp32", "network.precision = auto: fp32 (this LibTorch has no oneDNN for bfloat16 matrix products)"};
  return {"bf16", fmt::format("network.precision = auto: bf16 (the CPU has {}, LibTorch has oneDNN)", fmt::join(found, ", "))};
}

void configure_torch_threads(int threads) {
  using SetThreads = void (*)(int);
  if (auto* set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(1);
  torch::set_num_threads(std::max(1, threads));
}

}  // namespace cfr
