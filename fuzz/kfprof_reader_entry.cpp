// SPDX-License-Identifier: Apache-2.0
#include "kfprof_reader_entry.h"

#include "fuzz_checks.h"

#include <kforge/profile_export.h>

#include <sstream>
#include <string>

namespace kforge::fuzz {

void fuzzKfprofReader(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    ignoreKforgeErrors([&] {
        const std::vector<SavedRun> saved = parseProfile(text, "fuzz input");
        // Whatever was read can be written again, and reads back as the same runs.
        std::vector<LabeledRun> runs;
        runs.reserve(saved.size());
        for (const SavedRun& s : saved)
            runs.push_back({s.label, &s.run});
        std::ostringstream out;
        writeProfile(runs, out);
        const auto again = mustSucceed("reading a profile writeProfile wrote",
                                       [&] { return parseProfile(out.str(), "written profile"); });
        require(again.size() == saved.size(), "a written profile reads back with another number of runs");
        for (size_t k = 0; k < saved.size(); ++k)
            require(again[k].label == saved[k].label && again[k].run.records.size() == saved[k].run.records.size() &&
                        again[k].run.ranges.size() == saved[k].run.ranges.size() &&
                        again[k].run.plan.entries.size() == saved[k].run.plan.entries.size(),
                    "run " + std::to_string(k) + " of a written profile reads back different");
    });
}

} // namespace kforge::fuzz
