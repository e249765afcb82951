#include "python/evaluator.h"

#include <pybind11/numpy.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "engine/core/errors.h"

namespace pb = pybind11;

namespace cfr::py {

namespace {

std::string shape_text(const pb::array& a) {
  std::string s = "(";
  for (pb::ssize_t d = 0; d < a.ndim(); ++d) s += fmt::format("{}{}", d > 0 ? ", " : "", a.shape(d));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

}  // namespace

PyEvaluator::PyEvaluator(pb::object fn, int net, std::string name, int input_width, int output_width, bool stop_on_nonfinite)
    : fn_(std::move(fn)),
      net_(net),
      name_(std::move(name)),
      in_(input_width),
      out_(output_width),
      stop_on_nonfinite_(stop_on_nonfinite) {}

PyEvaluator::~PyEvaluator() = default;

void PyEvaluator::evaluate(std::span<const float> inputs, std::span<const ActionMask> legal, std::span<float> outputs) {
  const auto start = std::chrono::steady_clock::now();
  const auto n = static_cast<pb::ssize_t>(legal.size());
  {
    pb::gil_scoped_acquire gil;
    try {
      pb::array_t<float> x({n, static_cast<pb::ssize_t>(in_)});
      std::memcpy(x.mutable_data(), inputs.data(), sizeof(float) * inputs.size());
      pb::array_t<bool> m({n, static_cast<pb::ssize_t>(out_)});
      bool* mask = m.mutable_data();
      for (pb::ssize_t i = 0; i < n; ++i)
        for (int a = 0; a < out_; ++a) mask[i * out_ + a] = mask_has(legal[static_cast<std::size_t>(i)], a);
      const pb::object y = fn_(x, m, net_);
      const auto expected = fmt::format("float32 of shape ({}, {}): one row of {} outputs per input row", n, out_, out_);
      const pb::array arr = pb::array::ensure(y);
      if (!arr) {  // say why NumPy refused it (a tensor that requires grad, ...)
        std::string why;
        try {
          (void)pb::module_::import("numpy").attr("asarray")(y);
        } catch (pb::error_already_set& e) {
          why = fmt::format(" (numpy.asarray: {})", pb::str(e.value()).cast<std::string>());
        }
        throw InputError(fmt::format("evaluator for network {} ({}) returned a {}, not an array{}; expected {}", net_, name_,
                                     pb::str(pb::type::of(y).attr("__name__")).cast<std::string>(), why, expected));
      }
      if (!arr.dtype().is(pb::dtype::of<float>()) || arr.ndim() != 2 || arr.shape(0) != n || arr.shape(1) != out_)
        throw InputError(fmt::format("evaluator for network {} ({}) returned {} of shape {}; expected {}", net_, name_,
                                     pb::str(arr.dtype()).cast<std::string>(), shape_text(arr), expected));
      const auto c = pb::array_t<float, pb::array::c_style | pb::array::forcecast>::ensure(arr);
      std::memcpy(outputs.data(), c.data(), sizeof(float) * static_cast<std::size_t>(n * out_));
    } catch (pb::error_already_set& e) {
      error_ = std::make_unique<pb::error_already_set>(std::move(e));
      throw std::runtime_error(fmt::format("the evaluator for network {} ({}) raised", net_, name_));
    }
  }
  const std::int64_t bad = replace_nonfinite(outputs.first(static_cast<std::size_t>(n * out_)));
  if (bad > 0 && stop_on_nonfinite_)
    throw InputError(
        fmt::format("evaluator for network {} ({}) returned {} non-finite value(s) in a batch of {} rows "
                    "(optimization.nonfinite_policy = stop)",
                    net_, name_, bad, n));
  stats_.nonfinite += bad;
  stats_.calls += 1;
  stats_.rows += n;
  stats_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void PyEvaluator::rethrow() {
  if (error_) {
    auto e = std::move(error_);
    throw std::move(*e);
  }
}

}  // namespace cfr::py
