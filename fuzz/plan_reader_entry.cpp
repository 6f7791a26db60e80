// SPDX-License-Identifier: Apache-2.0
#include "plan_reader_entry.h"

#include "fuzz_checks.h"

#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/plan.h>

#include <sys/mman.h>
#include <unistd.h>

#include <memory>
#include <string>

namespace kforge::fuzz {
namespace {

// One model for every input: opening it is what dominates, and validation only reads it.
const ModelSession& session()
{
    static const std::unique_ptr<ModelSession> model = ModelSession::open("builtin:tiny-gpt");
    return *model;
}

// readPlan takes a path: the bytes go to an in-memory file (no disk traffic, no leftover files).
std::string inMemoryFile(const std::string& text)
{
    static const int fd = memfd_create("kforge-fuzz-plan", 0);
    require(fd >= 0, "memfd_create failed");
    require(ftruncate(fd, 0) == 0 && pwrite(fd, text.data(), text.size(), 0) == ssize_t(text.size()),
            "cannot write the in-memory plan file");
    return "/proc/self/fd/" + std::to_string(fd);
}

bool sameEntries(const Plan& a, const Plan& b)
{
    if (a.entries.size() != b.entries.size())
        return false;
    for (size_t i = 0; i < a.entries.size(); ++i) {
        const PlanEntry& x = a.entries[i];
        const PlanEntry& y = b.entries[i];
        if (x.scope != y.scope || x.function != y.function || x.provider != y.provider || x.enabled != y.enabled ||
            x.note != y.note)
            return false;
    }
    return true;
}

// What any plan that parsed must allow: validating it, writing it and reading that back, in both dialects.
void exercise(const Plan& plan)
{
    for (const char* device : {"cpu", "cuda"})
        ignoreKforgeErrors([&] { validatePlan(plan, session(), device); });
    ignoreKforgeErrors([&] {
        const std::string written = toJson(plan); // refuses strings that are not UTF-8
        const Plan again = mustSucceed("reading a plan toJson wrote", [&] { return parsePlan(written, "written"); });
        require(sameEntries(plan, again), "a plan written with toJson reads back with other entries");
    });
    ignoreKforgeErrors([&] {
        const std::string aitune = exportAitune(plan); // refuses scoped and duplicate entries
        const Plan again = mustSucceed("reading an exported AITune plan", [&] { return importAitune(aitune); });
        size_t enabled = 0;
        for (const PlanEntry& e : plan.entries)
            enabled += e.enabled ? 1 : 0;
        require(again.entries.size() == enabled, "an exported AITune plan reads back with another entry count");
    });
}

} // namespace

void fuzzPlanReader(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    ignoreKforgeErrors([&] { exercise(parsePlan(text, "fuzz input")); });
    ignoreKforgeErrors([&] { exercise(readPlan(inMemoryFile(text))); });
    ignoreKforgeErrors([&] { exercise(importAitune(text, "blocks.0")); });
    ignoreKforgeErrors([&] { planDialect(text, "fuzz input"); });
    ignoreKforgeErrors([&] { parseProvideSpec(text); });
}

} // namespace kforge::fuzz
