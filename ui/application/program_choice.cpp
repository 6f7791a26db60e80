// SPDX-License-Identifier: Apache-2.0
#include "application/program_choice.h"

#include <kforge/exported_program.h>

#include <QFileInfo>
#include <QInputDialog>

#include <exception>

namespace kforge::ui {

std::optional<QString> programToOpen(const QString& source, const ProgramChooser& choose)
{
    const std::string path = source.toStdString();
    if (!kforge::isExportedProgramPath(path) || !QFileInfo(source).isFile())
        return QString();
    QStringList programs;
    try {
        for (const std::string& name : kforge::exportedProgramNames(path))
            programs << QString::fromStdString(name);
    } catch (const std::exception&) {
        return QString(); // not a readable package: opening it reports why
    }
    if (programs.size() < 2)
        return QString();
    return choose(source, programs);
}

ProgramChooser programDialog(QWidget* parent)
{
    return [parent](const QString& file, const QStringList& programs) -> std::optional<QString> {
        int preselected = 0;
        for (const QString& usual : {QStringLiteral("model"), QStringLiteral("forward")})
            if (programs.contains(usual)) {
                preselected = int(programs.indexOf(usual));
                break;
            }
        bool ok = false;
        const QString chosen = QInputDialog::getItem(
            parent, QObject::tr("Choose an Exported Program"),
            QObject::tr("%1 holds %2 exported programs. Open:").arg(QFileInfo(file).fileName()).arg(programs.size()),
            programs, preselected, false, &ok);
        if (!ok)
            return std::nullopt;
        return chosen;
    };
}

} // namespace kforge::ui
