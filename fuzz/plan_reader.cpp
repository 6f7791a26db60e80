// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the plan reader (both dialects) and validation. Run with scripts/fuzz plan_reader SECONDS.
#include "plan_reader_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    kforge::fuzz::fuzzPlanReader(data, size);
    return 0;
}
