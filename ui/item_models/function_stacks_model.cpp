// SPDX-License-Identifier: Apache-2.0
#include "function_stacks_model.h"

#include "format.h"
#include "semantic_colors.h"

#include <QBrush>
#include <QColor>
#include <QStringList>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>

namespace kforge {
// Field-wise equality, so an unchanged snapshot does not reset the view 30 times a second.
static bool operator==(const StackEntrySnapshot& a, const StackEntrySnapshot& b)
{
    return std::tie(a.saved, a.installed, a.modulePath, a.planEntry, a.runtimeId, a.timeNs) ==
           std::tie(b.saved, b.installed, b.modulePath, b.planEntry, b.runtimeId, b.timeNs);
}
static bool operator==(const FunctionStackSnapshot& a, const FunctionStackSnapshot& b)
{
    return std::tie(a.function, a.inEffect, a.entries) == std::tie(b.function, b.inEffect, b.entries);
}
static bool operator==(const ThreadStacksSnapshot& a, const ThreadStacksSnapshot& b)
{
    return std::tie(a.thread, a.insideForward, a.functions) == std::tie(b.thread, b.insideForward, b.functions);
}
static bool operator==(const LeftoverPatch& a, const LeftoverPatch& b)
{
    return std::tie(a.function, a.provider, a.modulePath, a.thread, a.runtimeId, a.timeNs, a.error, a.unwound,
                    a.capture) == std::tie(b.function, b.provider, b.modulePath, b.thread, b.runtimeId, b.timeNs,
                                           b.error, b.unwound, b.capture);
}
} // namespace kforge

namespace kforge::ui {
namespace {

QColor warningColor() { return semanticTextColor(Semantic::Leftover); }

QString qs(const std::string& s) { return QString::fromStdString(s); }

} // namespace

FunctionStacksModel::FunctionStacksModel(QObject* parent) : QAbstractItemModel(parent) {}

bool FunctionStacksModel::setSnapshot(std::vector<kforge::ThreadStacksSnapshot> threads,
                                      std::vector<kforge::LeftoverPatch> leftovers)
{
    std::erase_if(threads,
                  [](const kforge::ThreadStacksSnapshot& t) { return t.functions.empty() && !t.insideForward; });
    std::sort(threads.begin(), threads.end(), [](const auto& a, const auto& b) { return a.thread < b.thread; });
    if (threads == m_threads && leftovers == m_leftovers)
        return false;
    beginResetModel();
    m_threads = std::move(threads);
    m_leftovers = std::move(leftovers);
    rebuild();
    endResetModel();
    return true;
}

void FunctionStacksModel::clear() { setSnapshot({}, {}); }

std::vector<kforge::LeftoverPatch> FunctionStacksModel::withReasons(std::vector<kforge::LeftoverPatch> leftovers,
                                                                    const std::vector<kforge::LeftoverPatch>& reports)
{
    // Looked up, not scanned: a failed forward of a scope with many entries leaves as many leftovers as reports.
    using Place = std::pair<std::string, std::string>; // function, module path
    using Push =
        std::tuple<std::string, std::string, std::uint64_t, std::uint64_t, std::int64_t>; // + thread, runtime, time
    std::map<Push, const kforge::LeftoverPatch*> exact;
    std::map<Place, const kforge::LeftoverPatch*> newest; // of a function and module: the last report
    for (const kforge::LeftoverPatch& report : reports) {
        exact.try_emplace({report.function, report.modulePath, report.thread, report.runtimeId, report.timeNs},
                          &report);
        newest[{report.function, report.modulePath}] = &report;
    }
    for (kforge::LeftoverPatch& patch : leftovers) {
        if (!patch.error.empty())
            continue;
        // The exact push first; else the newest report of the same function and module.
        const auto push = exact.find({patch.function, patch.modulePath, patch.thread, patch.runtimeId, patch.timeNs});
        const auto place = newest.find({patch.function, patch.modulePath});
        if (push != exact.end())
            patch.error = push->second->error;
        else if (place != newest.end())
            patch.error = place->second->error;
    }
    return leftovers;
}

void FunctionStacksModel::setFunctionBreakpoints(const QSet<QString>& functions)
{
    if (functions == m_breakpoints)
        return;
    m_breakpoints = functions;
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        if (m_nodes[i].kind == RowKind::Function)
            Q_EMIT dataChanged(createIndex(m_nodes[i].row, NameColumn, quintptr(i)),
                               createIndex(m_nodes[i].row, NameColumn, quintptr(i)));
    }
}

