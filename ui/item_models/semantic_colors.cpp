// SPDX-License-Identifier: Apache-2.0
#include "semantic_colors.h"

#include <QGuiApplication>

#include <algorithm>
#include <cmath>

namespace kforge::ui {
namespace {

bool darkTheme(const QPalette& palette) { return palette.color(QPalette::Base).lightness() < 128; }

int hueOf(Semantic meaning)
{
    switch (meaning) {
    case Semantic::Faster:
    case Semantic::Inside:
        return 130;
    case Semantic::Slower:
    case Semantic::Error:
    case Semantic::Breakpoint:
        return 0;
    case Semantic::Leftover:
        return 24;
    case Semantic::Stale:
    case Semantic::Hooked:
        return 40;
    case Semantic::InScope:
    case Semantic::Module:
        return 210;
    case Semantic::Function:
        return 35;
    case Semantic::Op:
        return 280;
    case Semantic::Muted:
        break;
    }
    return -1; // achromatic
}

} // namespace

QPalette currentPalette()
{
    if (qobject_cast<QGuiApplication*>(QCoreApplication::instance()))
        return QGuiApplication::palette();
    QPalette light(QColor(239, 239, 239), QColor(239, 239, 239));
    light.setColor(QPalette::Base, Qt::white);
    light.setColor(QPalette::Text, Qt::black);
    return light;
}

QColor semanticColor(Semantic meaning, const QPalette& palette)
{
    const int hue = hueOf(meaning);
    if (hue < 0)
        return palette.color(QPalette::Mid);
    // Frames and icons: light and soft on a light theme, deep on a dark one; markers (hooks, breakpoints) stronger.
    const bool marker = meaning == Semantic::Hooked || meaning == Semantic::InScope || meaning == Semantic::Inside ||
                        meaning == Semantic::Breakpoint;
    if (darkTheme(palette))
        return QColor::fromHsl(hue, marker ? 170 : 110, marker ? 120 : 85);
    return QColor::fromHsl(hue, marker ? 190 : 150, marker ? 110 : 185);
}

QColor semanticTextColor(Semantic meaning, const QPalette& palette)
{
    const int hue = hueOf(meaning);
    if (hue < 0)
        return palette.color(QPalette::Disabled, QPalette::Text);
    // Lightness chosen for a contrast of at least 4.5:1 on the theme's base for every hue (tst_semantic_colors).
    return darkTheme(palette) ? QColor::fromHsl(hue, 200, 165) : QColor::fromHsl(hue, 200, 68);
}

QColor semanticTint(Semantic meaning, const QPalette& palette)
{
    QColor tint = semanticTextColor(meaning, palette);
    tint.setAlpha(56);
    return tint;
}

QColor speedupColor(double speedup, const QPalette& palette)
{
    if (!(speedup > 0))
        return palette.color(QPalette::Mid);
    // log2: 2x faster is +1, 2x slower is -1; blend from the button tone towards the end colour.
    const double t = std::clamp(std::log2(speedup), -1.0, 1.0);
    const QColor end = semanticColor(t >= 0 ? Semantic::Faster : Semantic::Slower, palette);
    const QColor mid = palette.color(QPalette::Button);
    const double a = std::abs(t);
    return QColor::fromRgbF(float(mid.redF() + (end.redF() - mid.redF()) * a),
                            float(mid.greenF() + (end.greenF() - mid.greenF()) * a),
                            float(mid.blueF() + (end.blueF() - mid.blueF()) * a));
}

QColor identityColor(std::uint32_t hash, bool muted, const QPalette& palette)
{
    const bool dark = darkTheme(palette);
    return QColor::fromHsl(int(hash % 360), muted ? 50 : dark ? 120 : 160, dark ? 75 : 190);
}

QColor textColorOn(const QColor& fill)
{
    // Black or white, whichever contrasts more (WCAG relative luminance): at least 4.58:1 on any fill, where a
    // lightness threshold leaves mid-tone blues and reds near 3:1.
    const auto channel = [](int value) {
        const double c = value / 255.0;
        return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
    };
    const double luminance =
        0.2126 * channel(fill.red()) + 0.7152 * channel(fill.green()) + 0.0722 * channel(fill.blue());
    const double onBlack = (luminance + 0.05) / 0.05, onWhite = 1.05 / (luminance + 0.05);
    return onBlack >= onWhite ? QColor(Qt::black) : QColor(Qt::white);
}

} // namespace kforge::ui
