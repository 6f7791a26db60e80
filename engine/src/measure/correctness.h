// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/correctness.h>
#include <kforge/provider_sdk.h>

#include <optional>

namespace kforge::measure {

// Runs the original op and the provider on copies of each sample (gradients off, interposition excluded)
// and compares structure, shape, dtype, then values. An ineligible provider (prepare() false) fails with
// that reason. `tolerance` overrides the per-dtype defaults.
// One output of the original against the candidate's: structure, shape, dtype, then values within `tolerance`
// (per-dtype defaults when absent).
OutputComparison compareOutput(const c10::IValue& expected, const c10::IValue& actual,
                               const std::optional<Tolerance>& tolerance = std::nullopt);

CorrectnessReport checkProvider(KernelProvider& provider, const c10::OperatorHandle& op,
                                const std::vector<torch::jit::Stack>& samples,
                                std::optional<Tolerance> tolerance = std::nullopt);

// The provider, READY already, on calls it may decline (a Variant form's, such as every interpolate mode but one:
// it serves those it takes and the original runs the rest): compared like checkProvider on the calls it serves; a
// decline is no failure.
CorrectnessReport checkServedCalls(KernelProvider& provider, const c10::OperatorHandle& op,
                                   const std::vector<torch::jit::Stack>& samples,
                                   std::optional<Tolerance> tolerance = std::nullopt);

} // namespace kforge::measure
