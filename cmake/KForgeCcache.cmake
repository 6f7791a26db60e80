# SPDX-License-Identifier: Apache-2.0
# ccache for every compiler we use, so a clean clone on a machine that built before reuses objects. The launcher
# (cmake/ccache-launch) sets the settings that let ccache cache what uses a precompiled header
# (KForgePrecompiledHeaders.cmake) and keeps a checksum next to each PCH, so a hit costs milliseconds instead of
# reading the PCH (CONTRIBUTING.md, "Build times").
find_program(KFORGE_CCACHE ccache)
if(KFORGE_CCACHE)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_CURRENT_LIST_DIR}/ccache-launch)
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${CMAKE_CURRENT_LIST_DIR}/ccache-launch)
endif()
