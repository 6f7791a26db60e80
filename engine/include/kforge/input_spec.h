// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kforge {

// A tensor input given on the command line: "float32[1,3,224,224]", "int64[1,16]", "bfloat16[]".
struct TensorSpec {
    std::string dtype;               // canonical name: float32, float16, bfloat16, float64, int64, int32, ...
    std::vector<std::int64_t> shape; // empty = scalar
    std::string text;                // as the user wrote it, for error messages
};

// Throws kforge::Error naming the spec and what is wrong with it.
TensorSpec parseTensorSpec(std::string_view text);
std::string formatTensorSpec(const TensorSpec& spec);
std::vector<std::string> supportedDtypes();

} // namespace kforge
