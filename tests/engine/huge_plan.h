// SPDX-License-Identifier: Apache-2.0
#pragma once
// A plan of any size for a loaded model, made at run time (huge plans are not committed): shared by the
// memory test (tests/engine/test_huge_plan.cpp) and the timing benchmark (bench/bench_plan_validation.cpp).
#include <kforge/functions.h>
#include <kforge/model_session.h>
#include <kforge/plan.h>
#include <kforge/provider_sdk.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace kforge::test {

inline constexpr size_t kHugePlanUnknownScopeEvery = 100;

// `size` entries cycling over every (module whose forward runs, function its subtree calls, registered provider of
// it) of the session; only the first of each (scope, function) is enabled, so there are no duplicates. Every 100th
// entry names a missing module ("missing.N", each one distinct), so validation reports size / 100 problems.
inline Plan hugePlan(const ModelSession& session, size_t size)
{
    std::vector<std::pair<std::string, std::string>> targets; // (scope, function)
    std::vector<std::string> providers;
    std::vector<bool> firstOfTarget; // several providers may serve one (scope, function): one is enabled
    for (const ModuleInfo& m : session.modules()) {
        if (!m.forwardCalled)
            continue; // a ModuleList's scope is never entered: validation reports it (scope-not-called)
        for (const auto& [function, _] : m.subtreeFunctions) {
            bool first = true;
            for (const ProviderTypeInfo& info : ProviderRegistry::instance().list())
                if (functionName(info.function) == function &&
                    std::find(info.devices.begin(), info.devices.end(), "cpu") != info.devices.end()) {
                    targets.emplace_back(m.path, function);
                    providers.push_back(info.typeName);
                    firstOfTarget.push_back(std::exchange(first, false));
                }
        }
    }
    Plan plan;
    plan.modelName = session.displayName();
    plan.entries.reserve(size);
    for (size_t i = 0; i < size; ++i) {
        const size_t t = i % targets.size();
        PlanEntry e;
        e.scope = i % kHugePlanUnknownScopeEvery == kHugePlanUnknownScopeEvery - 1 ? "missing." + std::to_string(i)
                                                                                   : targets[t].first;
        e.function = targets[t].second;
        e.provider = {{"type", providers[t]}};
        e.enabled = i < targets.size() && firstOfTarget[t];
        e.note = "entry " + std::to_string(i);
        plan.entries.push_back(std::move(e));
    }
    return plan;
}

} // namespace kforge::test
