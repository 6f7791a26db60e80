// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "item_models/semantic_colors.h"

#include <optional>

class QWidget;

namespace kforge::ui {

// Shows a widget's text in a meaning's colour (from its palette, so both themes read), optionally bold; no meaning
// gives it back the normal text. What style sheets with literal colours did before.
void setSemanticText(QWidget* widget, std::optional<Semantic> meaning, bool bold = false);

} // namespace kforge::ui
