# SPDX-License-Identifier: Apache-2.0
# cmake -DINPUT=function_catalog.def -DOPS=catalog_ops.inc -DHEADERS=catalog_op_headers.inc -P KForgeCatalogOps.cmake
# Every ATen overload the function catalog names, as LibTorch's typed operator structs: OPS gets one
# KFORGE_CATALOG_OP(at::_ops::<name>[_<overload>]) line per overload, HEADERS the <ATen/ops/<name>_ops.h> includes.
# The interposer instantiates an unboxed kernel per line (engine/src/runtime/unboxed_forms.cpp).
cmake_policy(SET CMP0057 NEW)
file(READ "${INPUT}" text)
string(REGEX REPLACE "//[^\n]*" "" text "${text}") # the comments show the row format with placeholder names
string(REGEX MATCHALL "\"aten::[a-z0-9_]+\", \"[a-zA-Z0-9_]*\"" pairs "${text}")
list(REMOVE_DUPLICATES pairs)
set(ops "// Generated from ${INPUT} by cmake/KForgeCatalogOps.cmake: do not edit.\n")
set(headers "${ops}")
set(names "")
foreach(pair IN LISTS pairs)
  string(REGEX MATCH "\"aten::([a-z0-9_]+)\", \"([a-zA-Z0-9_]*)\"" _ "${pair}")
  set(name "${CMAKE_MATCH_1}")
  set(overload "${CMAKE_MATCH_2}")
  if(overload)
    string(APPEND ops "KFORGE_CATALOG_OP(${name}_${overload})\n")
  else()
    string(APPEND ops "KFORGE_CATALOG_OP(${name})\n")
  endif()
  string(REGEX REPLACE "([a-z0-9])_$" "\\1" base "${name}") # relu_ is declared with relu
  if(NOT base IN_LIST names)
    list(APPEND names "${base}")
    string(APPEND headers "#include <ATen/ops/${base}_ops.h>\n")
  endif()
endforeach()
foreach(pair OPS HEADERS)
  string(TOLOWER "${pair}" var)
  file(WRITE "${${pair}}.tmp" "${${var}}")
  file(COPY_FILE "${${pair}}.tmp" "${${pair}}" ONLY_IF_DIFFERENT)
  file(REMOVE "${${pair}}.tmp")
endforeach()
