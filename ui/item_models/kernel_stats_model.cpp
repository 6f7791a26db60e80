// SPDX-License-Identifier: Apache-2.0
#include "kernel_stats_model.h"

#include "duration_format.h"
#include "format.h"

#include <algorithm>

namespace kforge::ui {

KernelStatsModel::KernelStatsModel(QObject* parent)
    : QAbstractTableModel(parent), m_table(std::make_shared<const StatRows>())
{
}

bool KernelStatsModel::setTable(const RunResults& run, const TableKey& key)
{
    std::shared_ptr<const StatRows> rows = run.table(key);
    const bool found = rows || !run;
    const bool regrouped = key.groupBy != m_groupBy;
    beginResetModel();
    m_run = run.run;
    m_groupBy = key.groupBy;
    m_scope = key.scope;
    m_table = rows ? std::move(rows) : std::make_shared<const StatRows>();
    for (int column = TotalColumn; column <= MaxColumn; ++column) {
        double largest = 0;
        for (const kforge::StatRow& r : *m_table) {
            const double us[] = {r.totalUs, r.meanUs, r.minUs, r.medianUs, r.p95Us, r.maxUs};
            largest = std::max(largest, us[column - TotalColumn]);
        }
        m_units[size_t(column - TotalColumn)] = timeUnitFor(largest);
    }
    endResetModel();
    if (regrouped)
        Q_EMIT headerDataChanged(Qt::Horizontal, KeyColumn, KeyColumn);
    return found;
}

int KernelStatsModel::rowOfKey(const QString& key) const
{
    const std::string wanted = key.toStdString();
    const auto it = std::find_if(rows().begin(), rows().end(), [&](const auto& r) { return r.key == wanted; });
    return it == rows().end() ? -1 : int(it - rows().begin());
}

int KernelStatsModel::rowOfRecord(int recordIndex) const
{
    if (!m_run || recordIndex < 0 || size_t(recordIndex) >= m_run->records.size())
        return -1;
    // The engine's own grouping of this one record gives its key, spelled exactly as in the rows.
    const std::vector<kforge::StatRow> own = kforge::statistics({m_run->records[size_t(recordIndex)]}, m_groupBy);
    return own.empty() ? -1 : rowOfKey(QString::fromStdString(own.front().key));
}

double KernelStatsModel::totalUs() const
{
    double total = 0;
    for (const kforge::StatRow& r : rows())
        total += r.totalUs;
    return total;
}

int KernelStatsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows().size()); }

int KernelStatsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant KernelStatsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const kforge::StatRow& r = rows()[size_t(index.row())];
    const auto number = [&](int column) -> double {
        switch (column) {
        case CallsColumn:
            return double(r.calls);
        case TotalColumn:
            return r.totalUs;
        case MeanColumn:
            return r.meanUs;
        case MinColumn:
            return r.minUs;
        case MedianColumn:
            return r.medianUs;
        case P95Column:
            return r.p95Us;
        case MaxColumn:
            return r.maxUs;
        case ShareColumn:
            return r.share;
        default:
            return 0;
        }
    };
    const auto text = [&](int column) -> QString {
        switch (column) {
        case KeyColumn:
            return m_groupBy == kforge::GroupBy::Module ? formatModulePath(r.key) : QString::fromStdString(r.key);
        case FunctionColumn:
            return QString::fromStdString(r.function);
        case ModuleColumn:
            return formatModulePath(r.modulePath);
        case CallsColumn:
            return formatCount(r.calls);
        case ShareColumn:
            return formatShare(r.share);
        default:
            return formatIn(number(column), unitOf(column));
        }
    };
    const bool numeric = index.column() >= CallsColumn;
    switch (role) {
    case Qt::DisplayRole:
        return text(index.column());
    case SortRole:
        return numeric ? QVariant(number(index.column())) : QVariant(text(index.column()));
    case KeyRole:
        return QString::fromStdString(r.key);
    case Qt::ToolTipRole:
        if (index.column() == KeyColumn)
            return text(KeyColumn); // kernel names are often longer than the column
        if (numeric && index.column() != CallsColumn && index.column() != ShareColumn)
            return formatDuration(number(index.column()));
        return {};
    case Qt::TextAlignmentRole:
        return numeric ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    default:
        return {};
    }
}

QVariant KernelStatsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::ToolTipRole && section >= TotalColumn && section <= MaxColumn)
        return tr("In %1, over all measured iterations for Total, per execution otherwise").arg(unitOf(section).name);
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case KeyColumn:
        switch (m_groupBy) {
        case kforge::GroupBy::Kernel:
            return tr("Kernel");
        case kforge::GroupBy::KernelGeometry:
            return tr("Kernel <<<grid, block>>>");
        case kforge::GroupBy::Function:
            return tr("Function");
        case kforge::GroupBy::Module:
            return tr("Module");
        case kforge::GroupBy::OpInputShapes:
            return tr("Op and input shapes");
        }
        return {};
    case FunctionColumn:
        return tr("Function");
    case ModuleColumn:
        return tr("Module");
    case CallsColumn:
        return tr("Calls");
    case TotalColumn:
        return tr("Total (%1)").arg(unitOf(section).name);
    case MeanColumn:
        return tr("Mean (%1)").arg(unitOf(section).name);
    case MinColumn:
        return tr("Min (%1)").arg(unitOf(section).name);
    case MedianColumn:
        return tr("Median (%1)").arg(unitOf(section).name);
    case P95Column:
        return tr("p95 (%1)").arg(unitOf(section).name);
    case MaxColumn:
        return tr("Max (%1)").arg(unitOf(section).name);
    case ShareColumn:
        return tr("Share");
    default:
        return {};
    }
}

} // namespace kforge::ui
