// SPDX-License-Identifier: Apache-2.0
#include "widget_png.h"

#include <QImageWriter>
#include <QWidget>

namespace kforge::ui {

bool saveWidgetPng(QWidget& widget, const QString& path, QString* error)
{
    QImageWriter writer(path, "png");
    if (writer.write(widget.grab().toImage()))
        return true;
    if (error)
        *error = QWidget::tr("Cannot write %1: %2").arg(path, writer.errorString());
    return false;
}

} // namespace kforge::ui
