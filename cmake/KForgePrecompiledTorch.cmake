# SPDX-License-Identifier: Apache-2.0
# Precompiled LibTorch headers. Parsing <torch/script.h> is about 25 s of every translation unit that includes
# LibTorch (35-40 s in all at -O3 on one core); with the header precompiled such a unit takes 12-17 s. Two
# precompiled headers serve every target: one compiled as position-independent code (the engine, plugins) and one
# as the executables are compiled (tests, benchmarks), since GCC refuses a PCH made with other -fpic/-fpie
# settings. Each is made with LibTorch's own definitions only, so the targets that add definitions of their own
# (KFORGE_WITH_CUDA, ...) can use it. Sources that do not include LibTorch, directly or through the project's
# headers, keep compiling without it (loading the 600 MB PCH alone costs about 8 s).
#
# ccache caches both the PCH and the units that use it, given the sloppiness set in KForgeCcache.cmake.
option(KFORGE_PRECOMPILE_TORCH "Precompile <torch/script.h> for the sources that include LibTorch" ON)

# Whether `file` includes LibTorch's large headers, directly or through a project header found next to it or in `dirs`.
# Answers are cached per file for the whole configure run.
function(_kforge_includes_torch file dirs out)
  string(MAKE_C_IDENTIFIER "${file}" key)
  get_property(known GLOBAL PROPERTY KFORGE_TORCH_INCLUDE_${key} SET)
  if(known)
    get_property(answer GLOBAL PROPERTY KFORGE_TORCH_INCLUDE_${key})
    set(${out} ${answer} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY KFORGE_TORCH_INCLUDE_${key} FALSE) # a header cycle ends here
  set(answer FALSE)
  file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(line IN LISTS includes)
    # LibTorch's small leaf headers (its version, torch::cuda's two functions, c10's utilities) do not count:
    # such a file compiles faster without the 600 MB PCH.
    if(line MATCHES "<(torch|ATen|caffe2)/" AND NOT line MATCHES "<torch/(version|cuda)\\.h>")
      set(answer TRUE)
      break()
    endif()
    if(line MATCHES "\"([^\"]+)\"")
      set(name "${CMAKE_MATCH_1}")
      get_filename_component(here "${file}" DIRECTORY)
      foreach(dir IN LISTS here dirs)
        if(EXISTS "${dir}/${name}" AND NOT IS_DIRECTORY "${dir}/${name}")
          _kforge_includes_torch("${dir}/${name}" "${dirs}" nested)
          if(nested)
            set(answer TRUE)
          endif()
          break()
        endif()
      endforeach()
      if(answer)
        break()
      endif()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY KFORGE_TORCH_INCLUDE_${key} ${answer})
  set(${out} ${answer} PARENT_SCOPE)
endfunction()

if(KFORGE_PRECOMPILE_TORCH)
  # The owners of the two PCHs: object libraries of one empty source each.
  foreach(kind pic exe)
    add_library(kforge_torch_pch_${kind} OBJECT ${CMAKE_SOURCE_DIR}/cmake/torch_pch.cpp)
    target_link_libraries(kforge_torch_pch_${kind} PRIVATE ${TORCH_LIBRARIES})
    target_precompile_headers(kforge_torch_pch_${kind} PRIVATE <torch/script.h>)
    target_compile_options(kforge_torch_pch_${kind} PRIVATE -Werror=invalid-pch)
  endforeach()
  set_target_properties(kforge_torch_pch_pic PROPERTIES POSITION_INDEPENDENT_CODE ON)
  set_target_properties(kforge_torch_pch_exe PROPERTIES POSITION_INDEPENDENT_CODE OFF)
endif()

# Compiles the sources of `target` that include LibTorch with the precompiled <torch/script.h>. Call it after
# the target has all its sources and include directories. `NO_PCH source...` names sources that must not get
# it (the CPU kernel files, which include ATen's vector headers under `#pragma GCC target`).
function(kforge_precompile_torch target)
  if(NOT KFORGE_PRECOMPILE_TORCH)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "NO_PCH")
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    # Executables otherwise get -fpie from CMAKE_POSITION_INDEPENDENT_CODE; the PCH is made with the compiler's
    # default, which is what they get without the flag.
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
    set(owner kforge_torch_pch_exe)
  else()
    set(owner kforge_torch_pch_pic)
  endif()
  target_precompile_headers(${target} REUSE_FROM ${owner})
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror=invalid-pch>)
  get_target_property(dirs ${target} INCLUDE_DIRECTORIES)
  list(FILTER dirs EXCLUDE REGEX "\\$<") # generator expressions: not project folders anyway
  get_target_property(source_dir ${target} SOURCE_DIR)
  get_target_property(sources ${target} SOURCES)
  foreach(source IN LISTS sources)
    if(NOT source MATCHES "\\.(cpp|cc|cxx)$")
      continue()
    endif()
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${source_dir}")
    set(uses FALSE)
    if(EXISTS "${path}")
      _kforge_includes_torch("${path}" "${dirs}" uses)
    endif()
    foreach(excluded IN LISTS arg_NO_PCH)
      get_filename_component(excluded "${excluded}" ABSOLUTE BASE_DIR "${source_dir}")
      if(excluded STREQUAL path)
        set(uses FALSE)
      endif()
    endforeach()
    if(NOT uses)
      set_source_files_properties("${source}" TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
endfunction()
