// SPDX-License-Identifier: Apache-2.0
#include "application/dropped_files.h"

#include <QAction>
#include <QFileInfo>
#include <QMenu>
#include <QPoint>

namespace kforge::ui {
namespace {

// File › Open's model suffixes (model_opening.cpp). A model of another name still opens through File › Open; a drop
// only guesses from the name, so that a text file or a folder is refused instead of failing to load as a model.
bool isModelFile(const QFileInfo& file)
{
    static const QStringList suffixes{QStringLiteral("pt"), QStringLiteral("pth"), QStringLiteral("ts"),
                                      QStringLiteral("zip"), QStringLiteral("pt2")};
    return suffixes.contains(file.suffix(), Qt::CaseInsensitive);
}

} // namespace

DroppedFiles sortDroppedFiles(const QList<QUrl>& urls)
{
    DroppedFiles dropped;
    QStringList models;
    QStringList others;
    for (const QUrl& url : urls) {
        if (!url.isLocalFile())
            continue;
        const QString path = url.toLocalFile();
        const QFileInfo file(path);
        if (file.isFile() && file.suffix().compare(QLatin1String("kfprof"), Qt::CaseInsensitive) == 0)
            dropped.profiles << path;
        else if (file.isFile() && isModelFile(file))
            models << path;
        else
            others << file.fileName();
    }
    if (!others.isEmpty()) {
        dropped.refusal = QObject::tr("Cannot open %1 by dropping it: drop a model (.pt, .pth, .ts, .zip, .pt2) or a "
                                      "saved profile (.kfprof)")
                              .arg(others.join(QStringLiteral(", ")));
    } else if (const bool pair = models.isEmpty() && dropped.profiles.size() == 2;
               models.size() + dropped.profiles.size() > 1 && !pair) {
        dropped.refusal = QObject::tr("Cannot open %1 files dropped at once: drop one model, one saved profile "
                                      "(.kfprof), or two saved profiles to compare")
                              .arg(models.size() + dropped.profiles.size());
    } else if (!models.isEmpty()) {
        dropped.model = models.front();
    }
    if (!dropped.refusal.isEmpty())
        dropped.profiles.clear();
    return dropped;
}

DropChooser dropMenu(QWidget* parent)
{
    return [parent](const QString& fileName, const QPoint& globalPos) {
        QMenu menu(parent);
        QAction* compare = menu.addAction(QObject::tr("&Compare With Shown Run"));
        compare->setStatusTip(QObject::tr("The run shown (A) against %1 (B), in a report of the pair").arg(fileName));
        QAction* open = menu.addAction(QObject::tr("&Open %1").arg(fileName));
        menu.addSeparator();
        menu.addAction(QObject::tr("Cancel"));
        menu.setDefaultAction(compare);
        menu.setActiveAction(compare);
        const QAction* chosen = menu.exec(globalPos, compare);
        return chosen == compare ? DropChoice::Compare : chosen == open ? DropChoice::Open : DropChoice::Cancel;
    };
}

} // namespace kforge::ui
