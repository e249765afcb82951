#include "apps/run/algorithm_registry.h"

#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/core/errors.h"

namespace cfr {

AlgorithmOption integer_option(std::string name, std::int64_t default_value, std::int64_t min, std::int64_t max,
                               std::string help) {
  return {.name = std::move(name),
          .default_value = default_value,
          .min = static_cast<double>(min),
          .max = static_cast<double>(max),
          .choices = {},
          .help = std::move(help)};
}
AlgorithmOption real_option(std::string name, double default_value, double min, double max, std::string help) {
  return {
      .name = std::move(name), .default_value = default_value, .min = min, .max = max, .choices = {}, .help = std::move(help)};
}
AlgorithmOption bool_option(std::string name, bool default_value, std::string help) {
  return {.name = std::move(name), .default_value = default_value, .min = 0, .max = 0, .choices = {}, .help = std::move(help)};
}
AlgorithmOption string_option(std::string name, std::string default_value, std::vector<std::string> choices, std::string help) {
  return {.name = std::move(name),
          .default_value = std::move(default_value),
          .min = 0,
          .max = 0,
          .choices = std::move(choices),
          .help = std::move(help)};
}

AlgorithmOption list_option(std::string name, std::vector<std::string> default_value, std::string help) {
  return {.name = std::move(name),
          .default_value = std::move(default_value),
          .min = 0,
          .max = 0,
          .choices = {},
          .help = std::move(help)};
}

namespace {

template <class T>
const T& get(const AlgorithmSettings& s, const std::string& name) {
  const auto it = s.values.find(name);
  if (it == s.values.end()) throw std::logic_error("algorithm option '" + name + "' is not declared");
  const T* v = std::get_if<T>(&it->second);
  if (v == nullptr) throw std::logic_error("algorithm option '" + name + "' read as another type");
  return *v;
}

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, AlgorithmInfo>& registry() {
  static std::map<std::string, AlgorithmInfo> r;
  return r;
}

}  // namespace

std::int64_t AlgorithmSettings::integer(const std::string& name) const { return get<std::int64_t>(*this, name); }
double AlgorithmSettings::real(const std::string& name) const { return get<double>(*this, name); }
bool AlgorithmSettings::flag(const std::string& name) const { return get<bool>(*this, name); }
const std::string& AlgorithmSettings::text(const std::string& name) const { return get<std::string>(*this, name); }
const std::vector<std::string>& AlgorithmSettings::list(const std::string& name) const {
  return get<std::vector<std::string>>(*this, name);
}

void register_algorithm(AlgorithmInfo info) {
  std::lock_guard lock(registry_mutex());
  std::string name = info.name;
  registry()[std::move(name)] = std::move(info);
}

std::vector<std::string> algorithm_names() {
  std::lock_guard lock(registry_mutex());
  std::vector<std::string> v;
  for (const auto& [name, info] : registry()) v.push_back(name);
  return v;
}

AlgorithmInfo find_algorithm(std::string_view name) {
  {
    std::lock_guard lock(registry_mutex());
    const auto it = registry().find(std::string(name));
    if (it != registry().end()) return it->second;
  }
  throw InputError(fmt::format("algorithm.name = '{}'; valid: {}", name, join_names(algorithm_names())));
}

}  // namespace cfr
