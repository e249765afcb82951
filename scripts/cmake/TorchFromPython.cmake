# LibTorch as bundled in a Python torch package (PyTorch 2.x wheels: include/ and lib/ inside the
# package), without its CMake config, which wants the CUDA toolkit. CFR_TORCH_PYTHON names the
# Python interpreter. Sets TORCH_LIBRARIES (and TORCH_CUDA_LIBRARIES when the package has CUDA)
# and matches the package's C++ ABI.
execute_process(
  COMMAND ${CFR_TORCH_PYTHON} -c "import os, torch; print(os.path.dirname(torch.__file__)); print(int(torch._C._GLIBCXX_USE_CXX11_ABI)); print(torch.__version__); print(torch.version.cuda or '')"
  OUTPUT_VARIABLE _out RESULT_VARIABLE _rc ERROR_VARIABLE _err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "cfr: CFR_TORCH_PYTHON=${CFR_TORCH_PYTHON} cannot import torch: ${_err}")
endif()
string(REPLACE "\n" ";" _out "${_out}")
list(GET _out 0 _root)
list(GET _out 1 _abi)
list(GET _out 2 _version)
list(LENGTH _out _n)
set(_cuda "")
if(_n GREATER 3)
  list(GET _out 3 _cuda)
endif()
message(STATUS "cfr: LibTorch ${_version} from ${_root} (C++11 ABI ${_abi}, CUDA '${_cuda}')")
add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=${_abi})
add_library(cfr_torch INTERFACE)
target_include_directories(cfr_torch SYSTEM INTERFACE ${_root}/include ${_root}/include/torch/csrc/api/include)
# libstdc++ before the torch libraries: PyTorch's wheels are built with a newer toolchain whose
# libstdc++ parts are linked into libtorch_cpu.so and exported (std::filesystem among them).
# Linked after them, the project's calls bind to those copies: on the GPU machine (PyTorch
# 2.11.0+cu130) std::filesystem::remove_all jumped to address 0 (docs/gpu.md).
target_link_libraries(cfr_torch INTERFACE stdc++)
set(_libs torch torch_cpu c10)
if(_cuda)
  list(APPEND _libs torch_cuda c10_cuda)
endif()
foreach(l ${_libs})
  find_library(CFR_TORCH_LIB_${l} NAMES ${l} PATHS ${_root}/lib NO_DEFAULT_PATH REQUIRED)
  target_link_libraries(cfr_torch INTERFACE ${CFR_TORCH_LIB_${l}})
endforeach()
# torch_cuda registers its kernels from static initialisers: keep it linked though no symbol of
# it is referenced directly.
target_link_options(cfr_torch INTERFACE -Wl,--no-as-needed -Wl,-rpath,${_root}/lib)
set(TORCH_LIBRARIES cfr_torch)
# The package's c10/cuda headers include the CUDA runtime's (cuda_runtime_api.h, cuda.h), which a
# wheel does not ship. They come, in this order, from CFR_CUDA_INCLUDE, from the nvidia-* wheels
# PyTorch depends on (site-packages/nvidia/cu13/include, or nvidia/cuda_runtime/include for CUDA
# 12: the version PyTorch was built with) where they are whole (PyTorch 2.11's nvidia/cu13/include
# has cuda_runtime.h but not the crt/host_config.h it includes: seen on the GPU machine), or from a
# CUDA toolkit. Without any, nets/ is built without its CUDA code (streams, pinned buffers): the
# libraries stay linked and `cuda` still runs, with plain synchronous copies.
if(_cuda)
  set(CFR_CUDA_INCLUDE "" CACHE PATH "CUDA runtime headers for the CUDA code of nets/ (default: found)")
  set(_cuda_inc "${CFR_CUDA_INCLUDE}")
  if(NOT _cuda_inc)
    execute_process(
      COMMAND ${CFR_TORCH_PYTHON} -c "import glob, os, torch
sp = os.path.dirname(os.path.dirname(torch.__file__))
hits = sorted(glob.glob(os.path.join(sp, 'nvidia', '*', 'include', 'cuda_runtime_api.h')))
hits = [os.path.dirname(h) for h in hits]
whole = [h for h in hits if os.path.isfile(os.path.join(h, 'crt', 'host_config.h'))]
print('whole=' + (whole[-1] if whole else ''))
print('partial=' + (hits[-1] if hits and not whole else ''))"
      OUTPUT_VARIABLE _cuda_found ERROR_QUIET)
    string(REGEX MATCH "whole=([^\n]*)" _m "${_cuda_found}")
    set(_cuda_inc "${CMAKE_MATCH_1}")
    string(REGEX MATCH "partial=([^\n]*)" _m "${_cuda_found}")
    if(CMAKE_MATCH_1)
      message(STATUS "cfr: ${CMAKE_MATCH_1} lacks crt/host_config.h (its cuda_runtime.h includes it; it comes with "
                     "the nvcc wheel or a toolkit): not taken")
    endif()
  endif()
  if(NOT _cuda_inc)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND)
      set(_cuda_inc ${CUDAToolkit_INCLUDE_DIRS})
    endif()
  endif()
  # The CUDA code calls the runtime (c10's inline stream and event functions do): link the
  # libcudart that libtorch_cuda loads (site-packages/nvidia/*/lib), else the toolkit's.
  set(_cudart "")
  if(_cuda_inc)
    execute_process(
      COMMAND ${CFR_TORCH_PYTHON} -c "import glob, os, torch
sp = os.path.dirname(os.path.dirname(torch.__file__))
hits = sorted(glob.glob(os.path.join(sp, 'nvidia', '*', 'lib', 'libcudart.so*')))
print(hits[-1] if hits else '')"
      OUTPUT_VARIABLE _cudart OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT _cudart)
      find_package(CUDAToolkit QUIET)
      if(TARGET CUDA::cudart)
        set(_cudart CUDA::cudart)
      endif()
    endif()
  endif()
  if(_cuda_inc AND _cudart)
    message(STATUS "cfr: CUDA runtime headers: ${_cuda_inc}")
    message(STATUS "cfr: CUDA runtime library: ${_cudart}")
    target_include_directories(cfr_torch SYSTEM INTERFACE ${_cuda_inc})
    target_link_libraries(cfr_torch INTERFACE ${_cudart})
    set(TORCH_CUDA_LIBRARIES ${CFR_TORCH_LIB_torch_cuda} ${CFR_TORCH_LIB_c10_cuda})
  elseif(_cuda_inc)
    message(WARNING "cfr: CUDA runtime headers in ${_cuda_inc} but no libcudart (nvidia-* wheel or CUDA toolkit): "
                    "nets/ is built without its CUDA streams and pinned buffers")
  else()
    message(WARNING "cfr: no CUDA runtime headers (no nvidia-* wheel headers, no CUDA toolkit; set CFR_CUDA_INCLUDE): "
                    "nets/ is built without its CUDA streams and pinned buffers")
  endif()
endif()
