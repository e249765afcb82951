# The header-only dependencies packed by scripts/pack-deps.sh into CFR_DEPS_DIR (for machines
# without apt, e.g. the GPU machine): fmt (header-only mode), nlohmann-json, toml++, CLI11,
# doctest, xxHash (header-only), zlib's headers and the part of Boost that Asio needs. Defines the
# same targets as Debian's CMake packages.
set(_inc ${CFR_DEPS_DIR}/include)
if(NOT EXISTS ${_inc}/fmt/format.h)
  message(FATAL_ERROR "cfr: CFR_DEPS_DIR=${CFR_DEPS_DIR} holds no packed dependencies; run scripts/pack-deps.sh on a machine with the Debian packages")
endif()
foreach(t fmt::fmt nlohmann_json::nlohmann_json tomlplusplus::tomlplusplus CLI11::CLI11 doctest::doctest)
  string(REPLACE "::" "_" _name ${t})
  add_library(cfr_packed_${_name} INTERFACE)
  target_include_directories(cfr_packed_${_name} SYSTEM INTERFACE ${_inc})
  add_library(${t} ALIAS cfr_packed_${_name})
endforeach()
target_compile_definitions(cfr_packed_fmt_fmt INTERFACE FMT_HEADER_ONLY=1)
# Boost: the headers Asio's users here include, and nothing else (scripts/pack-deps.sh).
add_library(cfr_packed_boost INTERFACE)
target_include_directories(cfr_packed_boost SYSTEM INTERFACE ${_inc})
add_library(Boost::headers ALIAS cfr_packed_boost)
find_library(CFR_ZLIB_LIBRARY NAMES z libz.so.1 REQUIRED)
add_library(ZLIB::ZLIB UNKNOWN IMPORTED)
set_target_properties(ZLIB::ZLIB PROPERTIES IMPORTED_LOCATION ${CFR_ZLIB_LIBRARY} INTERFACE_INCLUDE_DIRECTORIES ${_inc})
set(doctest_DIR ${CFR_DEPS_DIR}/cmake)
find_package(Threads REQUIRED)
