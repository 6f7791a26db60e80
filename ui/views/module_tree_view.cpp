// SPDX-License-Identifier: Apache-2.0
#include "module_tree_view.h"

#include "item_models/module_tree_model.h"
#include "views/path_elision.h"

#include <QHeaderView>
#include <QSettings>
#include <QStyle>
#include <QVariantMap>

#include <algorithm>
#include <functional>

namespace kforge::ui {
namespace {

// Column widths the user set by dragging a header edge, by column title (stable across builds that add columns).
const QString kWidthsKey = QStringLiteral("moduleTree/columnWidths");

} // namespace

ModuleTreeView::ModuleTreeView(QWidget* parent) : QTreeView(parent)
{
    setObjectName(QStringLiteral("moduleTreeView"));
    setUniformRowHeights(true); // models have thousands of modules; rows all look alike
    setAlternatingRowColors(true);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setAllColumnsShowFocus(true);
    // A name too long for its column keeps its end: "…self_attn" says more than "self_a…".
    setTextElideMode(Qt::ElideLeft);
    m_elision = new PathElisionDelegate({ModuleTreeModel::ModuleColumn}, this);
    setItemDelegate(m_elision);
    header()->setStretchLastSection(true);
    connect(header(), &QHeaderView::sectionResized, this, [this](int column, int, int width) {
        if (!m_fitting && m_remembering && width > 0)
            rememberWidth(column, width);
    });
    // Providers dragged from the plan editor's catalog drop onto a module row (ModuleTreeModel decides);
    // overwrite mode makes every drop an "on the row" drop, never one between rows.
    setAcceptDrops(true);
    setDragDropMode(QAbstractItemView::DropOnly);
    setDragDropOverwriteMode(true);
    setDropIndicatorShown(true);
}

int ModuleTreeView::contentWidth(int column) const
{
    const QAbstractItemModel* m = model();
    if (!m)
        return 0;
    const int rootIndent = rootIsDecorated() ? indentation() : 0;
    int widest = header()->sectionSizeHint(column);
    const std::function<void(const QModelIndex&, int)> visit = [&](const QModelIndex& parent, int level) {
        for (int row = 0; row < m->rowCount(parent); ++row) {
            const QModelIndex cell = m->index(row, column, parent);
            const int indent = column == header()->logicalIndex(0) ? rootIndent + level * indentation() : 0;
            widest = std::max(widest, indent + sizeHintForIndex(cell).width());
            visit(m->index(row, 0, parent), level + 1);
        }
    };
    visit({}, 0);
    return widest;
}

Qt::TextElideMode ModuleTreeView::cellElision(int column) const { return m_elision->elisionOf(column); }

int ModuleTreeView::widestHookStateWidth() const
{
    int widest = 0;
    for (const QString& text : ModuleTreeModel::hookStateTexts())
        widest = std::max(widest, fontMetrics().horizontalAdvance(text));
    // The cell's icon, and the style's margins around it and the text (as QStyledItemDelegate lays them out).
    const int margin = style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, this) + 1;
    return widest + style()->pixelMetric(QStyle::PM_SmallIconSize, nullptr, this) + 6 * margin;
}

void ModuleTreeView::expandAndFit(int depth)
{
    if (depth < 0)
        expandAll();
    else
        expandToDepth(depth);
    m_fitting = true;
    for (int column = 0; column <= ModuleTreeModel::FunctionsColumn; ++column)
        if (!isColumnHidden(column))
            setColumnWidth(column, std::min(contentWidth(column), kMaxFittedWidth));
    // A model opens before any plan: the Hook column is empty then, and "hooked" must fit once an entry is added.
    if (!isColumnHidden(ModuleTreeModel::HookColumn))
        setColumnWidth(ModuleTreeModel::HookColumn,
                       std::max(columnWidth(ModuleTreeModel::HookColumn), widestHookStateWidth()));
    const QVariantMap widths = m_remembering ? QSettings().value(kWidthsKey).toMap() : QVariantMap();
    for (int column = 0; column < header()->count(); ++column) {
        const QString title = model() ? model()->headerData(column, Qt::Horizontal).toString() : QString();
        if (widths.contains(title))
            setColumnWidth(column, widths.value(title).toInt());
    }
    m_fitting = false;
}

void ModuleTreeView::rememberWidth(int column, int width)
{
    if (!model() || column == header()->count() - 1)
        return; // the last section stretches to the view: its width is the window's, not a choice
    QSettings settings;
    QVariantMap widths = settings.value(kWidthsKey).toMap();
    widths.insert(model()->headerData(column, Qt::Horizontal).toString(), width);
    settings.setValue(kWidthsKey, widths);
}

} // namespace kforge::ui