void FunctionStacksModel::setForwardThread(std::uint64_t thread)
{
    if (thread == m_forwardThread)
        return;
    m_forwardThread = thread;
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        if (m_nodes[i].kind == RowKind::Thread)
            Q_EMIT dataChanged(createIndex(m_nodes[i].row, NameColumn, quintptr(i)),
                               createIndex(m_nodes[i].row, NameColumn, quintptr(i)));
    }
}

void FunctionStacksModel::setTimeBase(std::int64_t timeNs)
{
    if (timeNs == m_timeBase)
        return;
    beginResetModel(); // every time cell changes
    m_timeBase = timeNs;
    endResetModel();
}

int FunctionStacksModel::addNode(Node node)
{
    const int id = int(m_nodes.size());
    if (node.parent >= 0) {
        node.row = int(m_nodes[node.parent].children.size());
        m_nodes[node.parent].children.push_back(id);
    } else {
        node.row = int(m_topLevel.size());
        m_topLevel.push_back(id);
    }
    m_nodes.push_back(std::move(node));
    return id;
}

void FunctionStacksModel::rebuild()
{
    m_nodes.clear();
    m_topLevel.clear();
    m_oldest = std::numeric_limits<std::int64_t>::max();
    for (int t = 0; t < int(m_threads.size()); ++t) {
        const int thread = addNode({RowKind::Thread, -1, 0, t, -1, -1, {}});
        const auto& functions = m_threads[t].functions;
        for (int f = 0; f < int(functions.size()); ++f) {
            const int function = addNode({RowKind::Function, thread, 0, t, f, -1, {}});
            for (int e = 0; e < int(functions[f].entries.size()); ++e) {
                addNode({RowKind::Entry, function, 0, t, f, e, {}});
                m_oldest = std::min(m_oldest, functions[f].entries[e].timeNs);
            }
        }
    }
    if (!m_leftovers.empty()) {
        const int group = addNode({RowKind::LeftoverGroup, -1, 0, -1, -1, -1, {}});
        for (int l = 0; l < int(m_leftovers.size()); ++l) {
            addNode({RowKind::Leftover, group, 0, -1, -1, l, {}});
            m_oldest = std::min(m_oldest, m_leftovers[l].timeNs);
        }
    }
    if (m_oldest == std::numeric_limits<std::int64_t>::max())
        m_oldest = 0;
}

int FunctionStacksModel::nodeOf(const QModelIndex& index) const
{
    if (!index.isValid() || index.model() != this)
        return -1;
    return int(index.internalId());
}

FunctionStacksModel::RowKind FunctionStacksModel::kindOf(const QModelIndex& index) const
{
    const int node = nodeOf(index);
    return node < 0 ? RowKind::Thread : m_nodes[node].kind;
}

QModelIndex FunctionStacksModel::index(int row, int column, const QModelIndex& parent) const
{
    if (row < 0 || column < 0 || column >= ColumnCount || parent.column() > 0)
        return {};
    const std::vector<int>& rows = parent.isValid() ? m_nodes[nodeOf(parent)].children : m_topLevel;
    if (row >= int(rows.size()))
        return {};
    return createIndex(row, column, quintptr(rows[row]));
}

QModelIndex FunctionStacksModel::parent(const QModelIndex& child) const
{
    const int node = nodeOf(child);
    if (node < 0 || m_nodes[node].parent < 0)
        return {};
    const int parentNode = m_nodes[node].parent;
    return createIndex(m_nodes[parentNode].row, 0, quintptr(parentNode));
}

int FunctionStacksModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return int(m_topLevel.size());
    if (parent.column() > 0)
        return 0;
    return int(m_nodes[nodeOf(parent)].children.size());
}

