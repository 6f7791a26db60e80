// SPDX-License-Identifier: Apache-2.0
#include "application/english_plurals.h"

#include <QCoreApplication>

#include <cstring>

namespace kforge::ui {

QString EnglishPlurals::translate(const char*, const char* sourceText, const char*, int n) const
{
    if (n < 0 || !sourceText || !std::strstr(sourceText, "(s)"))
        return {}; // not counted, or no plural marked: the source text
    QString text = QString::fromUtf8(sourceText);
    text.replace(QStringLiteral("(s)"), n == 1 ? QString() : QStringLiteral("s"));
    return text;
}

void installEnglishPlurals()
{
    auto* app = QCoreApplication::instance();
    if (!app || app->findChild<EnglishPlurals*>())
        return;
    QCoreApplication::installTranslator(new EnglishPlurals(app));
}

} // namespace kforge::ui
