// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QStyledItemDelegate>

namespace kforge::ui {

// Paints a cell's share (a double in [0, 1] under `role`) as a bar behind its text, in the palette's highlight
// colour: the module tree's Share column, as profilers draw inclusive time.
class ShareBarDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    explicit ShareBarDelegate(int role, QObject* parent = nullptr);
    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;

private:
    int m_role;
};

} // namespace kforge::ui