int FunctionStacksModel::columnCount(const QModelIndex& /*parent*/) const { return ColumnCount; }

bool FunctionStacksModel::isLeftoverEntry(const Node& node) const
{
    if (node.kind == RowKind::Leftover || node.kind == RowKind::LeftoverGroup)
        return true;
    if (node.kind != RowKind::Entry)
        return false;
    const kforge::ThreadStacksSnapshot& thread = m_threads[node.thread];
    const kforge::FunctionStackSnapshot& function = thread.functions[node.function];
    const kforge::StackEntrySnapshot& entry = function.entries[node.entry];
    return std::any_of(m_leftovers.begin(), m_leftovers.end(), [&](const kforge::LeftoverPatch& patch) {
        return patch.thread == thread.thread && patch.function == function.function &&
               patch.modulePath == entry.modulePath && patch.runtimeId == entry.runtimeId &&
               patch.timeNs == entry.timeNs;
    });
}

QString FunctionStacksModel::formatTime(std::int64_t timeNs) const
{
    const std::int64_t base = m_timeBase != 0 ? m_timeBase : m_oldest;
    return QString::number(double(timeNs - base) / 1e6, 'f', 3);
}

QString FunctionStacksModel::threadLabel(std::uint64_t thread) const
{
    if (thread != 0 && thread == m_forwardThread)
        return tr("Thread %1 (forward)").arg(thread);
    return tr("Thread %1").arg(thread);
}

QVariant FunctionStacksModel::display(const Node& node, int column) const
{
    switch (node.kind) {
    case RowKind::Thread: {
        const kforge::ThreadStacksSnapshot& thread = m_threads[node.thread];
        switch (column) {
        case NameColumn:
            return threadLabel(thread.thread);
        case CallableColumn:
            return thread.insideForward ? tr("inside a forward") : tr("idle");
        case DetailColumn:
            return tr("%n function(s) replaced or stacked", nullptr, int(thread.functions.size()));
        default:
            return {};
        }
    }
    case RowKind::Function: {
        const kforge::FunctionStackSnapshot& function = m_threads[node.thread].functions[node.function];
        switch (column) {
        case NameColumn:
            return qs(function.function);
        case CallableColumn:
            return qs(function.inEffect);
        case ModuleColumn:
            return function.entries.empty() ? QString() : formatModulePath(function.entries.back().modulePath);
        case DetailColumn:
            return tr("stack depth %1").arg(function.entries.size());
        default:
            return {};
        }
    }
    case RowKind::Entry: {
        const kforge::StackEntrySnapshot& entry = m_threads[node.thread].functions[node.function].entries[node.entry];
        switch (column) {
        case NameColumn:
            return QStringLiteral("#%1").arg(node.entry);
        case CallableColumn:
            return qs(entry.installed);
        case SavedColumn:
            return qs(entry.saved);
        case ModuleColumn:
            return formatModulePath(entry.modulePath);
        case TimeColumn:
            return formatTime(entry.timeNs);
        case DetailColumn: {
            QString detail = tr("runtime %1").arg(entry.runtimeId);
            if (entry.planEntry >= 0)
                detail = tr("plan entry %1, %2").arg(entry.planEntry + 1).arg(detail);
            if (isLeftoverEntry(node))
                detail = tr("leftover; %1").arg(detail);
            return detail;
        }
        default:
            return {};
        }
    }
    case RowKind::LeftoverGroup:
        switch (column) {
        case NameColumn:
            return tr("Leftover patches");
        case DetailColumn:
            return tr("%n patch(es) still in effect after a forward ended; Unwind restores the originals", nullptr,
                      int(m_leftovers.size()));
        default:
            return {};
        }
    case RowKind::Leftover: {
        const kforge::LeftoverPatch& patch = m_leftovers[node.entry];
        switch (column) {
        case NameColumn:
            return qs(patch.function);
        case CallableColumn:
            return qs(patch.provider);
        case ModuleColumn:
            return formatModulePath(patch.modulePath);
        case TimeColumn:
            return formatTime(patch.timeNs);
        case DetailColumn: {
            QString reason = tr("exit of %1 never ran").arg(formatModulePath(patch.modulePath));
            if (!patch.error.empty())
                reason += QStringLiteral(": ") + qs(patch.error);
            return reason;
        }
        default:
            return {};
        }
    }
    }
    return {};
}

