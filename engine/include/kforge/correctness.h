// SPDX-License-Identifier: Apache-2.0
#pragma once
// The correctness check of a provider against the original op (engine/optimizer): a report, not a bool.
#include <cstdint>
#include <string>
#include <vector>

namespace kforge {

struct Tolerance {
    double absolute = 0.0;
    double relative = 0.0;
};

// Per dtype: float32/float64 tight, bfloat16/float16 looser; integers and bool exact.
Tolerance defaultTolerance(const std::string& dtype);

struct OutputComparison {
    int sample = 0;
    std::string path; // output position: "0", "1", ...
    std::string dtype;
    std::vector<std::int64_t> shape;
    double maxAbsError = 0.0;
    double maxRelError = 0.0;
    bool nonFiniteMismatch = false; // NaN/Inf where the original has none (or the reverse)
    bool withinTolerance = true;
    std::string problem; // structure, shape or dtype difference; empty when comparable
};

struct CorrectnessReport {
    std::string provider;
    std::string function;
    int samples = 0;
    bool passed = false;
    std::string reason; // why it failed, first problem; empty when passed
    double maxAbsError = 0.0;
    double maxRelError = 0.0;
    std::vector<OutputComparison> outputs;
};

} // namespace kforge
