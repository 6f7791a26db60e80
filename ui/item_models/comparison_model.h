// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "item_models/duration_format.h"

#include <kforge/profiling.h>

#include <QAbstractTableModel>

#include <optional>

namespace kforge::ui {

// A baseline run against a plan run: median time per iteration before and after, per function or per module
// (switchable), the speedup of each with its speed verdict, and a last "Total" row that also carries the output
// error. Only rows whose verdict is faster (green) or slower (red) are tinted: a change within the run's noise is
// not coloured, whatever its size (the tooltip gives the interval and what the run could detect). Translucent
// tints and mid-tone text keep both readable on light and dark palettes.
class ComparisonModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { KeyColumn, BaselineColumn, PlanColumn, SpeedupColumn, ChangeColumn, ErrorColumn, ColumnCount };
    Q_ENUM(Column)
    enum class Grouping { Function, Module };
    Q_ENUM(Grouping)
    enum Role {
        SortRole = Qt::UserRole + 1, // double for numeric columns, QString otherwise
        VerdictRole,                 // int: Verdict
        IsTotalRole,                 // bool
    };
    enum Verdict { Unchanged = 0, Faster = 1, Slower = -1 };

    explicit ComparisonModel(QObject* parent = nullptr);

    void setComparison(std::optional<kforge::Comparison> comparison);
    const std::optional<kforge::Comparison>& comparison() const { return m_comparison; }
    void setGrouping(Grouping grouping);
    Grouping grouping() const { return m_grouping; }

    // A row's colour: its speed verdict; Unchanged for "no detectable change" and for rows on one side only.
    static Verdict verdict(const kforge::ComparisonRow& row);
    // "max |Δ| 1.2e-06, max rel. 3.4e-05", "not comparable", "" without a comparison.
    QString outputErrorText() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    const std::vector<kforge::ComparisonRow>& rows() const;
    // The Baseline and Plan columns' unit, one for both, from the larger total (timeUnitFor).
    TimeUnit unit() const;

    std::optional<kforge::Comparison> m_comparison;
    Grouping m_grouping = Grouping::Function;
};

} // namespace kforge::ui
