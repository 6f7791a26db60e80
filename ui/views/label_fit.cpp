// SPDX-License-Identifier: Apache-2.0
#include "views/label_fit.h"

#include <QFontMetrics>
#include <QStringList>

#include <algorithm>

namespace kforge::ui {

QString readableElision(const QString& text, const QFontMetrics& metrics, int width)
{
    if (metrics.horizontalAdvance(text) <= width)
        return text;
    const QString cut = metrics.elidedText(text, Qt::ElideRight, width);
    const qsizetype kept = cut.size() - 1; // without the ellipsis
    return kept >= std::min<qsizetype>(kMinLabelChars, text.size()) && kept < text.size() ? cut : QString();
}

QString fittedLabel(const QStringList& candidates, const QFontMetrics& metrics, int width)
{
    for (const QString& text : candidates)
        if (metrics.horizontalAdvance(text) <= width)
            return text;
    return candidates.isEmpty() ? QString() : readableElision(candidates.last(), metrics, width);
}

} // namespace kforge::ui
