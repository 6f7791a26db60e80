// SPDX-License-Identifier: Apache-2.0
#include "semantic_text.h"

#include <QWidget>

namespace kforge::ui {

void setSemanticText(QWidget* widget, std::optional<Semantic> meaning, bool bold)
{
    QPalette palette = widget->parentWidget() ? widget->parentWidget()->palette() : currentPalette();
    if (meaning) {
        const QColor text = semanticTextColor(*meaning, palette);
        palette.setColor(QPalette::WindowText, text);
        palette.setColor(QPalette::Text, text);
    }
    widget->setPalette(palette);
    QFont font = widget->font();
    font.setBold(meaning && bold);
    widget->setFont(font);
}

} // namespace kforge::ui
