// SPDX-License-Identifier: Apache-2.0
#pragma once
// kforge verify's thresholds: on their own so that a plan can carry its own ("verify" in the plan file).
#include <optional>

namespace kforge {

// What a plan output must keep to pass. Every output tensor is compared element by element as torch.allclose does
// (|plan - baseline| <= absolute + relative * |baseline|) and as a whole by cosine similarity; new NaN or Inf fail.
struct VerifyThresholds {
    double minCosine = 0.999;
    // Element-wise tolerance; unset: per dtype (verifyTolerance), looser than a single call's because error grows
    // through a model.
    std::optional<double> absolute, relative;
    bool allowNewNonFinite = false;
    // Top-1 agreement of [batch, classes] and [batch, tokens, vocab] outputs, as a fraction; unset: reported only.
    std::optional<double> minTop1Agreement;
};

} // namespace kforge
