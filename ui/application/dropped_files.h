// SPDX-License-Identifier: Apache-2.0
#pragma once
// Files dropped on the main window: what a drop holds (one model, or one or two saved profiles) and, for a .kfprof
// dropped while a run is shown, whether to compare with that run or open the file. Refusing happens before anything
// is asked or read, so a wrong drop never costs the results or the plan on screen.
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>

#include <functional>

class QPoint;
class QWidget;

namespace kforge::ui {

struct DroppedFiles {
    QString model;        // a TorchScript model or a torch.export package, by its suffix
    QStringList profiles; // .kfprof files, one or two, in the order dropped
    QString refusal;      // non-empty: nothing of the drop is opened, and this line says why
};

// The local files among `urls` sorted for opening; an empty value when there is no local file (the drag is refused).
DroppedFiles sortDroppedFiles(const QList<QUrl>& urls);

enum class DropChoice { Compare, Open, Cancel };
// Given the dropped .kfprof's file name and where it was dropped (global coordinates): compare or open it.
using DropChooser = std::function<DropChoice(const QString& fileName, const QPoint& globalPos)>;

// The desktop's chooser: a menu at the drop, "Compare With Shown Run" first (the reason to drop a second profile on a
// run) and the default, then "Open"; Escape or a click elsewhere cancels.
DropChooser dropMenu(QWidget* parent);

} // namespace kforge::ui
