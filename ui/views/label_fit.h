// SPDX-License-Identifier: Apache-2.0
#pragma once
// Labels inside boxes that may be too narrow for them (flame graph frames, timeline items): a label is drawn whole,
// or cut with an ellipsis while enough of it stays to be read, or not at all. "c…", "(n…" and a lone "…" said
// nothing and made a wide graph look like noise.
#include <QString>

class QFontMetrics;

namespace kforge::ui {

// Characters of a label that must stay before its ellipsis; a shorter label is drawn whole or not at all.
inline constexpr int kMinLabelChars = 3;

// `text` when it fits `width` pixels; else `text` cut on the right with an ellipsis when that keeps kMinLabelChars
// of it (all of a shorter text); else "" (draw nothing).
QString readableElision(const QString& text, const QFontMetrics& metrics, int width);

// The first of `candidates` (the fullest first) that fits `width` whole; else the last, cut as readableElision
// cuts it; "" when none can be read.
QString fittedLabel(const QStringList& candidates, const QFontMetrics& metrics, int width);

} // namespace kforge::ui
