// SPDX-License-Identifier: Apache-2.0
// Plan validation against a loaded model (docs/design/plan-format.md, Validation): every problem, with where and a fix.
// Linear in the number of entries: modules, functions and provider types are looked up in indexes, and the
// expensive parts (provider creation, nearest-name suggestions) are cached per distinct value.
#include <kforge/error.h>
#include <kforge/functions.h>
#include <kforge/model_session.h>
#include <kforge/module_path.h>
#include <kforge/plan.h>
#include <kforge/provider_sdk.h>

#include "common/clipped_text.h"

#include "model/exported_cond_branches.h"
#include "model/session_impl.h"
#include "runtime/entry_resolver.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace kforge {
namespace {

size_t editDistance(std::string_view a, std::string_view b)
{
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string quotedList(const std::vector<std::string>& items)
{
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : ", ") + (item.empty() ? std::string("\"\" (the root)") : "'" + item + "'");
    return out;
}

// The `limit` candidates nearest to `name`: those that end with ".name" (or contain it) first, then by edit distance.
std::vector<std::string> nearest(const std::string& name, const std::vector<std::string>& candidates, size_t limit)
{
    std::vector<std::pair<size_t, const std::string*>> ranked;
    ranked.reserve(candidates.size());
    for (const auto& c : candidates) {
        size_t score = editDistance(name, c) + 2; // +2 leaves room for the containment ranks below
        if (!name.empty() && c.size() > name.size() && c.compare(c.size() - name.size(), name.size(), name) == 0 &&
            c[c.size() - name.size() - 1] == '.')
            score = 0;
        else if (!name.empty() && c.find(name) != std::string::npos)
            score = 1;
        ranked.emplace_back(score, &c);
    }
    const size_t n = std::min(limit, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + long(n), ranked.end(), [](const auto& x, const auto& y) {
        return x.first != y.first ? x.first < y.first : *x.second < *y.second;
    });
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i)
        out.push_back(*ranked[i].second);
    return out;
}

std::string functionsCalled(const std::map<std::string, int>& functions)
{
    std::string out;
    for (const auto& [name, count] : functions)
        out += (out.empty() ? "" : ", ") + name + (count > 1 ? " x" + std::to_string(count) : "");
    return out;
}

struct Index {
    const ModelSession& session;
    std::vector<std::string> modulePaths;
    std::vector<std::string> functionNames;
    std::vector<std::string> providerTypes;
    std::map<std::string, std::vector<std::string>> typesByFunction; // registered types per function
    std::map<std::string, std::vector<std::string>> modulesCalling;  // modules whose own forward calls it
    runtime::EntryResolver resolver{/*makeProviders=*/false};
    std::unordered_map<std::string, std::vector<std::string>> scopeSuggestions;

    explicit Index(const ModelSession& s) : session(s)
    {
        for (const ModuleInfo& m : session.modules()) {
            modulePaths.push_back(m.path);
            for (const auto& [function, _] : m.functions)
                modulesCalling[function].push_back(m.path);
        }
        for (Function f : allFunctions())
            functionNames.emplace_back(functionName(f));
        for (const ProviderTypeInfo& info : ProviderRegistry::instance().list()) {
            providerTypes.push_back(info.typeName);
            typesByFunction[std::string(functionName(info.function))].push_back(info.typeName);
        }
    }

    // The fix for a problem the resolver found.
    std::string fixFor(const runtime::EntryProblem& p, const PlanEntry& e, const runtime::EntryResolution& r)
    {
        if (p.kind == "unknown-function") {
            const std::string& hint = r.providerFunction;
            return hint.empty()
                       ? "use one of: " + quotedList(functionNames)
                       : "use '" + hint + "' (what the provider replaces), or one of: " + quotedList(functionNames);
        }
        if (p.kind == "unknown-provider" && r.providerType.empty())
            return "set provider.type to a provider class (see `kforge providers`)";
        if (p.kind == "unknown-provider")
            return "use a registered provider type (see `kforge providers`); nearest: " +
                   quotedList(nearest(r.providerType, providerTypes, 3));
        if (p.kind == "unavailable-provider") {
            const auto& alternatives = typesByFunction[r.providerFunction];
            return std::string("kept in the plan; disable the entry or replace it with") +
                   (alternatives.empty() ? " an available provider" : " one of: " + quotedList(alternatives));
        }
        if (p.kind == "wrong-function") {
            const auto& alternatives = typesByFunction[e.function];
            return "set the function to '" + r.providerFunction + "'" +
                   (alternatives.empty() ? std::string()
                                         : ", or use a provider of '" + e.function + "': " + quotedList(alternatives));
        }
        if (p.kind == "bad-settings")
            return r.info && !r.info->settingsSchema.empty()
                       ? "known settings: " + r.info->settingsSchema.dump()
                       : "remove the settings other than \"type\" (this provider has none)";
        if (p.kind == "unavailable-op")
            return "disable the entry: this LibTorch cannot call a provider of '" + e.function + "'";
        return {};
    }

