// SPDX-License-Identifier: Apache-2.0
#include "event_log_model.h"

#include "format.h"
#include "semantic_colors.h"

#include <QBrush>
#include <QColor>

#include <algorithm>

namespace kforge::ui {

namespace {

// Whether an event of this kind always happens in a module, so that an empty path is the root's: an original call
// outside every hooked scope has none, nor has activation.
bool hasScope(kforge::EventKind kind)
{
    return kind != kforge::EventKind::Activate && kind != kforge::EventKind::Deactivate &&
           kind != kforge::EventKind::OriginalCall;
}

} // namespace

EventLogModel::EventLogModel(QObject* parent) : QAbstractTableModel(parent) {}

void EventLogModel::setCapacity(int capacity)
{
    m_capacity = std::max(1, capacity);
    trimTo(m_capacity);
}

void EventLogModel::append(std::vector<kforge::Event> events)
{
    if (events.empty())
        return;
    m_total += events.size();
    if (!m_haveTimeBase) {
        m_timeBase = events.front().timeNs;
        m_haveTimeBase = true;
    }
    // A batch larger than the cap only keeps its tail; the rest never becomes a row.
    size_t skip = 0;
    if (events.size() > size_t(m_capacity)) {
        skip = events.size() - size_t(m_capacity);
        m_discarded += skip;
    }
    const int incoming = int(events.size() - skip);
    trimTo(m_capacity - incoming);
    const int first = int(m_events.size());
    beginInsertRows({}, first, first + incoming - 1);
    std::move(events.begin() + std::ptrdiff_t(skip), events.end(), std::back_inserter(m_events));
    endInsertRows();
    Q_EMIT countersChanged();
}

void EventLogModel::trimTo(int rows)
{
    const int excess = int(m_events.size()) - std::max(0, rows);
    if (excess <= 0)
        return;
    beginRemoveRows({}, 0, excess - 1);
    m_events.erase(m_events.begin(), m_events.begin() + excess);
    endRemoveRows();
    m_discarded += std::uint64_t(excess);
}

void EventLogModel::clear()
{
    beginResetModel();
    m_events.clear();
    m_haveTimeBase = false;
    m_discarded = 0;
    m_total = 0;
    endResetModel();
    Q_EMIT countersChanged();
}

void EventLogModel::setDropped(std::uint64_t dropped)
{
    if (dropped == m_dropped)
        return;
    m_dropped = dropped;
    Q_EMIT countersChanged();
}

int EventLogModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_events.size()); }

int EventLogModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant EventLogModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= int(m_events.size()))
        return {};
    const kforge::Event& e = m_events[size_t(index.row())];
    if (role == KindRole)
        return int(e.kind);
    if (role == SortRole) {
        switch (index.column()) {
        case SequenceColumn:
            return qulonglong(e.sequence);
        case TimeColumn:
            return qint64(e.timeNs);
        case ThreadColumn:
            return qulonglong(e.thread);
        case DepthColumn:
            return e.depth;
        default:
            return data(index, Qt::DisplayRole);
        }
    }
    if (role == Qt::TextAlignmentRole) {
        switch (index.column()) {
        case SequenceColumn:
        case TimeColumn:
        case ThreadColumn:
        case DepthColumn:
            return int(Qt::AlignRight | Qt::AlignVCenter);
        default:
            return {};
        }
    }
    if (role == Qt::ForegroundRole && (e.kind == EventKind::Leftover || e.kind == EventKind::Unwind))
        return QBrush(semanticTextColor(Semantic::Leftover));
    if (role == Qt::ToolTipRole && index.column() == DetailColumn && !e.detail.empty())
        return QString::fromStdString(e.detail);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case SequenceColumn:
        return qulonglong(e.sequence);
    case TimeColumn:
        return QString::number(double(e.timeNs - m_timeBase) / 1e6, 'f', 3);
    case ThreadColumn:
        return qulonglong(e.thread);
    case KindColumn:
        return QString::fromLatin1(kforge::eventKindName(e.kind).data(),
                                   qsizetype(kforge::eventKindName(e.kind).size()));
    case ModuleColumn:
        return hasScope(e.kind) ? formatModulePath(e.modulePath) : QString::fromStdString(e.modulePath);
    case FunctionColumn:
        return QString::fromStdString(e.function);
    case ProviderColumn:
        return QString::fromStdString(e.provider);
    case DepthColumn:
        return e.depth;
    case DetailColumn:
        return QString::fromStdString(e.detail);
    default:
        return {};
    }
}

QVariant EventLogModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SequenceColumn:
        return tr("Seq");
    case TimeColumn:
        return tr("Time (ms)");
    case ThreadColumn:
        return tr("Thread");
    case KindColumn:
        return tr("Kind");
    case ModuleColumn:
        return tr("Module");
    case FunctionColumn:
        return tr("Function");
    case ProviderColumn:
        return tr("Provider");
    case DepthColumn:
        return tr("Depth");
    case DetailColumn:
        return tr("Detail");
    default:
        return {};
    }
}

} // namespace kforge::ui
