// SPDX-License-Identifier: Apache-2.0
#pragma once
// kforge diff: two runs paired item by item (kforge/run_pairing.h): how much of each run's time paired, the modules
// matched by structure, the ops and kernels by place with their change and verdict, and what has no counterpart.
#include <kforge/run_pairing.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace kforge::cli {

void printPairing(std::ostream& out, const RunPairing& pairing, std::size_t top);
nlohmann::ordered_json pairingJson(const RunPairing& pairing, std::size_t top);
// Pairs B is slower in beyond noise by more than `percent`: "op blocks.0/linear/aten::addmm +12%".
std::vector<std::string> slowerPairs(const RunPairing& pairing, double percent);

} // namespace kforge::cli
