// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "item_models/duration_format.h"

#include <array>
#include <kforge/profiling.h>

#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace kforge::ui {

// The statistics of one profile run, one row per kernel, kernel geometry, function or module (switchable):
// calls, total, mean, min, median, p95, max and share of the run's time. Views sort it through a
// QSortFilterProxyModel on SortRole, which gives numbers as numbers ("9" before "10").
class KernelStatsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        KeyColumn, // kernel name, kernel <<<grid, block>>>, function or module path, by grouping
        FunctionColumn,
        ModuleColumn,
        CallsColumn,
        TotalColumn,
        MeanColumn,
        MinColumn,
        MedianColumn,
        P95Column,
        MaxColumn,
        ShareColumn,
        ColumnCount
    };
    Q_ENUM(Column)
    enum Role {
        SortRole = Qt::UserRole + 1, // double for numeric columns, QString otherwise
        KeyRole,                     // QString: the row's key as the engine spells it ("" = the root module)
    };

    explicit KernelStatsModel(QObject* parent = nullptr);

    void setRun(std::shared_ptr<const kforge::ProfileRun> run);
    const std::shared_ptr<const kforge::ProfileRun>& run() const { return m_run; }
    void setGroupBy(kforge::GroupBy groupBy);
    // Only the records of this module and the modules below it ("" = all, the root's subtree); shares are then of
    // the module's time.
    void setModuleScope(const QString& path);
    QString moduleScope() const { return QString::fromStdString(m_scope); }
    kforge::GroupBy groupBy() const { return m_groupBy; }

    const kforge::StatRow& row(int row) const { return m_rows.at(size_t(row)); }
    // The row of `key` (as in KeyRole), -1 when none.
    int rowOfKey(const QString& key) const;
    // The row that record `recordIndex` of the run counts towards under the current grouping, -1 when none.
    int rowOfRecord(int recordIndex) const;
    double totalUs() const; // of all rows

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void rebuild();
    // The unit of each time column (TotalColumn..MaxColumn), from its largest value.
    const TimeUnit& unitOf(int column) const { return m_units[size_t(column - TotalColumn)]; }

    std::shared_ptr<const kforge::ProfileRun> m_run;
    kforge::GroupBy m_groupBy = kforge::GroupBy::Kernel;
    std::string m_scope;
    std::vector<kforge::StatRow> m_rows;
    std::array<TimeUnit, 6> m_units;
};

} // namespace kforge::ui
