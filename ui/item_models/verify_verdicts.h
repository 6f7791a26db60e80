// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the desktop app shows of a verification (kforge::VerifyReport) on the plan editor's entries and the module
// tree: each enabled entry's verdict, and each module's Error cell (text, tooltip and how strongly it diverges).
#include <kforge/plan.h>
#include <kforge/verify.h>

#include <QString>

#include <vector>

namespace kforge::ui {

struct EntryVerdict {
    int entry = -1;          // a row of the plan that was verified
    QString text;            // "outputs agree", "in effect where the outputs diverge first: blocks.1.mlp (call 1)"
    bool implicated = false; // in effect at the first diverging module: the suspect
};

// One verdict per enabled entry of `plan`, the plan the report was made with (entry indexes are its rows).
std::vector<EntryVerdict> entryVerdicts(const kforge::Plan& plan, const kforge::VerifyReport& report);

enum class ModuleErrorKind {
    Agrees,       // every output compared passes the thresholds
    DivergesHere, // its inputs agree and its outputs do not: a divergence is made here (the first one, or another)
    Diverged,     // its outputs diverge, but so did its inputs: an earlier module's divergence flowing through
};

// Where a module stands to the first diverging module the verification named.
enum class FirstDivergence { Here, Inside, Elsewhere }; // it is the module, holds it, or neither (or none named)

ModuleErrorKind moduleErrorKind(const kforge::ModuleAgreement& module);
QString moduleErrorText(const kforge::ModuleAgreement& module, FirstDivergence first);
QString moduleErrorToolTip(const kforge::ModuleAgreement& module, FirstDivergence first);

} // namespace kforge::ui
