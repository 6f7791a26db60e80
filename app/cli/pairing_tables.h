// SPDX-License-Identifier: Apache-2.0
#pragma once
// kforge diff: two runs paired item by item (kforge/run_pairing.h): how much of each run's time paired, the modules
// matched by structure, the ops and kernels by place with their change and verdict, and what has no counterpart.
#include "output.h"

#include <kforge/run_pairing.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace kforge::cli {

// "paired by place: 99.7% of A's op time, ...", the modules matched by structure and those on one side only.
std::vector<std::string> pairingSummary(const RunPairing& pairing);
// "ops and kernels by place, largest change first (top 20 of 130; --top 0 for all)".
std::string pairingTableTitle(const RunPairing& pairing, std::size_t top);
// The pairs by the size of their change, `top` rows (0: all).
Table pairingTable(const RunPairing& pairing, std::size_t top);
// "only in A (3): blocks.0/-/aten::add 1.2 us, ...", one line per side that has any.
std::vector<std::string> unpairedLines(const RunPairing& pairing, std::size_t top);
// The four above, as kforge diff prints them.
void printPairing(std::ostream& out, const RunPairing& pairing, std::size_t top);
nlohmann::ordered_json pairingJson(const RunPairing& pairing, std::size_t top);
// Pairs B is slower in beyond noise by more than `percent`: "op blocks.0/linear/aten::addmm +12%".
std::vector<std::string> slowerPairs(const RunPairing& pairing, double percent);

} // namespace kforge::cli
