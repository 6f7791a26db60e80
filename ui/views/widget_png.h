// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QString>

class QWidget;

namespace kforge::ui {

// Renders `widget` to a PNG file (File > Export … as PNG). False with `error` ("Cannot write PATH: why") on
// failure.
bool saveWidgetPng(QWidget& widget, const QString& path, QString* error);

} // namespace kforge::ui
