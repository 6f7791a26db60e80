// SPDX-License-Identifier: Apache-2.0
#include "verify_verdicts.h"

#include "format.h"

#include <kforge/module_path.h>

#include <QCoreApplication>
#include <QLocale>
#include <QStringList>

#include <algorithm>

namespace kforge::ui {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("kforge::ui", text); }

QString where(const kforge::ModuleDivergence& d)
{
    return tr("%1 (call %2)").arg(formatModulePath(d.module)).arg(d.call + 1);
}

QString scientific(double value) { return QLocale().toString(value, 'g', 3); }

} // namespace

std::vector<EntryVerdict> entryVerdicts(const kforge::Plan& plan, const kforge::VerifyReport& report)
{
    std::vector<EntryVerdict> out;
    for (size_t i = 0; i < plan.entries.size(); ++i) {
        if (!plan.entries[i].enabled)
            continue;
        EntryVerdict v;
        v.entry = int(i);
        if (report.passed) {
            v.text = tr("outputs agree");
        } else if (report.inconclusive) {
            v.text = tr("inconclusive: an output moves between forwards without the plan");
        } else if (!report.divergence) {
            v.text = tr("outputs differ; no module named");
        } else if (std::find(report.divergence->entries.begin(), report.divergence->entries.end(), int(i)) !=
                   report.divergence->entries.end()) {
            v.text = tr("in effect where the outputs diverge first: %1").arg(where(*report.divergence));
            v.implicated = true;
        } else {
            v.text = tr("not in effect at the first divergence (%1)").arg(where(*report.divergence));
        }
        out.push_back(std::move(v));
    }
    return out;
}

ModuleErrorKind moduleErrorKind(const kforge::ModuleAgreement& m)
{
    if (m.outputsAgree)
        return ModuleErrorKind::Agrees;
    return m.inputsAgree ? ModuleErrorKind::DivergesHere : ModuleErrorKind::Diverged;
}

QString moduleErrorText(const kforge::ModuleAgreement& m, FirstDivergence first)
{
    switch (moduleErrorKind(m)) {
    case ModuleErrorKind::Agrees:
        return m.maxAbsError > 0 ? tr("agrees (%1)").arg(scientific(m.maxAbsError)) : tr("agrees");
    case ModuleErrorKind::DivergesHere:
        return (first == FirstDivergence::Here     ? tr("first divergence: %1")
                : first == FirstDivergence::Inside ? tr("diverges inside: %1")
                                                   : tr("diverges here: %1"))
            .arg(scientific(m.maxAbsError));
    case ModuleErrorKind::Diverged:
        break;
    }
    return tr("diverged: %1").arg(scientific(m.maxAbsError));
}

QString moduleErrorToolTip(const kforge::ModuleAgreement& m, FirstDivergence first)
{
    QStringList lines;
    switch (moduleErrorKind(m)) {
    case ModuleErrorKind::Agrees:
        lines << tr("With the plan, this module's outputs agree with the baseline's (kforge verify's thresholds).");
        break;
    case ModuleErrorKind::DivergesHere:
        lines << (first == FirstDivergence::Here
                      ? tr("The first module, in execution order, whose inputs agree with the baseline's and whose "
                           "outputs do not: the plan's divergence is made here.")
                  : first == FirstDivergence::Inside
                      ? tr("Its inputs agree with the baseline's and its outputs do not: the first diverging module "
                           "is inside it.")
                      : tr("Its inputs agree with the baseline's and its outputs do not."));
        break;
    case ModuleErrorKind::Diverged:
        lines << tr("Its outputs diverge, but its inputs already did: a divergence made earlier flows through it.");
        break;
    }
    lines << tr("Calls compared: %1").arg(m.calls);
    lines << tr("Max abs error of its outputs: %1").arg(scientific(m.maxAbsError));
    lines << tr("Lowest cosine similarity: %1").arg(QLocale().toString(m.minCosine, 'f', 6));
    if (m.newNonFinite > 0)
        lines << tr("New NaN/Inf values: %1").arg(formatCount(m.newNonFinite));
    return lines.join(QLatin1Char('\n'));
}

} // namespace kforge::ui
