# SPDX-License-Identifier: Apache-2.0
# ccache for every compiler we use, so a clean clone on a machine that built before reuses objects. The
# sloppiness lets ccache cache what uses a precompiled header (KForgePrecompiledHeaders.cmake): it then hashes the
# PCH itself instead of refusing, and ignores the header mtimes that a fresh clone changes.
find_program(KFORGE_CCACHE ccache)
find_program(KFORGE_ENV env)
if(KFORGE_CCACHE AND KFORGE_ENV)
  set(kforge_launcher ${KFORGE_ENV} CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
                      ${KFORGE_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${kforge_launcher})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${kforge_launcher})
endif()
