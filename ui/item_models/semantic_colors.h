// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QColor>
#include <QPalette>

#include <cstdint>

namespace kforge::ui {

// The one place colours that carry meaning come from, derived from the palette so that light and dark themes both
// read: a hue per meaning, lightness from the theme. Views and models use these instead of literal colours.
// The application's palette, or a light default where there is no QGuiApplication (model tests run without one).
QPalette currentPalette();

enum class Semantic {
    Faster,     // a plan made it faster
    Slower,     // a plan made it slower
    Leftover,   // a patch left behind, an unwind, a declined call: the runtime did less than the plan says
    Stale,      // a graph capture whose providers differ from the plan
    Error,      // a failure, a plan problem
    Muted,      // disabled, not applied
    Hooked,     // a plan scope module
    InScope,    // below a plan scope
    Inside,     // on the path of a paused forward
    Breakpoint, // a breakpoint marker
    Module,     // flame graph frame kinds
    Function,
    Op,
};
// A fill for backgrounds, icons and frames.
QColor semanticColor(Semantic meaning, const QPalette& palette = currentPalette());
// Text in that meaning, readable on the palette's base colour.
QColor semanticTextColor(Semantic meaning, const QPalette& palette = currentPalette());
// A translucent tint of the fill, for a row's background over whatever base the theme has.
QColor semanticTint(Semantic meaning, const QPalette& palette = currentPalette());
// Between Faster (speedup >= 2) and Slower (<= 0.5) through the palette's button tone at 1.0, for differential views.
QColor speedupColor(double speedup, const QPalette& palette = currentPalette());
// A colour that stands for a name (a kernel, an op) rather than a meaning: the hue from `hash` (stable across runs),
// soft when `muted`, lightness from the theme.
QColor identityColor(std::uint32_t hash, bool muted, const QPalette& palette = currentPalette());
// Text that reads on `fill`.
QColor textColorOn(const QColor& fill);

} // namespace kforge::ui
