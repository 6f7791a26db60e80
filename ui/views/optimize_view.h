// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Optimize dock: the candidate table (CandidateTableModel, sortable), filling as make_plan judges each function,
// with the actions that start and stop it, apply its plan and benchmark the plan end to end, and the run's budget on
// the forward's peak memory.
#include <QWidget>

#include <optional>

class QAction;
class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QTableView;

namespace kforge::ui {

class CandidateTableModel;

class OptimizeView : public QWidget {
    Q_OBJECT
public:
    explicit OptimizeView(CandidateTableModel* model, QWidget* parent = nullptr);
    // Buttons above the table, in this order.
    void setActions(const QList<QAction*>& actions);
    void setStatus(const QString& text);
    QString status() const;
    QTableView* table() const { return m_table; }

    // The next run's budget on the forward's peak memory, percent above the model's own (`kforge optimize
    // --max-peak-increase`): none unless its box is ticked. Kept between sessions while remembering.
    std::optional<double> peakBudgetPercent() const;
    void setPeakBudgetPercent(std::optional<double> percent);
    void setRemembering(bool remembering) { m_remembering = remembering; }
    QCheckBox* peakBudgetBox() const { return m_peakBudgetBox; }
    QDoubleSpinBox* peakBudgetSpin() const { return m_peakBudget; }

private:
    void savePeakBudget() const;

    QWidget* m_buttons;
    QCheckBox* m_peakBudgetBox;
    QDoubleSpinBox* m_peakBudget;
    bool m_remembering = true;
    QLabel* m_status;
    QTableView* m_table;
};

} // namespace kforge::ui
