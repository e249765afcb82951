#!/usr/bin/env bash
# torch_from_python_test.sh SOURCE_DIR WORK_DIR: configures the project the way the GPU machine
# does (scripts/build-gpu.sh: packed dependencies, LibTorch from a Python torch package) against
# a stand-in torch package laid out like a PyTorch 2.x wheel (its libraries and headers are
# Debian's LibTorch, linked in; it reports version 2.11.0+fake), and checks what CMake decides:
#   1. a CUDA wheel whose nvidia-* headers sit in site-packages/nvidia/cu13/include: those
#      headers and that folder's libcudart, CUDA code on, libstdc++ linked before libtorch; where
#      this machine has a CUDA toolkit, its headers play the wheel's and nets/networks.cc is
#      compiled in that configuration (CUDA code included);
#   2. a wheel whose headers lack crt/host_config.h (PyTorch 2.11's) and no toolkit: not taken, a
#      warning, CUDA code off;
#   3. the same without them and without a CUDA toolkit: a warning, CUDA code off;
#   4. a CPU wheel: no CUDA, no warning.
set -euo pipefail
src=$1 work=$2
rm -rf "$work"
site=$work/site
mkdir -p "$site/torch/lib" "$site/torch/include" "$site/nvidia/cu13"
cat > "$site/torch/__init__.py" <<'PY'
import os
__version__ = "2.11.0+fake"
class _C:
    _GLIBCXX_USE_CXX11_ABI = True
class version:
    cuda = os.environ.get("FAKE_TORCH_CUDA") or None
PY
for d in torch ATen caffe2; do [ -e "/usr/include/$d" ] && ln -s "/usr/include/$d" "$site/torch/include/$d"; done
cp -rs /usr/include/c10 "$site/torch/include/c10"  # a tree of links, so that the header a wheel has can be added:
macros=$site/torch/include/c10/cuda/impl/cuda_cmake_macros.h
[ -e "$macros" ] || printf '#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n' > "$macros"
lib=$(dirname "$(readlink -f /usr/lib/x86_64-linux-gnu/libtorch_cpu.so 2>/dev/null || find /usr/lib -name 'libtorch_cpu.so*' | head -n1)")
for l in torch torch_cpu c10; do ln -s "$lib/lib$l.so" "$site/torch/lib/lib$l.so"; done
for l in torch_cuda c10_cuda; do ln -s "$lib/libc10.so" "$site/torch/lib/lib$l.so"; done  # presence is all configure checks
cuda_inc=/usr/local/cuda/include
if [ -f "$cuda_inc/cuda_runtime_api.h" ]; then
  ln -s "$cuda_inc" "$site/nvidia/cu13/include"
else
  cuda_inc=""; mkdir -p "$site/nvidia/cu13/include/crt"
  touch "$site/nvidia/cu13/include/cuda_runtime_api.h" "$site/nvidia/cu13/include/crt/host_config.h"
fi
mkdir -p "$site/nvidia/cu13/lib"; touch "$site/nvidia/cu13/lib/libcudart.so.13"  # configure only needs the path
printf '#!/bin/sh\nPYTHONPATH=%s exec python3 "$@"\n' "$site" > "$work/python"
chmod +x "$work/python"
"$src/scripts/pack-deps.sh" "$work/deps" > /dev/null

fail=0
configure() {  # NAME EXTRA_CMAKE_ARGS...: configure into WORK/NAME, output in WORK/NAME.log
  local name=$1; shift
  cmake -S "$src" -B "$work/$name" -G Ninja -DCFR_DEPS_DIR="$work/deps" -DCFR_TORCH_PYTHON="$work/python" \
    -DCFR_BUILD_TESTS=OFF -DCFR_BUILD_BENCH=OFF -DCFR_WITH_MPI=OFF "$@" > "$work/$name.log" 2>&1 ||
    { echo "FAIL $name: configure failed"; cat "$work/$name.log"; fail=1; }
}
expect() {  # NAME REGEX: the configure output of NAME matches
  if grep -Eq -- "$2" "$work/$1.log"; then echo "ok   $1: /$2/"; else echo "FAIL $1: no /$2/ in:"; cat "$work/$1.log"; fail=1; fi
}
refuse() {  # NAME REGEX: the configure output of NAME does not match
  if grep -Eq -- "$2" "$work/$1.log"; then echo "FAIL $1: /$2/ in:"; cat "$work/$1.log"; fail=1; else echo "ok   $1: no /$2/"; fi
}

FAKE_TORCH_CUDA=13.0 configure cuda_wheel
expect cuda_wheel "cfr: LibTorch 2\.11\.0\+fake from $site/torch \(C\+\+11 ABI 1, CUDA '13\.0'\)"
expect cuda_wheel "cfr: CUDA runtime headers: $site/nvidia/cu13/include"
expect cuda_wheel "cfr: CUDA runtime library: $site/nvidia/cu13/lib/libcudart.so.13"
expect cuda_wheel "cfr: LibTorch with CUDA: ON"
# libstdc++ before the torch libraries (libtorch_cpu.so exports its own std::filesystem; docs/gpu.md)
if grep -E "LINK_LIBRARIES = .*-lstdc\+\+ .*libtorch\.so" "$work/cuda_wheel/build.ninja" > /dev/null; then
  echo "ok   cuda_wheel: -lstdc++ links before libtorch.so"
else
  echo "FAIL cuda_wheel: -lstdc++ does not come before libtorch.so:"; grep -m1 "LINK_LIBRARIES" "$work/cuda_wheel/build.ninja"; fail=1
fi
if [ -n "$cuda_inc" ] && [ $fail = 0 ]; then
  if ninja -C "$work/cuda_wheel" nets/CMakeFiles/cfr_nets.dir/networks.cc.o > "$work/compile.log" 2>&1 &&
     grep -q -- "-DCFR_TORCH_CUDA=1" "$work/cuda_wheel/build.ninja"; then
    echo "ok   cuda_wheel: nets/networks.cc compiles with its CUDA code (headers of $cuda_inc)"
  else
    echo "FAIL cuda_wheel: nets/networks.cc does not compile:"; tail -n 40 "$work/compile.log"; fail=1
  fi
else
  echo "note cuda_wheel: no CUDA toolkit headers here: networks.cc not compiled"
fi

# PyTorch 2.11's wheel: cuda_runtime.h without the crt/host_config.h it includes (seen on the GPU
# machine, where compiling against it failed): not taken, the toolkit's headers or none instead.
rm -r "$site/nvidia/cu13/include"; mkdir -p "$site/nvidia/cu13/include"
touch "$site/nvidia/cu13/include/cuda_runtime_api.h" "$site/nvidia/cu13/include/cuda_runtime.h"
FAKE_TORCH_CUDA=13.0 configure cuda_partial_wheel -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON
expect cuda_partial_wheel "cfr: $site/nvidia/cu13/include lacks crt/host_config.h"
expect cuda_partial_wheel "no CUDA runtime headers"
refuse cuda_partial_wheel "cfr: CUDA runtime headers:"

rm -r "$site/nvidia"
FAKE_TORCH_CUDA=13.0 configure cuda_no_headers -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON
expect cuda_no_headers "no CUDA runtime headers"
expect cuda_no_headers "cfr: LibTorch with CUDA: OFF"

FAKE_TORCH_CUDA= configure cpu_wheel
expect cpu_wheel "CUDA ''\)"
expect cpu_wheel "cfr: LibTorch with CUDA: OFF"
refuse cpu_wheel "CUDA runtime headers"
exit $fail
