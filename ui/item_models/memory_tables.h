// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Memory view's tables of a run that recorded memory, from its kforge::MemorySummary (made off the UI thread with
// the results; these models compute nothing): what was alive at the forward's peak, the memory per function and the
// provider that served it (with the change against the baseline's same function), and a CUDA run's device memory
// through the driver. Views sort them through a QSortFilterProxyModel on SortRole: bytes and counts as numbers.
#include <kforge/memory_profile.h>

#include <QAbstractTableModel>
#include <QStringList>

#include <vector>

namespace kforge::ui {

// A table whose cells are made whole when its summary is set.
class MemoryTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Role { SortRole = Qt::UserRole + 1 }; // numbers (bytes, counts, shares) as numbers, text as text

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

protected:
    struct Cell {
        QString text;
        QVariant sortValue; // a number in number columns (shown right-aligned), else the text
        QString toolTip;
    };
    static Cell text(const QString& text, const QString& toolTip = {});
    static Cell bytes(double bytes, const QString& toolTip = {});
    static Cell count(double perForward, const QString& toolTip = {}); // "2", "2.5"

    // `headers`: each column's title and its tooltip.
    MemoryTableModel(std::vector<std::pair<QString, QString>> headers, QObject* parent);
    // The first `columns` headers, and the rows (each of `columns` cells).
    void setRows(std::vector<std::vector<Cell>> rows, int columns);

private:
    std::vector<std::pair<QString, QString>> m_headers;
    int m_columns;
    std::vector<std::vector<Cell>> m_rows;
};

// What was alive at the forward's peak, by the module and function call that allocated it (MemorySummary::aliveAtPeak).
class PeakHoldersModel : public MemoryTableModel {
    Q_OBJECT
public:
    enum Column { ModuleColumn, FunctionColumn, BytesColumn, AllocationsColumn, ShareColumn, ColumnCount };
    explicit PeakHoldersModel(QObject* parent = nullptr);
    void setSummary(const kforge::MemorySummary* memory); // null or not recorded: no rows
};

// Per function and provider (MemorySummary::functions), per forward; with a baseline, the Δ of the bytes allocated
// against the baseline's calls of the same function (matched by name: the provider differs), for as many calls.
class FunctionMemoryModel : public MemoryTableModel {
    Q_OBJECT
public:
    enum Column {
        FunctionColumn,
        ProviderColumn,
        CallsColumn,
        AllocatedColumn,
        AllocationsColumn,
        PeakInCallColumn,
        DeltaColumn, // only with a baseline that recorded memory
        ColumnCount
    };
    explicit FunctionMemoryModel(QObject* parent = nullptr);
    // `shown`: the run shown; `baseline`: its baseline when the plan of a pair is shown, else null.
    void setSummaries(const kforge::MemorySummary* shown, const kforge::MemorySummary* baseline);
    bool hasDelta() const { return m_hasDelta; }

private:
    bool m_hasDelta = false;
};

// A CUDA run's driver-level allocations per module (MemorySummary::driverModules): empty on the CPU.
class DriverMemoryModel : public MemoryTableModel {
    Q_OBJECT
public:
    enum Column { ModuleColumn, AllocatedColumn, FreedColumn, AllocationsColumn, PeakColumn, ColumnCount };
    explicit DriverMemoryModel(QObject* parent = nullptr);
    void setSummary(const kforge::MemorySummary* memory);
};

} // namespace kforge::ui
