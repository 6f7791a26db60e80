// SPDX-License-Identifier: Apache-2.0
#include "optimize_view.h"

#include "item_models/candidate_table_model.h"

#include <QAction>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace kforge::ui {

OptimizeView::OptimizeView(CandidateTableModel* model, QWidget* parent)
    : QWidget(parent), m_buttons(new QWidget(this)), m_status(new QLabel(this)), m_table(new QTableView(this))
{
    auto* sorted = new QSortFilterProxyModel(this);
    sorted->setSourceModel(model);
    sorted->setSortRole(CandidateTableModel::SortRole);
    m_table->setModel(sorted);
    m_table->setObjectName(QStringLiteral("candidateTable"));
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder); // arrival order until a header is clicked
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents); // few rows: cheap
    // Why a candidate was dropped is the point of the table ("against the original, no detectable change: 0.97x
    // (95% interval ...)"): its column takes the room left and wraps, rows grow to show all of it.
    m_table->horizontalHeader()->setSectionResizeMode(CandidateTableModel::Result, QHeaderView::Stretch);
    m_table->setWordWrap(true);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_status->setObjectName(QStringLiteral("optimizeStatus"));
    m_status->setText(tr("Optimize tries every provider and generator for the model's functions on the samples "
                         "one forward produces, and keeps the fastest correct one where it beats the original."));
    m_status->setWordWrap(true);

    auto* buttons = new QHBoxLayout(m_buttons);
    buttons->setContentsMargins(0, 0, 0, 0);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_buttons);
    layout->addWidget(m_status);
    layout->addWidget(m_table, 1);
}

void OptimizeView::setActions(const QList<QAction*>& actions)
{
    auto* layout = static_cast<QHBoxLayout*>(m_buttons->layout());
    for (QAction* action : actions) {
        auto* button = new QToolButton(m_buttons);
        button->setDefaultAction(action);
        button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
        layout->addWidget(button);
    }
    layout->addStretch(1);
}

void OptimizeView::setStatus(const QString& text) { m_status->setText(text); }
QString OptimizeView::status() const { return m_status->text(); }

} // namespace kforge::ui
