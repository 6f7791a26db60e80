# SPDX-License-Identifier: Apache-2.0
# Header-only libraries from Debian; on machines without them (a GPU server) point
# KFORGE_THIRD_PARTY_INCLUDE at a folder holding nlohmann/ and CLI/.
set(KFORGE_THIRD_PARTY_INCLUDE "" CACHE PATH "Fallback include folder for nlohmann_json and CLI11")
find_package(nlohmann_json 3.10 CONFIG QUIET)
if(NOT TARGET nlohmann_json::nlohmann_json)
  add_library(nlohmann_json INTERFACE)
  add_library(nlohmann_json::nlohmann_json ALIAS nlohmann_json)
  target_include_directories(nlohmann_json SYSTEM INTERFACE ${KFORGE_THIRD_PARTY_INCLUDE})
endif()
find_package(CLI11 CONFIG QUIET)
if(NOT TARGET CLI11::CLI11)
  add_library(CLI11 INTERFACE)
  add_library(CLI11::CLI11 ALIAS CLI11)
  target_include_directories(CLI11 SYSTEM INTERFACE ${KFORGE_THIRD_PARTY_INCLUDE})
endif()
