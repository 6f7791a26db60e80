# SPDX-License-Identifier: Apache-2.0
# kforge_test_paths(TARGET NAME PATH [NAME PATH...]): defines each NAME in TARGET's sources as the absolute PATH,
# computed when the program runs from PATH relative to the build folder (tests/build_path.h). The definitions are
# the same in every clone, so ccache reuses a clone's test objects in another (an absolute path in a definition
# made every test object a cache miss). PATH may be a generator expression ($<TARGET_FILE:kforge>).
function(kforge_test_paths target)
  set(args ${ARGN})
  while(args)
    list(POP_FRONT args name path)
    target_compile_definitions(${target} PRIVATE
      "${name}=kforgeBuildPath(\"$<PATH:RELATIVE_PATH,${path},${CMAKE_BINARY_DIR}>\")")
  endwhile()
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/tests)
endfunction()
