// SPDX-License-Identifier: Apache-2.0
#include "input_spec_entry.h"

#include "fuzz_checks.h"

#include <kforge/input_spec.h>

#include <string_view>

namespace kforge::fuzz {

void fuzzInputSpec(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    ignoreKforgeErrors([&] {
        const TensorSpec spec = parseTensorSpec(text);
        // The canonical spelling of what parsed must parse to the same tensor.
        const std::string canonical = formatTensorSpec(spec);
        const TensorSpec again = mustSucceed("reading '" + canonical + "'", [&] { return parseTensorSpec(canonical); });
        require(again.dtype == spec.dtype && again.shape == spec.shape, "'" + canonical + "' reads as another tensor");
    });
}

} // namespace kforge::fuzz
