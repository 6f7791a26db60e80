// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kforge {

// What a forward returned, summarised without exposing tensors: enough to compare two runs.
struct TensorDigest {
    std::string path; // position in the output structure: "0", "1.logits", "" for a lone tensor
    std::string dtype;
    std::string device;
    std::vector<std::int64_t> shape;
    double sum = 0.0;
    double maxAbs = 0.0;
};

} // namespace kforge
