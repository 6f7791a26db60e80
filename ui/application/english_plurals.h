// SPDX-License-Identifier: Apache-2.0
#pragma once
// The English plural of the app's counted texts: tr("%n iteration(s)", nullptr, n) reads "1 iteration" and
// "3 iterations", not "1 iteration(s)". Qt Linguist's numerus forms do this string by string in a translation file;
// every counted text here marks its plural the same way, "(s)" after the word, so one rule covers them all.
#include <QTranslator>

namespace kforge::ui {

class EnglishPlurals : public QTranslator {
    Q_OBJECT
public:
    using QTranslator::QTranslator;

    bool isEmpty() const override { return false; }
    // A text with "(s)" and a count: "(s)" dropped for one, "s" otherwise; anything else is left to the source text.
    QString translate(const char* context, const char* sourceText, const char* disambiguation = nullptr,
                      int n = -1) const override;
};

// Installs one EnglishPlurals on the application (the studio's main does, before any window).
void installEnglishPlurals();

} // namespace kforge::ui
