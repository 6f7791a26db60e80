// SPDX-License-Identifier: Apache-2.0
#pragma once
// The .kfprof result-file reader under fuzzing (docs/kfprof-format.md). Shared by fuzz/kfprof_reader.cpp and the
// replay test.
#include <cstddef>
#include <cstdint>

namespace kforge::fuzz {

// Returns normally for any input (bad files end in kforge::Error, caught); anything else escapes and is a bug.
void fuzzKfprofReader(const std::uint8_t* data, std::size_t size);

} // namespace kforge::fuzz