    const std::vector<std::string>& suggestScopes(const std::string& scope)
    {
        const auto it = scopeSuggestions.find(scope);
        if (it != scopeSuggestions.end())
            return it->second;
        return scopeSuggestions[scope] = nearest(scope, modulePaths, 3);
    }

    // For a module whose forward never runs: the nearest modules below it whose forward does (its children, or
    // theirs when a child is a container too), and the nearest enclosing one. Cached per scope.
    const std::string& runningScopesFix(const ModuleInfo& module)
    {
        const auto it = runningScopeFixes.find(module.path);
        if (it != runningScopeFixes.end())
            return it->second;
        constexpr size_t kLimit = 4;
        std::vector<std::string> below;
        bool more = false, deeper = false;
        std::vector<const ModuleInfo*> pending{&module};
        for (size_t i = 0; i < pending.size(); ++i) {
            for (const auto& childPath : pending[i]->children) {
                const ModuleInfo* child = session.findModule(childPath);
                if (child && !child->forwardCalled) {
                    pending.push_back(child);
                } else if (child && below.size() < kLimit) {
                    below.push_back(child->path);
                    deeper = deeper || i > 0;
                } else if (child) {
                    more = true;
                }
            }
        }
        const ModuleInfo* above = nullptr;
        for (const std::string_view path : module_path::ancestorsOf(module.path)) {
            above = session.findModule(std::string(path));
            if (above && above->forwardCalled)
                break;
            above = nullptr;
        }
        std::string fix = "use a scope whose forward runs:";
        if (!below.empty())
            fix += (deeper ? " the modules below it " : " its children ") + quotedList(below) + (more ? ", ..." : "");
        if (above)
            fix += std::string(below.empty() ? "" : ", or") + " the module around it " + quotedList({above->path});
        return runningScopeFixes[module.path] = fix;
    }
    std::unordered_map<std::string, std::string> runningScopeFixes;
};

// Why a scope whose forward never runs is never entered.
std::string scopeNotCalledMessage(const ModuleInfo& module)
{
    const std::string what = "'" + module.path + "' (" + module.typeName + ")";
    if (!module.hasForward && !module.children.empty())
        return what + " has no forward of its own: the model calls its children directly, so the scope is never "
                      "entered";
    if (!module.hasForward)
        return what + " has no forward in this model (a traced model keeps only the forwards that ran), so the "
                      "scope is never entered";
    return "the forward of " + what +
           " is never called: its parent uses its children, methods or parameters directly, so the scope is never "
           "entered";
}

// Whether every call of `function` under `module` is one export decomposed into other ops (a .pt2 program's).
bool isOnlyCalledDecomposed(const ModuleInfo& module, const std::string& function,
                            const ExportedDecompositions& decompositions)
{
    const auto calls = module.subtreeFunctions.find(function);
    return calls != module.subtreeFunctions.end() && calls->second > 0 &&
           decompositions.callsWithin(module.path, function) >= calls->second;
}

std::string entryPath(size_t i) { return "/entries/" + std::to_string(i); }

} // namespace

