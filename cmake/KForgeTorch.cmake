# SPDX-License-Identifier: Apache-2.0
# LibTorch from the pinned PyPI torch wheel (scripts/bootstrap), the CUDA toolkit and CUPTI through nvcc.
#   -DKFORGE_TORCH_PREFIX=<torch.utils.cmake_prefix_path>  (scripts/build passes it)
set(KFORGE_TORCH_PREFIX "" CACHE PATH "torch.utils.cmake_prefix_path of the LibTorch to build against")
if(KFORGE_TORCH_PREFIX)
  list(PREPEND CMAKE_PREFIX_PATH ${KFORGE_TORCH_PREFIX})
endif()

find_program(KFORGE_NVCC nvcc)
set(KFORGE_HAVE_CUDA OFF)
if(KFORGE_ENABLE_CUDA AND KFORGE_NVCC)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    # sm_80 and sm_90 machine code, plus compute_90 PTX for newer chips.
    set(CMAKE_CUDA_ARCHITECTURES "80-real;90")
  endif()
  # Torch's config resets CMAKE_CUDA_ARCHITECTURES; targets get this value back explicitly (engine/).
  set(KFORGE_CUDA_ARCHITECTURES ${CMAKE_CUDA_ARCHITECTURES})
  if(NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    # Torch's config autodetects the GPU otherwise, which fails on GPU-less builders.
    set(ENV{TORCH_CUDA_ARCH_LIST} "8.0;9.0+PTX")
  endif()
  set(CMAKE_CUDA_COMPILER ${KFORGE_NVCC})
  # Our .cu files are plain CUDA C++ (no LibTorch headers); CMake 3.25 knows no C++20 flag for nvcc.
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  set(KFORGE_HAVE_CUDA ON)
endif()

find_package(Torch REQUIRED)
# The imported target carries the ABI flag; our own flags must not contradict it.
message(STATUS "KForge: LibTorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}, CUDA: ${KFORGE_HAVE_CUDA}")
set(KFORGE_TORCH_LIB_DIR "${TORCH_INSTALL_PREFIX}/lib")

# CUPTI: the wheel's copy (the one LibTorch itself loads at run time) takes precedence over the toolkit's.
set(KFORGE_HAVE_CUPTI OFF)
if(KFORGE_HAVE_CUDA)
  find_path(KFORGE_CUPTI_INCLUDE cupti.h
    HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include
          ${CUDAToolkit_TARGET_DIR}/extras/CUPTI/include)
  find_library(KFORGE_CUPTI_LIBRARY NAMES libcupti.so.13 cupti NAMES_PER_DIR
    HINTS ${TORCH_INSTALL_PREFIX}/../nvidia/cu13/lib ${CUDAToolkit_LIBRARY_DIR}
          ${CUDAToolkit_TARGET_DIR}/extras/CUPTI/lib64 NO_DEFAULT_PATH)
  if(KFORGE_CUPTI_INCLUDE AND KFORGE_CUPTI_LIBRARY)
    set(KFORGE_HAVE_CUPTI ON)
    message(STATUS "KForge: CUPTI ${KFORGE_CUPTI_LIBRARY}")
  endif()
endif()

# Executables find LibTorch (and through its own RPATH the nvidia wheels) without LD_LIBRARY_PATH.
set(CMAKE_BUILD_RPATH "${KFORGE_TORCH_LIB_DIR}")
set(CMAKE_INSTALL_RPATH "${KFORGE_TORCH_LIB_DIR}")
