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
// The leaves of a forward's result as verify names and judges them: None left out, a lone output named "0".
std::vector<std::pair<std::string, c10::IValue>> judgedLeaves(const c10::IValue& output);
std::vector<TensorAgreement> agreementOfOutputs(const c10::IValue& baseline, const c10::IValue& plan,
                                                const VerifyThresholds& thresholds);

} // namespace kforge::measure
