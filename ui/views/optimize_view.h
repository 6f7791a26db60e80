// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Optimize dock: the candidate table (CandidateTableModel, sortable), filling as make_plan judges each function,
// with the actions that start and stop it, apply its plan and benchmark the plan end to end.
#include <QWidget>

class QAction;
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

private:
    QWidget* m_buttons;
    QLabel* m_status;
    QTableView* m_table;
};

} // namespace kforge::ui
