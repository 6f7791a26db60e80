// SPDX-License-Identifier: Apache-2.0
#include "function_stacks_view.h"

#include "views/semantic_text.h"
#include "item_models/function_stacks_model.h"

#include <kforge/functions.h>

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMap>
#include <QMenu>
#include <QPushButton>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

namespace kforge::ui {

FunctionStacksView::FunctionStacksView(FunctionStacksModel* model, QWidget* parent)
    : QWidget(parent), m_model(model), m_view(new QTreeView(this)), m_caption(new QLabel(this)),
      m_leftoverLabel(new QLabel(this)), m_unwind(new QPushButton(tr("Unwind"), this)),
      m_breakpointMenu(new QMenu(this))
{
    setObjectName(QStringLiteral("functionStacksView"));
    m_view->setObjectName(QStringLiteral("functionStacksTree"));
    m_view->setModel(model);
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setAllColumnsShowFocus(true);
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    m_view->header()->setStretchLastSection(true);

    m_caption->setObjectName(QStringLiteral("stacksCaption"));
    m_caption->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred); // never squeezes the buttons
    m_caption->setText(tr("No forward has run yet."));
    m_leftoverLabel->setObjectName(QStringLiteral("leftoverLabel"));
    setSemanticText(m_leftoverLabel, Semantic::Leftover, true);
    m_leftoverLabel->hide();
    m_unwind->setObjectName(QStringLiteral("unwindButton"));
    m_unwind->setIcon(QIcon(QStringLiteral(":/icons/unwind.svg")));
    m_unwind->setToolTip(tr("Deactivate the runtime: restores every function a leftover patch left replaced"));
    m_unwind->setEnabled(false);

    m_breakpointMenu->setObjectName(QStringLiteral("functionBreakpointMenu"));
    connect(m_breakpointMenu, &QMenu::aboutToShow, this, &FunctionStacksView::rebuildBreakpointMenu);
    rebuildBreakpointMenu();
    auto* breakpoints = new QToolButton(this);
    breakpoints->setObjectName(QStringLiteral("functionBreakpointsButton"));
    breakpoints->setText(tr("Break on"));
    breakpoints->setIcon(QIcon(QStringLiteral(":/icons/breakpoint.svg")));
    breakpoints->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    breakpoints->setToolTip(tr("Pause a forward when it calls a function"));
    breakpoints->setPopupMode(QToolButton::InstantPopup);
    breakpoints->setMenu(m_breakpointMenu);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(4, 4, 4, 0);
    bar->addWidget(m_caption, 1);
    bar->addWidget(m_leftoverLabel);
    bar->addWidget(breakpoints);
    bar->addWidget(m_unwind);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(bar);
    layout->addWidget(m_view, 1);

    connect(m_unwind, &QPushButton::clicked, this, &FunctionStacksView::unwindRequested);
    connect(model, &QAbstractItemModel::modelReset, this, &FunctionStacksView::modelReset);
    connect(m_view, &QWidget::customContextMenuRequested, this, &FunctionStacksView::showContextMenu);
    modelReset();
}

QTreeView* FunctionStacksView::view() const { return m_view; }

QPushButton* FunctionStacksView::unwindButton() const { return m_unwind; }

QMenu* FunctionStacksView::breakpointMenu() const { return m_breakpointMenu; }

void FunctionStacksView::rebuildBreakpointMenu()
{
    m_breakpointMenu->clear();
    const QSet<QString> set = m_model->functionBreakpoints();
    // The catalog has dozens of functions: one submenu per category (activation, normalization, ...).
    QMap<QString, QMenu*> categories;
    for (const kforge::Function f : kforge::allFunctions()) {
        const kforge::FunctionInfo& info = kforge::functionInfo(f);
        const QString function = QString::fromUtf8(info.name.data(), qsizetype(info.name.size()));
        const QString category = QString::fromUtf8(info.category.data(), qsizetype(info.category.size()));
        QMenu*& submenu = categories[category];
        if (!submenu)
            submenu = m_breakpointMenu->addMenu(category);
        QAction* action = submenu->addAction(function);
        action->setCheckable(true);
        action->setChecked(set.contains(function));
        action->setData(function);
        connect(action, &QAction::triggered, this, [this, function] { Q_EMIT functionBreakpointToggled(function); });
    }
}

void FunctionStacksView::setCaption(const QString& caption)
{
    m_caption->setText(caption);
    m_caption->setToolTip(caption);
}

QString FunctionStacksView::caption() const { return m_caption->text(); }

void FunctionStacksView::modelReset()
{
    // Stacks are a few rows deep: showing them all open is what the user wants after every refresh.
    m_view->expandAll();
    const int leftovers = int(m_model->leftovers().size());
    m_unwind->setEnabled(leftovers > 0);
    m_leftoverLabel->setVisible(leftovers > 0);
    m_leftoverLabel->setText(tr("%n leftover patch(es)", nullptr, leftovers));
    for (int column = 0; column < FunctionStacksModel::DetailColumn; ++column)
        m_view->resizeColumnToContents(column);
}

void FunctionStacksView::showContextMenu(const QPoint& pos)
{
    const QModelIndex index = m_view->indexAt(pos);
    if (!index.isValid())
        return;
    QMenu* menu = createContextMenu(index, this);
    if (menu->isEmpty()) {
        delete menu;
        return;
    }
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(m_view->viewport()->mapToGlobal(pos));
}

QMenu* FunctionStacksView::createContextMenu(const QModelIndex& index, QWidget* parent)
{
    auto* menu = new QMenu(parent);
    menu->setObjectName(QStringLiteral("stacksContextMenu"));
    const QString function = index.data(FunctionStacksModel::FunctionRole).toString();
    if (!function.isEmpty()) {
        QAction* breakpoint =
            menu->addAction(QIcon(QStringLiteral(":/icons/breakpoint.svg")), tr("Break on Calls of %1").arg(function));
        breakpoint->setObjectName(QStringLiteral("toggleFunctionBreakpoint"));
        breakpoint->setCheckable(true);
        breakpoint->setChecked(index.data(FunctionStacksModel::BreakpointRole).toBool());
        connect(breakpoint, &QAction::triggered, this,
                [this, function] { Q_EMIT functionBreakpointToggled(function); });
    }
    if (index.data(FunctionStacksModel::LeftoverRole).toBool() ||
        m_model->kindOf(index) == FunctionStacksModel::RowKind::LeftoverGroup) {
        QAction* unwind = menu->addAction(QIcon(QStringLiteral(":/icons/unwind.svg")), tr("Unwind Leftovers"));
        unwind->setObjectName(QStringLiteral("unwindLeftovers"));
        connect(unwind, &QAction::triggered, this, &FunctionStacksView::unwindRequested);
    }
    return menu;
}

} // namespace kforge::ui
