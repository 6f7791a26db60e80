// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "item_models/profile_results.h"

#include <QWidget>

#include <memory>

class QAbstractItemModel;
class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace kforge::ui {

class DriverMemoryModel;
class FunctionMemoryModel;
class PeakHoldersModel;

// The Profile page's Memory tab, where the memory of the run shown went (a run profiled with Record memory): the
// forward's peak and where it was reached, what was alive at it, the memory per function and provider (the plan's
// against its baseline's), and a CUDA run's device memory through the driver, each table sortable. A run without
// memory shows how to record it instead.
class MemoryPage : public QWidget {
    Q_OBJECT
public:
    explicit MemoryPage(QWidget* parent = nullptr);

    // The memory of the results' plan run (`showPlan`) or baseline; the plan's per-function table has a Δ column
    // against the baseline when the results hold both and both recorded memory.
    void setResults(const ResultsPtr& results, bool showPlan);

    QLabel* summaryLabel() const { return m_summary; }
    QLabel* placeholder() const { return m_placeholder; }
    QWidget* tables() const { return m_tables; } // hidden while the placeholder shows
    PeakHoldersModel* holdersModel() const { return m_holders; }
    FunctionMemoryModel* functionsModel() const { return m_functions; }
    DriverMemoryModel* driverModel() const { return m_driver; }
    QTableView* holdersTable() const { return m_holdersTable; }
    QTableView* functionsTable() const { return m_functionsTable; }
    QTableView* driverTable() const { return m_driverTable; }
    QLabel* functionsHeading() const { return m_functionsHeading; }
    QLabel* driverHeading() const { return m_driverHeading; }
    QWidget* driverSection() const { return m_driverSection; } // shown for runs with driver records

private:
    // `shown`: null without a run; `baseline`: the baseline's, for the plan of a pair.
    void showMemory(const RunViews* shown, const RunViews* baseline);
    QWidget* addSection(QWidget* parent, QLabel* heading, QTableView* table, QAbstractItemModel* model, int sortColumn);

    std::shared_ptr<const RunViews> m_shownViews, m_baselineViews; // those shown, to skip a repeat
    QLabel* m_placeholder;
    QWidget* m_tables;
    QLabel* m_summary;
    PeakHoldersModel* m_holders;
    FunctionMemoryModel* m_functions;
    DriverMemoryModel* m_driver;
    QTableView* m_holdersTable;
    QTableView* m_functionsTable;
    QTableView* m_driverTable;
    QLabel* m_functionsHeading;
    QLabel* m_driverHeading;
    QWidget* m_driverSection;
};

} // namespace kforge::ui
