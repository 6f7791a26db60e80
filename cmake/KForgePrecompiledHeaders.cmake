# SPDX-License-Identifier: Apache-2.0
# Precompiled headers, measured on two cores (CONTRIBUTING.md, "Build times"): parsing <torch/script.h> is about 25 s
# of every translation unit that includes LibTorch (35-40 s in all at -O3); with it precompiled such a unit takes
# 12-17 s. <QtWidgets> is 6-10 s of a UI source, about 2 s as a PCH. Each PCH is made once, by an object library of
# one empty source (its owner), and reused by every target that needs it:
#   torch    <torch/script.h>, <nlohmann/json.hpp>: the engine, plugins, engine tests, benchmarks
#   qt_gui   <QtGui>: the UI's item models and their tests (no widgets)
#   qt_widgets <QtWidgets>: the windows, the app, the widget tests
# GCC refuses a PCH made with other -fpic/-fpie settings or definitions: every user compiles as position-independent
# code (executables too, with -fPIC), and each owner has only the definitions all its users have. Sources that do not
# include the PCH's headers, directly or through the project's headers, compile without it (loading the 600 MB
# LibTorch PCH alone costs about 8 s).
#
# ccache caches the PCHs and the units that use them, given the sloppiness set in KForgeCcache.cmake.
option(KFORGE_PRECOMPILE_HEADERS "Precompile LibTorch's and Qt's headers for the sources that include them" ON)

# Whether `file` includes a header matching `pattern` (a regex on the include line, `exclude` one it must not
# match), directly or through a project header found next to it or in `dirs`. Answers are cached per file and
# pattern for the whole configure run.
function(_kforge_includes file dirs pattern exclude out)
  string(MAKE_C_IDENTIFIER "${pattern}|${file}" key)
  get_property(known GLOBAL PROPERTY KFORGE_INCLUDES_${key} SET)
  if(known)
    get_property(answer GLOBAL PROPERTY KFORGE_INCLUDES_${key})
    set(${out} ${answer} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY KFORGE_INCLUDES_${key} FALSE) # a header cycle ends here
  set(answer FALSE)
  file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(line IN LISTS includes)
    if(line MATCHES "${pattern}" AND NOT (exclude AND line MATCHES "${exclude}"))
      set(answer TRUE)
      break()
    endif()
    if(line MATCHES "\"([^\"]+)\"")
      set(name "${CMAKE_MATCH_1}")
      get_filename_component(here "${file}" DIRECTORY)
      foreach(dir IN LISTS here dirs)
        if(EXISTS "${dir}/${name}" AND NOT IS_DIRECTORY "${dir}/${name}")
          _kforge_includes("${dir}/${name}" "${dirs}" "${pattern}" "${exclude}" nested)
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
  set_property(GLOBAL PROPERTY KFORGE_INCLUDES_${key} ${answer})
  set(${out} ${answer} PARENT_SCOPE)
endfunction()

# What each PCH holds, and which include lines make a source want it. LibTorch's small leaf headers (its version,
# torch::cuda's two functions, c10's utilities) do not count: such a file compiles faster without the PCH.
set(KFORGE_PCH_torch_HEADERS <torch/script.h> <nlohmann/json.hpp>)
set(KFORGE_PCH_torch_WANTS "<(torch|ATen|caffe2)/")
set(KFORGE_PCH_torch_UNLESS "<torch/(version|cuda)\\.h>")
set(KFORGE_PCH_qt_gui_HEADERS <QtGui>)
set(KFORGE_PCH_qt_widgets_HEADERS <QtWidgets>)
foreach(kind qt_gui qt_widgets)
  set(KFORGE_PCH_${kind}_WANTS "<Q[A-Za-z]+>|<Qt[A-Za-z]+/")
  set(KFORGE_PCH_${kind}_UNLESS "")
endforeach()

# The owner of a PCH: `kforge_pch_KIND`, linking `libraries` for their include folders and definitions.
function(kforge_add_pch_owner kind)
  if(NOT KFORGE_PRECOMPILE_HEADERS)
    return()
  endif()
  add_library(kforge_pch_${kind} OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch_owner.cpp)
  target_link_libraries(kforge_pch_${kind} PRIVATE ${ARGN})
  target_precompile_headers(kforge_pch_${kind} PRIVATE ${KFORGE_PCH_${kind}_HEADERS})
  set_target_properties(kforge_pch_${kind} PROPERTIES POSITION_INDEPENDENT_CODE ON AUTOMOC OFF)
  target_compile_options(kforge_pch_${kind} PRIVATE -Werror=invalid-pch)
endfunction()

# Compiles the sources of `target` that include the headers of PCH `kind` with it. Call it once the target has its
# sources and include folders. `NO_PCH source...` names sources that must not get it.
function(kforge_use_pch target kind)
  if(NOT KFORGE_PRECOMPILE_HEADERS OR NOT TARGET kforge_pch_${kind})
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "NO_PCH")
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    # The PCH is position-independent code; an executable's -fpie would not match it.
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fPIC>)
  endif()
  target_precompile_headers(${target} REUSE_FROM kforge_pch_${kind})
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror=invalid-pch>)
  get_target_property(dirs ${target} INCLUDE_DIRECTORIES)
  list(FILTER dirs EXCLUDE REGEX "\\$<") # generator expressions: not project folders anyway
  get_target_property(source_dir ${target} SOURCE_DIR)
  get_target_property(sources ${target} SOURCES)
  set(excluded "")
  foreach(source IN LISTS arg_NO_PCH)
    get_filename_component(source "${source}" ABSOLUTE BASE_DIR "${source_dir}")
    list(APPEND excluded "${source}")
  endforeach()
  foreach(source IN LISTS sources)
    if(NOT source MATCHES "\\.(cpp|cc|cxx)$")
      continue()
    endif()
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${source_dir}")
    set(uses FALSE)
    if(EXISTS "${path}" AND NOT path IN_LIST excluded)
      _kforge_includes("${path}" "${dirs}" "${KFORGE_PCH_${kind}_WANTS}" "${KFORGE_PCH_${kind}_UNLESS}" uses)
    endif()
    if(NOT uses)
      set_source_files_properties("${source}" TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
endfunction()

# The LibTorch PCH's owner and the engine's targets' shorthand.
kforge_add_pch_owner(torch ${TORCH_LIBRARIES} nlohmann_json::nlohmann_json)
function(kforge_precompile_torch target)
  kforge_use_pch(${target} torch ${ARGN})
endfunction()
