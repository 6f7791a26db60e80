// SPDX-License-Identifier: Apache-2.0
#include "application/program_choice.h"

#include <kforge/exported_program.h>

#include <QFileInfo>
#include <QInputDialog>
#include <QStringList>

#include <exception>

namespace kforge::ui {

QString programChoiceLabel(const ProgramChoice& choice)
{
    const QString program = choice.program.isEmpty() ? QObject::tr("(default)") : choice.program;
    return choice.compiled ? QObject::tr("%1: AOTInductor compiled code (as deployed; no plans apply)").arg(program)
                           : QObject::tr("%1: exported program (plans apply)").arg(program);
}

std::optional<ProgramChoice> programToOpen(const QString& source, const ProgramChooser& choose)
{
    const std::string path = source.toStdString();
    if (!kforge::isExportedProgramPath(path) || !QFileInfo(source).isFile())
        return ProgramChoice{};
    QList<ProgramChoice> offered;
    try {
        const std::vector<std::string> programs = kforge::exportedProgramNames(path);
        const bool compiledBeside = !kforge::compiledModelNamesBeside(path).empty();
        for (const bool compiled : {false, true})
            for (const std::string& name : programs)
                if (!compiled || compiledBeside)
                    offered.append({QString::fromStdString(name), compiled});
    } catch (const std::exception&) {
        return ProgramChoice{}; // not a readable package: opening it reports why
    }
    if (offered.size() < 2)
        return ProgramChoice{};
    return choose(source, offered);
}

ProgramChooser programDialog(QWidget* parent)
{
    return [parent](const QString& file, const QList<ProgramChoice>& offered) -> std::optional<ProgramChoice> {
        QStringList labels;
        for (const ProgramChoice& choice : offered)
            labels << programChoiceLabel(choice);
        int preselected = 0;
        for (const QString& usual : {QStringLiteral("model"), QStringLiteral("forward")})
            if (const qsizetype at = offered.indexOf(ProgramChoice{usual, false}); at >= 0) {
                preselected = int(at);
                break;
            }
        bool ok = false;
        const QString chosen = QInputDialog::getItem(
            parent, QObject::tr("Open a torch.export Package"),
            QObject::tr("%1 offers %2 ways to run it. Open:").arg(QFileInfo(file).fileName()).arg(offered.size()),
            labels, preselected, false, &ok);
        if (!ok)
            return std::nullopt;
        return offered.value(labels.indexOf(chosen));
    };
}

} // namespace kforge::ui
