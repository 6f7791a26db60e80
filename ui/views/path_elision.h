// SPDX-License-Identifier: Apache-2.0
#pragma once
// Cells too narrow for their text: a module path keeps its end ("…layers.1.mlp.act_fn": the part that tells it from
// its siblings), any other text its beginning ("scaled_dot_p…", which says what it is). One delegate for the tables
// and trees that show module paths beside other columns.
#include <QList>
#include <QStyledItemDelegate>

namespace kforge::ui {

class PathElisionDelegate : public QStyledItemDelegate {
public:
    // `pathColumns`: the columns that hold module paths or names.
    PathElisionDelegate(QList<int> pathColumns, QObject* parent);

    Qt::TextElideMode elisionOf(int column) const;

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override;

private:
    QList<int> m_pathColumns;
};

} // namespace kforge::ui
