// SPDX-License-Identifier: Apache-2.0
#pragma once
// kforge profile --memory: where a run's memory went, per module (allocated, freed, peak) and the forward's peak.
#include "report.h"

#include <kforge/memory_profile.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <ostream>
#include <string>

namespace kforge::cli {

void printMemory(std::ostream& out, const MemorySummary& memory, std::size_t top);
nlohmann::ordered_json memoryJson(const MemorySummary& memory);
// compare --memory: each module's allocated bytes and peak before and after, with their change, and the forward's.
void printMemoryComparison(std::ostream& out, const MemorySummary& before, const MemorySummary& after, std::size_t top);
nlohmann::ordered_json memoryComparisonJson(const MemorySummary& before, const MemorySummary& after);

// verify and bench: the plan's change of the forward's peak memory (measurePeakChange), a line of text and
// "peak_memory" in the JSON; when it cannot be measured, a note saying why (the command's verdict stands).
void reportPeakChange(Report& report, ModelSession& session, const Plan& plan);

} // namespace kforge::cli