std::vector<PlanProblem> validatePlan(const Plan& plan, const ModelSession& session, const std::string& device)
{
    const std::string deviceKind = device.substr(0, device.find(':'));
    if (deviceKind != "cpu" && deviceKind != "cuda")
        throw Error("device '" + device + "'", "expected cpu or cuda[:N]");
    Index index(session);
    const std::string model = session.displayName();
    std::vector<PlanProblem> problems;
    std::unordered_map<std::string, size_t> firstEnabled; // scope '\0' function -> entry

    for (size_t i = 0; i < plan.entries.size(); ++i) {
        const PlanEntry& e = plan.entries[i];
        const int entry = int(i);
        const std::string at = entryPath(i);
        const auto add = [&](std::string path, std::string kind, std::string message, std::string fix) {
            problems.push_back({entry, std::move(path), std::move(kind), std::move(message), std::move(fix)});
        };

        // Scope.
        const ModuleInfo* module = session.findModule(e.scope);
        if (!module) {
            std::string fix = "use an existing module path";
            const auto& near = index.suggestScopes(e.scope);
            if (!near.empty())
                fix += "; nearest: " + quotedList(near);
            if (session.isFrozen())
                fix += " (the model is frozen: its submodules are inlined, so only the root \"\" exists)";
            add(at + "/scope", "unknown-scope", runtime::unknownScopeMessage(e.scope, model), fix);
        } else if (const auto branch = sessionImpl(session).condBranches.find(module->path);
                   !module->forwardCalled && branch != sessionImpl(session).condBranches.end()) {
            add(at + "/scope", "scope-not-called", condBranchScopeMessage(*module, branch->second),
                condBranchScopeFix(branch->second));
        } else if (!module->forwardCalled) {
            add(at + "/scope", "scope-not-called", scopeNotCalledMessage(*module), index.runningScopesFix(*module));
        }

        // Function and provider: what the runtime refuses, in its words (runtime/entry_resolver.h).
        const runtime::EntryResolution resolved = index.resolver.resolve(e);
        if (resolved.function && module && module->forwardCalled && !module->subtreeFunctions.count(e.function)) {
            // (A scope that never runs calls nothing: scope-not-called above says why, once.)
            std::string fix;
            if (module->subtreeFunctions.empty())
                fix = "nothing replaceable is called in '" + clippedText(e.scope) + "' or below";
            else
                fix = "functions called there: " + functionsCalled(module->subtreeFunctions);
            const auto calling = index.modulesCalling.find(e.function);
            if (calling != index.modulesCalling.end()) {
                std::vector<std::string> some(calling->second.begin(),
                                              calling->second.begin() +
                                                  long(std::min<size_t>(4, calling->second.size())));
                fix += "; scopes that call '" + e.function + "': " + quotedList(some) +
                       (calling->second.size() > some.size() ? ", ..." : "");
            } else {
                fix += "; '" + e.function + "' is not called anywhere in " + model;
            }
            add(at + "/function", "function-not-called",
                "'" + e.function + "' is not called in " +
                    (e.scope.empty() ? "the model" : "'" + clippedText(e.scope) + "'") + " or below",
                fix);
        }
        if (resolved.function && module && module->forwardCalled &&
            isOnlyCalledDecomposed(*module, e.function, sessionImpl(session).decompositions))
            add(at + "/function", "function-decomposed",
                e.function + " is decomposed into " + sessionImpl(session).decompositions.opsOf(e.function) +
                    " in this program: no op of it takes the function's arguments, so no provider can serve its calls",
                "export without decomposing (no run_decompositions(), no tensor subclass unwrapping) to keep '" +
                    e.function + "' replaceable");
        for (const runtime::EntryProblem& p : resolved.problems)
            add(at + "/" + p.field, p.kind, p.message, index.fixFor(p, e, resolved));
        if (const ProviderTypeInfo* info = resolved.info;
            info && std::find(info->devices.begin(), info->devices.end(), deviceKind) == info->devices.end()) {
            std::string devices;
            for (const auto& d : info->devices)
                devices += (devices.empty() ? "" : ", ") + d;
            add(at + "/provider/type", "device-unavailable",
                "provider '" + resolved.providerType + "' does not run on " + deviceKind + " (it runs on: " + devices +
                    ")",
                "run on " + (info->devices.empty() ? std::string("another device") : info->devices.front()) +
                    ", or use another provider of '" + resolved.providerFunction + "'");
        }

        // Duplicates (enabled entries only: a disabled alternative is the GUI's toggle).
        if (e.enabled) {
            std::string key = e.scope;
            key += '\0';
            key += e.function;
            const auto [it, inserted] = firstEnabled.emplace(std::move(key), i);
            if (!inserted)
                add(at, "duplicate",
                    "same scope '" + clippedText(e.scope) + "' and function '" + clippedText(e.function) +
                        "' as entry " + std::to_string(it->second),
                    "remove or disable one of entries " + std::to_string(it->second) + " and " + std::to_string(i));
        }
    }
    return problems;
}

} // namespace kforge
