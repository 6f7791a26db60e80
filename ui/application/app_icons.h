// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QIcon>
#include <QString>

namespace kforge::ui {

// The application's icons (resources/icons/NAME.svg, compiled into the binary).
inline QIcon icon(const char* name) { return QIcon(QStringLiteral(":/icons/%1.svg").arg(QLatin1String(name))); }

} // namespace kforge::ui
