// SPDX-License-Identifier: Apache-2.0
#pragma once
// What to open of a torch.export package (.pt2): which exported program, when it holds several (torch.export.save
// writes one, "model"; packages made with package_pt2 may hold more), and whether to run the AOTInductor compiled code
// it holds beside them, as a C++ deployment of the package would.
#include <QList>
#include <QString>

#include <functional>
#include <optional>

class QWidget;

namespace kforge::ui {

struct ProgramChoice {
    QString program;       // "": the engine's default (the only program, else "model" or "forward")
    bool compiled = false; // run the compiled code beside the program (OpenOptions::compiled): no plans apply
    bool operator==(const ProgramChoice&) const = default;
};

// How the choice reads in a list: "model: exported program (plans apply)".
QString programChoiceLabel(const ProgramChoice& choice);

// Given the file and what it offers (two or more), the choice, or nullopt to open nothing.
using ProgramChooser =
    std::function<std::optional<ProgramChoice>(const QString& file, const QList<ProgramChoice>& offered)>;

// What to open `source` with: the default for anything but a package offering a choice (several programs, or compiled
// code beside its program: each program run node by node, then each compiled); else what `choose` says, nullopt if
// cancelled. An unreadable package gets the default: opening it reports why.
std::optional<ProgramChoice> programToOpen(const QString& source, const ProgramChooser& choose);

// The chooser of the desktop app: a list to pick from, the engine's default ("model", else "forward", run node by
// node) preselected.
ProgramChooser programDialog(QWidget* parent);

} // namespace kforge::ui
