#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs one GoogleTest suite for CTest (KForgeGtestSuites.cmake): its exit status, or 77 (CTest: skipped) when it
# passed with every test skipped (GTEST_SKIP: no CUDA device). A suite with a failure always fails.
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -q '^\[  PASSED  \] 0 tests'; then
  exit 77
fi
exit "$rc"
