// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CUPTI activity-record parser and the attribution that turns its output into KernelRecords, under fuzzing.
// Shared by fuzz/cupti_records.cpp and the replay test. Needs the CUPTI headers (KFORGE_WITH_CUPTI).
#include <cstddef>
#include <cstdint>

namespace kforge::fuzz {

// Lays the bytes out as an activity buffer (see cupti_records_entry.cpp) and parses it both ways (record pointers
// and the real cuptiActivityGetNextRecord), then attributes the records. Returns normally for any input; a crash
// or a broken property (std::logic_error) is a bug.
void fuzzCuptiRecords(const std::uint8_t* data, std::size_t size);

} // namespace kforge::fuzz
