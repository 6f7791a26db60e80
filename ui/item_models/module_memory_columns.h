// SPDX-License-Identifier: Apache-2.0
#pragma once
// The module tree's memory columns, for a profile made with memory recorded: the bytes allocated per forward in the
// module and below it, the peak reached while inside it, the live bytes when it returned, and, when baseline and plan
// both recorded memory, the plan's peak against the baseline's. Fed whole from the profile results
// (kforge::summarizeMemory, made off the UI thread).
#include <kforge/memory_profile.h>

#include <QVariant>

#include <string>
#include <unordered_map>

namespace kforge::ui {

class ModuleMemoryColumns {
public:
    enum class Column { Allocated, Peak, LiveAtExit, PeakDelta }; // in the tree's column order

    // `shown`: the run the tree shows (null or not recorded: no memory columns); `baseline`: its baseline when the
    // tree shows the plan of a comparison (null otherwise), for the Δ column.
    void set(const kforge::MemorySummary* shown, const kforge::MemorySummary* baseline);
    bool any() const { return !m_shown.empty(); }
    bool hasDelta() const { return !m_baseline.empty(); }

    QVariant display(const std::string& path, Column column) const;
    QVariant sortValue(const std::string& path, Column column) const; // bytes
    QString toolTip(const std::string& path) const;

private:
    const kforge::ModuleMemory* find(const std::unordered_map<std::string, kforge::ModuleMemory>& rows,
                                     const std::string& path) const;
    std::unordered_map<std::string, kforge::ModuleMemory> m_shown, m_baseline;
};

} // namespace kforge::ui
