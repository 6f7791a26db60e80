// SPDX-License-Identifier: Apache-2.0
#include "inputs_view.h"

#include <QAction>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace kforge::ui {

InputsView::InputsView(QWidget* parent)
    : QWidget(parent), m_table(new QTableWidget(0, 2, this)), m_source(new QLabel(this))
{
    setObjectName(QStringLiteral("inputsView"));
    m_table->setObjectName(QStringLiteral("inputsTable"));
    m_table->setHorizontalHeaderLabels({tr("Argument"), tr("Tensor")});
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_source->setObjectName(QStringLiteral("inputsSource"));
    m_source->setWordWrap(true);
    m_source->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_source);
    layout->addWidget(m_table, 1);
    setInputs({}, {}, {});
}

void InputsView::setActions(QAction* setSpecs, QAction* loadFile)
{
    m_setSpecs = setSpecs;
    m_loadFile = loadFile;
    auto* buttons = new QHBoxLayout;
    for (QAction* action : {setSpecs, loadFile}) {
        auto* button = new QToolButton(this);
        button->setDefaultAction(action);
        button->setToolButtonStyle(Qt::ToolButtonTextOnly);
        buttons->addWidget(button);
    }
    buttons->addStretch(1);
    static_cast<QVBoxLayout*>(layout())->addLayout(buttons);
}

void InputsView::setInputs(const QStringList& arguments, const QStringList& descriptions, const QString& source)
{
    const int rows = int(std::max(arguments.size(), descriptions.size()));
    m_table->setRowCount(rows);
    for (int row = 0; row < rows; ++row) {
        const QString name = row < arguments.size() ? arguments[row] : tr("(argument %1)").arg(row + 1);
        const QString tensor = row < descriptions.size() ? descriptions[row] : tr("(not set)");
        m_table->setItem(row, 0, new QTableWidgetItem(name));
        m_table->setItem(row, 1, new QTableWidgetItem(tensor));
    }
    m_source->setText(source.isEmpty() ? tr("No inputs yet: set dtype[shape] specs or load a torch.save file.")
                                       : source);
}

QString InputsView::source() const { return m_source->text(); }

} // namespace kforge::ui
