// SPDX-License-Identifier: Apache-2.0
// Semantic colours in light and dark palettes: text in each meaning reads on the palette's base with a contrast of
// at least 4.5:1 (WCAG 2 AA for normal text), and textColorOn() picks readable text for every fill.
#include "item_models/semantic_colors.h"

#include <QTest>

#include <cmath>

using namespace kforge::ui;

namespace {

double channel(double c)
{
    c /= 255.0;
    return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}
double luminance(const QColor& c)
{
    return 0.2126 * channel(c.red()) + 0.7152 * channel(c.green()) + 0.0722 * channel(c.blue());
}
double contrast(const QColor& a, const QColor& b)
{
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QPalette palette(bool dark)
{
    QPalette p(dark ? QColor(53, 53, 53) : QColor(239, 239, 239), dark ? QColor(53, 53, 53) : QColor(239, 239, 239));
    p.setColor(QPalette::Base, dark ? QColor(30, 30, 30) : Qt::white);
    p.setColor(QPalette::Text, dark ? Qt::white : Qt::black);
    return p;
}

const Semantic kMeanings[] = {Semantic::Faster,     Semantic::Slower, Semantic::Leftover, Semantic::Stale,
                              Semantic::Error,      Semantic::Hooked, Semantic::InScope,  Semantic::Inside,
                              Semantic::Breakpoint, Semantic::Module, Semantic::Function, Semantic::Op};

} // namespace

class TestSemanticColors : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void textReadsOnTheBaseOfBothThemes()
    {
        for (const bool dark : {false, true}) {
            const QPalette p = palette(dark);
            for (const Semantic meaning : kMeanings) {
                const double ratio = contrast(semanticTextColor(meaning, p), p.color(QPalette::Base));
                QVERIFY2(ratio >= 4.5, qPrintable(QStringLiteral("%1 theme, meaning %2: contrast %3")
                                                      .arg(dark ? QStringLiteral("dark") : QStringLiteral("light"))
                                                      .arg(int(meaning))
                                                      .arg(ratio)));
            }
        }
    }

    void textOnEveryFillReads()
    {
        for (const bool dark : {false, true}) {
            const QPalette p = palette(dark);
            for (const Semantic meaning : kMeanings) {
                const QColor fill = semanticColor(meaning, p);
                const double ratio = contrast(textColorOn(fill), fill);
                QVERIFY2(ratio >= 4.5, qPrintable(QStringLiteral("fill of meaning %1 (%2 theme): contrast %3")
                                                      .arg(int(meaning))
                                                      .arg(dark ? QStringLiteral("dark") : QStringLiteral("light"))
                                                      .arg(ratio)));
            }
            for (const double speedup : {0.25, 0.5, 0.8, 1.0, 1.25, 2.0, 4.0}) {
                const QColor fill = speedupColor(speedup, p);
                QVERIFY2(contrast(textColorOn(fill), fill) >= 4.5, qPrintable(QString::number(speedup)));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestSemanticColors)
#include "tst_semantic_colors.moc"
