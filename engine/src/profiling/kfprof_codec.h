// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the .kfprof writer and reader share besides the column table (record_columns.h): how output values are
// encoded (docs/kfprof-format.md, "output_values").
#include <string>
#include <vector>

namespace kforge::kfprof {

inline constexpr const char* kOutputValuesEncoding = "base64-f32le";

// Little-endian float32 values as base64 (RFC 4648, padded).
std::string encodeFloats(const std::vector<float>& values);
// The inverse; false when `text` is not base64 of a whole number of float32 values.
bool decodeFloats(const std::string& text, std::vector<float>& values);

} // namespace kforge::kfprof
