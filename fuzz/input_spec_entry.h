// SPDX-License-Identifier: Apache-2.0
#pragma once
// The --input spec parser under fuzzing ("float32[1,3,224,224]"). Shared by fuzz/input_spec.cpp and the replay test.
#include <cstddef>
#include <cstdint>

namespace kforge::fuzz {

// Returns normally for any input (bad specs end in kforge::Error, caught); anything else escapes and is a bug.
void fuzzInputSpec(const std::uint8_t* data, std::size_t size);

} // namespace kforge::fuzz
