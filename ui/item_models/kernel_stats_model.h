// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "item_models/duration_format.h"
#include "item_models/profile_results.h"

#include <kforge/profiling.h>

#include <array>
#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace kforge::ui {

// The statistics of one profile run, one row per kernel, kernel geometry, function or module (switchable):
// calls, total, mean, min, median, p95, max and share of the run's time. The rows are the run's table of that
// grouping and module scope, made off the UI thread with its results (ProfileResults); this model computes none.
// Views sort it through a QSortFilterProxyModel on SortRole, which gives numbers as numbers ("9" before "10").
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

    // The rows of `run`'s table `key`: its grouping, and the module whose subtree's records it counts ("" = all;
    // shares are then of the module's time). False, with no rows, when the run has no such table yet (asked for
    // with ProfileResultsSource::showTable, it comes with the next results).
    bool setTable(const RunResults& run, const TableKey& key);
    const std::shared_ptr<const kforge::ProfileRun>& run() const { return m_run; }
    QString moduleScope() const { return QString::fromStdString(m_scope); }
    kforge::GroupBy groupBy() const { return m_groupBy; }

    const kforge::StatRow& row(int row) const { return rows().at(size_t(row)); }
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
    // The unit of each time column (TotalColumn..MaxColumn), from its largest value.
    const TimeUnit& unitOf(int column) const { return m_units[size_t(column - TotalColumn)]; }
    const StatRows& rows() const { return *m_table; }

    std::shared_ptr<const kforge::ProfileRun> m_run;
    kforge::GroupBy m_groupBy = kforge::GroupBy::Kernel;
    std::string m_scope;
    std::shared_ptr<const StatRows> m_table; // never null
    std::array<TimeUnit, 6> m_units;
};

} // namespace kforge::ui
