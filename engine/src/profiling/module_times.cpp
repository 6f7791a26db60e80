// SPDX-License-Identifier: Apache-2.0
#include <kforge/module_path.h>
#include <kforge/profiling.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace kforge {

std::vector<ModuleTime> moduleTimes(const ProfileRun& run)
{
    std::vector<ModuleTime> rows(run.modules.size());
    if (rows.empty())
        return rows;
    std::unordered_map<std::string, size_t> index;
    for (size_t i = 0; i < run.modules.size(); ++i) {
        rows[i].path = run.modules[i].path;
        index.emplace(run.modules[i].path, i);
    }
    const auto rowOf = [&](const std::string& path) {
        const auto it = index.find(path);
        return it == index.end() ? size_t(0) : it->second;
    };
    // Ancestors by path prefix: "blocks.0.attn" is under "blocks.0", "blocks" and the root.
    const auto forEachAncestor = [&](const std::string& path, const auto& visit) {
        size_t row = rowOf(path);
        visit(row);
        if (row == 0)
            return;
        for (const std::string_view above : module_path::ancestorsOf(run.modules[row].path))
            if (const auto it = index.find(std::string(above)); it != index.end())
                visit(it->second);
    };

    const double forwards = std::max(1, run.iterations);
    std::vector<std::map<std::string, double>> functionUs(rows.size());
    for (const KernelRecord& r : run.records) {
        const double us = double(r.durationNs) / 1000.0 / forwards;
        rows[rowOf(r.modulePath)].selfUs += us;
        forEachAncestor(r.modulePath, [&](size_t row) {
            rows[row].totalUs += us;
            if (!r.function.empty())
                functionUs[row][r.function] += us;
        });
    }
    for (const RangeRecord& range : run.ranges)
        if (range.kind == "module")
            if (const auto it = index.find(range.name); it != index.end())
                rows[it->second].calls += 1.0 / forwards;
    const double forward = rows[0].totalUs;
    for (size_t i = 0; i < rows.size(); ++i) {
        rows[i].share = forward > 0 ? rows[i].totalUs / forward : 0.0;
        for (const auto& [function, us] : functionUs[i])
            if (us > rows[i].topFunctionUs) {
                rows[i].topFunction = function;
                rows[i].topFunctionUs = us;
            }
    }
    return rows;
}

} // namespace kforge
