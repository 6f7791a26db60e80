// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: CUPTI activity records -> parsed activities -> attributed KernelRecords.
// Run with scripts/fuzz cupti_records SECONDS.
#include "cupti_records_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    kforge::fuzz::fuzzCuptiRecords(data, size);
    return 0;
}
