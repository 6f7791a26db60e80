// SPDX-License-Identifier: Apache-2.0
#pragma once
// One call of a function may run several top-level CPU ops (a call export decomposed: linear as permute + addmm,
// each op a record), so tables count a function's calls per call, not per record, as `kforge run` and `kforge
// modules` count them. A CPU op record carries its call's id (KernelRecord::correlation); a device kernel's is its
// launch's, so each kernel stays a record of its own.
#include <kforge/profiling.h>

#include <cstdint>
#include <optional>

namespace kforge::profiling {

// The function call a record belongs to, when records of one call must count once.
inline std::optional<std::uint64_t> functionCallOf(const KernelRecord& r)
{
    if (r.kind != "cpu_op" || r.function.empty() || r.correlation == 0)
        return std::nullopt;
    return r.correlation;
}

} // namespace kforge::profiling
