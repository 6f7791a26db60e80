// SPDX-License-Identifier: Apache-2.0
#pragma once
// What an AOTInductor package's compiled code takes, read from the C++ it was generated as (the wrapper source the
// package keeps): each input's dtype and static sizes. The code checks them only when AOTI_RUNTIME_CHECK_INPUTS is
// set, and then fails with a message on stderr; unchecked, an input of another batch size runs and returns wrong
// values (an MLP compiled for [4, 8] given [64, 8] returned 48.13 where 22.91 is right).
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

struct CompiledInput {
    std::string dtype;                         // "float32"; "" when the source does not say
    std::vector<std::optional<int64_t>> sizes; // per dimension: its static size, or none (dynamic)
};

// Per input index, from the wrapper source's check_input_N functions; empty when it has none.
std::vector<CompiledInput> compiledInputsOf(const std::string& wrapperSource);

// Why `inputs` cannot run the compiled code ("input 1 is float32[64, 8]; the package was compiled for
// float32[4, 8]..."); "" when they fit.
std::string compiledInputMismatch(const std::vector<CompiledInput>& expected, const std::vector<at::Tensor>& inputs);

} // namespace kforge
