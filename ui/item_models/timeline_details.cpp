// SPDX-License-Identifier: Apache-2.0
#include "item_models/timeline_details.h"

#include "item_models/duration_format.h"
#include "item_models/format.h"

#include <QCoreApplication>
#include <QLocale>
#include <QStringList>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kforge::ui {
namespace {

QString tr(const char* text, const char* comment = nullptr, int n = -1)
{
    return QCoreApplication::translate("kforge::ui", text, comment, n);
}

QString microseconds(double ns) { return formatDuration(ns / 1000.0); }

// The `count` largest entries as "name 402 µs (49.5%)", of `total` ns.
QString largest(const std::map<std::string, double>& byName, double total, size_t count,
                const std::function<QString(const std::string&)>& nameOf)
{
    std::vector<std::pair<std::string, double>> sorted(byName.begin(), byName.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    QStringList parts;
    for (size_t i = 0; i < sorted.size() && i < count; ++i)
        parts << tr("%1 %2 (%3%)")
                     .arg(nameOf(sorted[i].first), microseconds(sorted[i].second),
                          QLocale().toString(100.0 * sorted[i].second / total, 'f', 1));
    if (sorted.size() > count)
        parts << tr("%n more", nullptr, int(sorted.size() - count));
    return parts.join(QStringLiteral(", "));
}

} // namespace

QString recordDetails(const kforge::ProfileRun& run, int recordIndex)
{
    if (recordIndex < 0 || size_t(recordIndex) >= run.records.size())
        return {};
    const kforge::KernelRecord& r = run.records[size_t(recordIndex)];
    QStringList parts{QString::fromStdString(r.kind), tr("module %1").arg(formatModulePath(r.modulePath))};
    if (!r.function.empty())
        parts << tr("function %1 served by %2")
                     .arg(QString::fromStdString(r.function),
                          r.provider.empty() ? tr("original") : QString::fromStdString(r.provider));
    if (!r.op.empty() && r.op != r.name)
        parts << tr("op %1").arg(QString::fromStdString(r.op));
    if (r.device >= 0)
        parts << tr("GPU %1, stream %2, grid %3×%4×%5, block %6×%7×%8")
                     .arg(r.device)
                     .arg(r.stream)
                     .arg(r.grid[0])
                     .arg(r.grid[1])
                     .arg(r.grid[2])
                     .arg(r.block[0])
                     .arg(r.block[1])
                     .arg(r.block[2]);
    parts << tr("%1, starting at %2, forward %3")
                 .arg(microseconds(double(r.durationNs)), microseconds(double(r.startNs)))
                 .arg(r.iteration + 1);
    return tr("%1 — %2").arg(QString::fromStdString(r.name), parts.join(QStringLiteral(" · ")));
}

QString rangeDetails(const kforge::ProfileRun& run, int rangeIndex)
{
    if (rangeIndex < 0 || size_t(rangeIndex) >= run.ranges.size())
        return {};
    const kforge::RangeRecord& r = run.ranges[size_t(rangeIndex)];
    const bool module = r.kind == "module";
    QStringList parts{module ? tr("module scope") : tr("function call")};
    if (!module)
        parts << tr("served by %1").arg(r.provider.empty() ? tr("original") : QString::fromStdString(r.provider));
    parts << tr("%1, starting at %2, forward %3")
                 .arg(microseconds(double(r.durationNs)), microseconds(double(r.startNs)))
                 .arg(r.iteration + 1);
    // What ran inside it: the records of its thread within its span (a module's own ops and its children's).
    std::map<std::string, double> byFunction;
    double recorded = 0;
    for (const kforge::KernelRecord& k : run.records) {
        if (k.thread != r.thread || k.startNs < r.startNs || k.startNs + k.durationNs > r.startNs + r.durationNs)
            continue;
        recorded += double(k.durationNs);
        byFunction[k.function] += double(k.durationNs);
    }
    if (recorded > 0)
        parts << tr("inside %1 recorded: %2")
                     .arg(microseconds(recorded), largest(byFunction, recorded, 5, [](const std::string& f) {
                              return f.empty() ? tr("(no function)") : QString::fromStdString(f);
                          }));
    return tr("%1 — %2").arg(module ? formatModulePath(r.name) : QString::fromStdString(r.name),
                             parts.join(QStringLiteral(" · ")));
}

QString spanSummary(const kforge::ProfileRun& run, double startNs, double endNs)
{
    if (endNs <= startNs)
        return {};
    std::map<std::string, double> byFunction, byModule;
    double recorded = 0;
    for (const kforge::KernelRecord& r : run.records) {
        const double inside = std::min(endNs, double(r.startNs + r.durationNs)) - std::max(startNs, double(r.startNs));
        if (inside <= 0)
            continue;
        recorded += inside;
        byFunction[r.function.empty() ? std::string() : r.function] += inside;
        byModule[r.modulePath] += inside;
    }
    const QString span =
        tr("%1 to %2 (%3)").arg(microseconds(startNs), microseconds(endNs), microseconds(endNs - startNs));
    if (recorded <= 0)
        return tr("%1: nothing recorded inside").arg(span);
    const auto functionName = [](const std::string& f) {
        return f.empty() ? tr("(no function)") : QString::fromStdString(f);
    };
    const auto moduleName = [](const std::string& m) { return formatModulePath(m); };
    return tr("%1, %2 recorded: functions %3; modules %4")
        .arg(span, microseconds(recorded), largest(byFunction, recorded, 5, functionName),
             largest(byModule, recorded, 5, moduleName));
}

} // namespace kforge::ui
