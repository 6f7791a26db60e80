#pragma once
#include <QColor>
#include <QPalette>

namespace kforge::ui {

// The colours that carry meaning in the views, derived from the palette so that light and dark themes both read:
// a hue for the meaning, the palette's base lightness for the contrast.
enum class Semantic { Faster, Slower, Module, Function, Op };
QColor semanticColor(Semantic meaning, const QPalette& palette);
// Between Faster (speedup >= 2) and Slower (<= 0.5) through the palette's mid tone at 1.0, for differential views.
QColor speedupColor(double speedup, const QPalette& palette);
// Text that reads on `fill`.
QColor textColorOn(const QColor& fill);

} // namespace kforge::ui