QString FunctionStacksModel::toolTip(const Node& node) const
{
    switch (node.kind) {
    case RowKind::Function:
        return m_breakpoints.contains(qs(m_threads[node.thread].functions[node.function].function))
                   ? tr("Breakpoint on calls of this function")
                   : QString();
    case RowKind::Entry: {
        const kforge::StackEntrySnapshot& entry = m_threads[node.thread].functions[node.function].entries[node.entry];
        return tr("Pushed by the pre-hook of %1: saved %2, installed %3")
            .arg(formatModulePath(entry.modulePath), qs(entry.saved), qs(entry.installed));
    }
    case RowKind::Leftover: {
        const kforge::LeftoverPatch& patch = m_leftovers[node.entry];
        QStringList lines;
        lines << tr("%1 still runs %2 on thread %3").arg(qs(patch.function), qs(patch.provider)).arg(patch.thread);
        lines << tr("Installed on entering %1, whose exit never ran").arg(formatModulePath(patch.modulePath));
        if (!patch.error.empty())
            lines << tr("Error: %1").arg(qs(patch.error));
        if (!patch.capture.empty())
            lines << tr("Graph capture: %1").arg(qs(patch.capture));
        lines << tr("Runtime %1. Unwind (deactivate) restores the original.").arg(patch.runtimeId);
        return lines.join(QLatin1Char('\n'));
    }
    default:
        return {};
    }
}

QVariant FunctionStacksModel::data(const QModelIndex& index, int role) const
{
    const int id = nodeOf(index);
    if (id < 0)
        return {};
    const Node& node = m_nodes[id];
    switch (role) {
    case Qt::DisplayRole:
        return display(node, index.column());
    case Qt::ToolTipRole: {
        const QString tip = toolTip(node);
        return tip.isEmpty() ? QVariant() : QVariant(tip);
    }
    case Qt::ForegroundRole:
        if (isLeftoverEntry(node))
            return QBrush(warningColor());
        return {};
    case Qt::BackgroundRole:
        if (node.kind == RowKind::Leftover) {
            QColor tint = warningColor();
            tint.setAlpha(40);
            return QBrush(tint);
        }
        return {};
    case Qt::DecorationRole:
        if (index.column() == NameColumn && node.kind == RowKind::Function &&
            m_breakpoints.contains(qs(m_threads[node.thread].functions[node.function].function)))
            return semanticColor(Semantic::Breakpoint);
        return {};
    case KindRole:
        return int(node.kind);
    case FunctionRole:
        if (node.kind == RowKind::Function || node.kind == RowKind::Entry)
            return qs(m_threads[node.thread].functions[node.function].function);
        if (node.kind == RowKind::Leftover)
            return qs(m_leftovers[node.entry].function);
        return {};
    case ThreadRole:
        if (node.thread >= 0)
            return qulonglong(m_threads[node.thread].thread);
        if (node.kind == RowKind::Leftover)
            return qulonglong(m_leftovers[node.entry].thread);
        return {};
    case ModulePathRole:
        if (node.kind == RowKind::Entry)
            return qs(m_threads[node.thread].functions[node.function].entries[node.entry].modulePath);
        if (node.kind == RowKind::Leftover)
            return qs(m_leftovers[node.entry].modulePath);
        return {};
    case LeftoverRole:
        return isLeftoverEntry(node) && node.kind != RowKind::LeftoverGroup;
    case BreakpointRole: {
        const QString function = data(index, FunctionRole).toString();
        return !function.isEmpty() && m_breakpoints.contains(function);
    }
    default:
        return {};
    }
}

QVariant FunctionStacksModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Thread / function");
    case CallableColumn:
        return tr("In effect / installed");
    case SavedColumn:
        return tr("Saved");
    case ModuleColumn:
        return tr("Module");
    case TimeColumn:
        return tr("Time (ms)");
    case DetailColumn:
        return tr("Detail");
    default:
        return {};
    }
}

} // namespace kforge::ui
