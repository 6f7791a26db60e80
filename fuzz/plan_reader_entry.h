// SPDX-License-Identifier: Apache-2.0
#pragma once
// The plan reader under fuzzing: both dialects, from text and from a file, then validation against a builtin model.
// Shared by the libFuzzer target (fuzz/plan_reader.cpp) and the crash-regression replay (tests/engine).
#include <cstddef>
#include <cstdint>

namespace kforge::fuzz {

// Returns normally for any input: bad plans end in kforge::Error, which is caught. Anything else escapes (a
// crash, another exception type, a broken round trip) and is a bug.
void fuzzPlanReader(const std::uint8_t* data, std::size_t size);

} // namespace kforge::fuzz
