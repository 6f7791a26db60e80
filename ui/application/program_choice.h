// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which exported program of a torch.export package (.pt2) to open, when it holds several (torch.export.save writes
// one, "model"; packages made with package_pt2 may hold more).
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

class QWidget;

namespace kforge::ui {

// Given the file and its programs (two or more), the program to open, or nullopt to open nothing.
using ProgramChooser = std::function<std::optional<QString>(const QString& file, const QStringList& programs)>;

// The program to open `source` with: "" for anything but a package with several programs (the engine's default
// then applies, or its error names what is wrong with the file); else what `choose` says, nullopt if cancelled.
std::optional<QString> programToOpen(const QString& source, const ProgramChooser& choose);

// The chooser of the desktop app: a list to pick from, the engine's default ("model", else "forward") preselected.
ProgramChooser programDialog(QWidget* parent);

} // namespace kforge::ui
