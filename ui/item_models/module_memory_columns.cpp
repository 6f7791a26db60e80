// SPDX-License-Identifier: Apache-2.0
#include "item_models/module_memory_columns.h"

#include "item_models/format.h"

#include <QCoreApplication>

namespace kforge::ui {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("ModuleMemoryColumns", text); }

std::unordered_map<std::string, kforge::ModuleMemory> byPath(const kforge::MemorySummary* summary)
{
    std::unordered_map<std::string, kforge::ModuleMemory> rows;
    if (summary && summary->recorded)
        for (const kforge::ModuleMemory& m : summary->modules)
            rows.emplace(m.path, m);
    return rows;
}

QString signedBytes(std::int64_t bytes)
{
    return bytes > 0   ? QStringLiteral("+") + formatBytes(bytes)
           : bytes < 0 ? QStringLiteral("−") + formatBytes(-bytes)
                       : formatBytes(0);
}

} // namespace

void ModuleMemoryColumns::set(const kforge::MemorySummary* shown, const kforge::MemorySummary* baseline)
{
    m_shown = byPath(shown);
    m_baseline = m_shown.empty() ? decltype(m_baseline){} : byPath(baseline);
}

const kforge::ModuleMemory* ModuleMemoryColumns::find(const std::unordered_map<std::string, kforge::ModuleMemory>& rows,
                                                      const std::string& path) const
{
    const auto it = rows.find(path);
    return it == rows.end() ? nullptr : &it->second;
}

QVariant ModuleMemoryColumns::sortValue(const std::string& path, Column column) const
{
    const kforge::ModuleMemory* shown = find(m_shown, path);
    const kforge::ModuleMemory* before = find(m_baseline, path);
    switch (column) {
    case Column::Allocated:
        return shown ? shown->allocatedBytes : 0.0;
    case Column::Peak:
        return qint64(shown ? shown->peakBytes : 0);
    case Column::LiveAtExit: // a module never called itself sorts below every one that was
        return qint64(shown && shown->liveAtExitBytes ? *shown->liveAtExitBytes : -1);
    case Column::PeakDelta:
        return qint64((shown ? shown->peakBytes : 0) - (before ? before->peakBytes : 0));
    }
    return {};
}

QVariant ModuleMemoryColumns::display(const std::string& path, Column column) const
{
    const kforge::ModuleMemory* shown = find(m_shown, path);
    const kforge::ModuleMemory* before = find(m_baseline, path);
    if (!shown && !before) // allocated nothing on either side
        return {};
    switch (column) {
    case Column::Allocated:
        return shown ? formatBytes(std::int64_t(shown->allocatedBytes)) : QString();
    case Column::Peak:
        return shown ? formatBytes(shown->peakBytes) : QString();
    case Column::LiveAtExit:
        return shown && shown->liveAtExitBytes ? formatBytes(*shown->liveAtExitBytes) : QString();
    case Column::PeakDelta:
        return hasDelta() ? signedBytes(sortValue(path, column).toLongLong()) : QString();
    }
    return {};
}

QString ModuleMemoryColumns::toolTip(const std::string& path) const
{
    const kforge::ModuleMemory* shown = find(m_shown, path);
    if (!shown)
        return tr("Nothing was allocated in this module or below it in the measured forwards.");
    QString text = tr("Per forward, in this module and below it: %1 allocated in %2 allocation(s), %3 freed; the most "
                      "live at once while inside it: %4 above the forward's start.")
                       .arg(formatBytes(std::int64_t(shown->allocatedBytes)))
                       .arg(shown->allocations, 0, 'g', 4)
                       .arg(formatBytes(std::int64_t(shown->freedBytes)), formatBytes(shown->peakBytes));
    text += QLatin1Char(' ') +
            (shown->liveAtExitBytes
                 ? tr("When it returned, %1 were live above the forward's start (its outputs and what the modules "
                      "before it left alive; the most over its calls).")
                       .arg(formatBytes(*shown->liveAtExitBytes))
                 : tr("It is never called itself (its children are called in its place), so it has no exit."));
    if (const kforge::ModuleMemory* before = find(m_baseline, path))
        text += QLatin1Char('\n') +
                tr("Baseline: %1 allocated, peak %2.")
                    .arg(formatBytes(std::int64_t(before->allocatedBytes)), formatBytes(before->peakBytes));
    return text;
}

} // namespace kforge::ui
