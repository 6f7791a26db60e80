// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the .kfprof reader and writer. Run with scripts/fuzz kfprof_reader SECONDS.
#include "kfprof_reader_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    kforge::fuzz::fuzzKfprofReader(data, size);
    return 0;
}
