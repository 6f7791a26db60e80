// SPDX-License-Identifier: Apache-2.0
#include "module_tree_view.h"

#include "item_models/module_tree_model.h"

#include <QHeaderView>

namespace kforge::ui {

ModuleTreeView::ModuleTreeView(QWidget* parent) : QTreeView(parent)
{
    setObjectName(QStringLiteral("moduleTreeView"));
    setUniformRowHeights(true); // models have thousands of modules; rows all look alike
    setAlternatingRowColors(true);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setAllColumnsShowFocus(true);
    header()->setStretchLastSection(true);
    // Providers dragged from the plan editor's catalog drop onto a module row (ModuleTreeModel decides);
    // overwrite mode makes every drop an "on the row" drop, never one between rows.
    setAcceptDrops(true);
    setDragDropMode(QAbstractItemView::DropOnly);
    setDragDropOverwriteMode(true);
    setDropIndicatorShown(true);
}

void ModuleTreeView::expandAndFit(int depth)
{
    if (depth < 0)
        expandAll();
    else
        expandToDepth(depth);
    for (int column = 0; column < ModuleTreeModel::FunctionsColumn; ++column)
        resizeColumnToContents(column);
}

} // namespace kforge::ui
