# SPDX-License-Identifier: Apache-2.0
# LLVM's lld when the compiler can use it: every executable here links against LibTorch's and Qt's large libraries,
# and lld resolves them about three times as fast as GNU ld (0.3-0.7 s against 1.4-1.5 s per test executable on two
# cores; CONTRIBUTING.md, "Build times"). KFORGE_LINKER=default keeps the compiler's own.
set(KFORGE_LINKER "lld" CACHE STRING "Linker for our targets: lld (when the compiler can use it) | default")
if(KFORGE_LINKER STREQUAL "lld")
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-fuse-ld=lld" KFORGE_HAVE_LLD)
  if(KFORGE_HAVE_LLD)
    add_link_options("$<$<LINK_LANGUAGE:CXX>:-fuse-ld=lld>")
  endif()
endif()
