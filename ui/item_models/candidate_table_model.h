// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Optimize table: every candidate make_plan judged (kforge/optimizer.h), a row each, in the order they arrive:
// function, scope, candidate, generated or provided, correct, speedup, and kept or why not.
#include <kforge/optimizer.h>

#include <QAbstractTableModel>

#include <vector>

namespace kforge::ui {

class CandidateTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Function, Scope, Candidate, Source, Correct, Speedup, Result, ColumnCount };
    enum Role { KeptRole = Qt::UserRole + 1, SortRole };

    explicit CandidateTableModel(QObject* parent = nullptr);

    void clear();
    // One function's candidates; `function` says whether make_plan chose per module (FunctionReport::granularity).
    void append(const std::vector<kforge::CandidateReport>& candidates, const kforge::FunctionReport& function = {});
    const kforge::CandidateReport& candidate(int row) const { return m_rows.at(size_t(row)); }
    // The run's final word on each row: make_plan drops entries after their function's rows arrived (the plan's
    // verification, the peak budget), which changes those candidates' kept and why. Rows are matched by place,
    // function and candidate; the others stay as they are.
    void settle(const std::vector<kforge::CandidateReport>& final);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<kforge::CandidateReport> m_rows;
    std::vector<kforge::FunctionReport> m_functions; // per row: its function's report
};

} // namespace kforge::ui
