// SPDX-License-Identifier: Apache-2.0
#pragma once
// One tensor of a plan's forward against the baseline's: errors, cosine, NaN/Inf, top-k agreement and the verdict
// against VerifyThresholds (kforge/verify.h).
#include <kforge/verify.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

namespace kforge::measure {

TensorAgreement agreementOf(const std::string& path, const at::Tensor& baseline, const at::Tensor& plan,
                            const VerifyThresholds& thresholds);
// A number, bool or string a forward returns against the baseline's (ints, bools, strings exact; floats within
// float64's tolerance).
TensorAgreement agreementOfValues(const std::string& path, const c10::IValue& baseline, const c10::IValue& plan);
// Every output of a forward's result, tensors and the numbers, bools and strings beside them (as TensorDigest names
// them; None left out), against the baseline's; an output one side lacks fails with that reason.
std::vector<TensorAgreement> agreementOfOutputs(const c10::IValue& baseline, const c10::IValue& plan,
                                                const VerifyThresholds& thresholds);

// A plan's outputs judged against the baseline's own spread: `baseline` and `again` are two forwards without the
// plan, `again` the one just before the plan's. Outputs on which they agree are judged as agreementOfOutputs judges
// them against `baseline`. One on which they differ (the model draws random numbers, or changes a buffer or its
// input) is judged against that spread, never against one baseline alone: the plan's output, compared with `again`
// (so a drifting state counts once), fails beyond twice the spread or with NaN/Inf the spread does not show; one of
// fewer than 64 elements, too small for a maximum of random differences to compare, passes unjudged saying why
// (TensorAgreement::judged). `nondeterminism` says what differed, "" when the baseline agreed with itself.
struct OutputsJudged {
    std::vector<TensorAgreement> outputs;
    std::string nondeterminism;
};
OutputsJudged judgeOutputs(const c10::IValue& baseline, const c10::IValue& again, const c10::IValue& plan,
                           const VerifyThresholds& thresholds);

} // namespace kforge::measure
