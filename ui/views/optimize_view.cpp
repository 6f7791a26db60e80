// SPDX-License-Identifier: Apache-2.0
#include "optimize_view.h"

#include "item_models/candidate_table_model.h"

#include <QAction>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace kforge::ui {
namespace {
const QString kPeakBudgetKey = QStringLiteral("optimize/maxPeakIncreasePercent"); // absent or negative: none
} // namespace

OptimizeView::OptimizeView(CandidateTableModel* model, QWidget* parent)
    : QWidget(parent), m_buttons(new QWidget(this)), m_peakBudgetBox(new QCheckBox(tr("Peak memory budget:"), this)),
      m_peakBudget(new QDoubleSpinBox(this)), m_status(new QLabel(this)), m_table(new QTableView(this))
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

    m_peakBudgetBox->setObjectName(QStringLiteral("peakBudgetBox"));
    m_peakBudgetBox->setToolTip(
        tr("Reject a candidate whose extra memory could raise the forward's peak beyond this much above the model's "
           "own, and drop entries of the plan made while its measured peak is beyond it (kforge optimize "
           "--max-peak-increase)"));
    m_peakBudget->setObjectName(QStringLiteral("peakBudget"));
    m_peakBudget->setRange(0, 10000);
    m_peakBudget->setDecimals(1);
    m_peakBudget->setSingleStep(5);
    m_peakBudget->setPrefix(QStringLiteral("+"));
    m_peakBudget->setSuffix(tr(" % above the model's"));
    const double stored = QSettings().value(kPeakBudgetKey, -1.0).toDouble();
    m_peakBudgetBox->setChecked(stored >= 0);
    m_peakBudget->setValue(stored >= 0 ? stored : 10.0);
    m_peakBudget->setEnabled(m_peakBudgetBox->isChecked());
    connect(m_peakBudgetBox, &QCheckBox::toggled, this, [this](bool on) {
        m_peakBudget->setEnabled(on);
        savePeakBudget();
    });
    connect(m_peakBudget, &QDoubleSpinBox::valueChanged, this, [this] { savePeakBudget(); });
    auto* budget = new QHBoxLayout;
    budget->addWidget(m_peakBudgetBox);
    budget->addWidget(m_peakBudget);
    budget->addStretch(1);

    auto* buttons = new QHBoxLayout(m_buttons);
    buttons->setContentsMargins(0, 0, 0, 0);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_buttons);
    layout->addLayout(budget);
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

std::optional<double> OptimizeView::peakBudgetPercent() const
{
    return m_peakBudgetBox->isChecked() ? std::optional<double>(m_peakBudget->value()) : std::nullopt;
}

void OptimizeView::setPeakBudgetPercent(std::optional<double> percent)
{
    if (percent)
        m_peakBudget->setValue(*percent);
    m_peakBudgetBox->setChecked(percent.has_value());
}

void OptimizeView::savePeakBudget() const
{
    if (m_remembering)
        QSettings().setValue(kPeakBudgetKey, m_peakBudgetBox->isChecked() ? m_peakBudget->value() : -1.0);
}

void OptimizeView::setStatus(const QString& text) { m_status->setText(text); }
QString OptimizeView::status() const { return m_status->text(); }

} // namespace kforge::ui
