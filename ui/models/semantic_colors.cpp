#include "semantic_colors.h"

#include <algorithm>
#include <cmath>

namespace kforge::ui {
namespace {

bool darkTheme(const QPalette& palette) { return palette.color(QPalette::Base).lightness() < 128; }

QColor fromHue(int hue, const QPalette& palette)
{
    // Saturated enough to tell apart, light on a light theme and deep on a dark one.
    return darkTheme(palette) ? QColor::fromHsl(hue, 110, 85) : QColor::fromHsl(hue, 150, 185);
}

} // namespace

QColor semanticColor(Semantic meaning, const QPalette& palette)
{
    switch (meaning) {
    case Semantic::Faster:
        return fromHue(130, palette);
    case Semantic::Slower:
        return fromHue(0, palette);
    case Semantic::Module:
        return fromHue(210, palette);
    case Semantic::Function:
        return fromHue(35, palette);
    case Semantic::Op:
        return fromHue(280, palette);
    }
    return palette.color(QPalette::Mid);
}

QColor speedupColor(double speedup, const QPalette& palette)
{
    if (!(speedup > 0))
        return palette.color(QPalette::Mid);
    // log2: 2x faster is +1, 2x slower is -1; blend from the mid tone towards the end colour.
    const double t = std::clamp(std::log2(speedup), -1.0, 1.0);
    const QColor end = semanticColor(t >= 0 ? Semantic::Faster : Semantic::Slower, palette);
    const QColor mid = palette.color(QPalette::Button);
    const double a = std::abs(t);
    return QColor::fromRgbF(float(mid.redF() + (end.redF() - mid.redF()) * a),
                            float(mid.greenF() + (end.greenF() - mid.greenF()) * a),
                            float(mid.blueF() + (end.blueF() - mid.blueF()) * a));
}

QColor textColorOn(const QColor& fill) { return fill.lightness() > 140 ? QColor(Qt::black) : QColor(Qt::white); }

} // namespace kforge::ui
