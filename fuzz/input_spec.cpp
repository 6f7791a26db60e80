// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the --input spec parser. Run with scripts/fuzz input_spec SECONDS.
#include "input_spec_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    kforge::fuzz::fuzzInputSpec(data, size);
    return 0;
}
