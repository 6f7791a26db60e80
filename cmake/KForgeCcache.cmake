# SPDX-License-Identifier: Apache-2.0
# ccache for every compiler we use, so a clean clone on a machine that built before reuses objects.
find_program(KFORGE_CCACHE ccache)
if(KFORGE_CCACHE)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${KFORGE_CCACHE})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${KFORGE_CCACHE})
endif()
