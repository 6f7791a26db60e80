# SPDX-License-Identifier: Apache-2.0
# One CTest test per GoogleTest suite of an executable (`Runtime`, `Threads`, ...), instead of one per TEST as
# gtest_discover_tests registers them: every engine process spends 0.6-0.9 s loading LibTorch before its first
# test, which over 400 single-test processes was most of the suite's time. Each test is labelled with the runtime
# behaviours its TESTs name (R12 for `R12_...`, R5 and R7 for `R5_R7_...`), so `ctest -L R12` runs the suites that
# prove R12; `bin/<executable> --gtest_filter='*R12_*'` runs exactly those tests.
#
# The suites are listed when CTest starts (as gtest_discover_tests' PRE_TEST mode does), and again only after the
# executable changed. A suite whose every test skipped (GTEST_SKIP: no CUDA device) is reported as skipped
# (run_gtest_suite.sh).
#
#   kforge_gtest_suites(TARGET [LABELS label...])
function(kforge_gtest_suites target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "LABELS")
  set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_suites_include.cmake)
  set(list_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake)
  file(GENERATE OUTPUT ${include_file} CONTENT
"set(exe \"$<TARGET_FILE:${target}>\")
set(list_file \"${list_file}\")
if(NOT EXISTS \"\${exe}\")
  add_test(${target}_NOT_BUILT \"\${exe}\")
  return()
endif()
if(NOT EXISTS \"\${list_file}\" OR \"\${exe}\" IS_NEWER_THAN \"\${list_file}\")
  include(\"${CMAKE_SOURCE_DIR}/cmake/KForgeGtestSuitesList.cmake\")
  kforge_list_gtest_suites(\"\${exe}\" \"\${list_file}\" \"${arg_LABELS}\" \"${CMAKE_CURRENT_BINARY_DIR}\"
                          \"${CMAKE_SOURCE_DIR}/cmake/run_gtest_suite.sh\")
endif()
include(\"\${list_file}\")
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()
