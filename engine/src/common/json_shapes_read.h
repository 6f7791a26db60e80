// SPDX-License-Identifier: Apache-2.0
#pragma once
// The readers of the JSON shapes kforge/json_shapes.h writes, beside their writers (json_shapes.cpp): each reads the
// object at JSON path `path` and fails through `rd` naming the path. A missing member takes the value type's default.
#include "common/json_reader.h"

#include <kforge/module_info.h>
#include <kforge/runtime_types.h>
#include <kforge/tensor_digest.h>

#include <nlohmann/json.hpp>

#include <string>

namespace kforge {

ModuleInfo readModuleInfo(const JsonReader& rd, const nlohmann::json& value, const std::string& path);
TensorDigest readTensorDigest(const JsonReader& rd, const nlohmann::json& value, const std::string& path);
EntryDeclines readEntryDeclines(const JsonReader& rd, const nlohmann::json& value, const std::string& path);

} // namespace kforge
