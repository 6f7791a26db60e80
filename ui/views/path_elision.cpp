// SPDX-License-Identifier: Apache-2.0
#include "views/path_elision.h"

#include <utility>

namespace kforge::ui {

PathElisionDelegate::PathElisionDelegate(QList<int> pathColumns, QObject* parent)
    : QStyledItemDelegate(parent), m_pathColumns(std::move(pathColumns))
{
}

Qt::TextElideMode PathElisionDelegate::elisionOf(int column) const
{
    return m_pathColumns.contains(column) ? Qt::ElideLeft : Qt::ElideRight;
}

void PathElisionDelegate::initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const
{
    QStyledItemDelegate::initStyleOption(option, index);
    option->textElideMode = elisionOf(index.column());
}

} // namespace kforge::ui
