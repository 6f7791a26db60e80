// SPDX-License-Identifier: Apache-2.0
#include "share_bar_delegate.h"

#include <QPainter>

#include <algorithm>

namespace kforge::ui {

ShareBarDelegate::ShareBarDelegate(int role, QObject* parent) : QStyledItemDelegate(parent), m_role(role) {}

void ShareBarDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const
{
    const QVariant share = index.data(m_role);
    if (share.isValid()) {
        QRect bar = option.rect.adjusted(2, 3, -2, -3);
        bar.setWidth(int(bar.width() * std::clamp(share.toDouble(), 0.0, 1.0)));
        QColor colour = option.palette.color(QPalette::Highlight);
        colour.setAlpha(90); // the text stays readable over it, selected or not
        painter->fillRect(bar, colour);
    }
    QStyledItemDelegate::paint(painter, option, index);
}

} // namespace kforge::ui
