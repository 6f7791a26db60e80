// SPDX-License-Identifier: Apache-2.0
#include "controllers/plan_file_controller.h"

#include <kforge/model_session.h>

#include "item_models/plan_document.h"

#include <kforge/plan.h>

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QSettings>

namespace kforge::ui {
namespace {

const QString kPlanFileFilter = QStringLiteral("KForge plans (*.kfplan.json *.json);;All files (*)");
const QString kAituneFileFilter = QStringLiteral("AITune plans (*.json);;All files (*)");
const QString kLastFolderKey = QStringLiteral("lastPlanDirectory");

} // namespace

PlanFileController::PlanFileController(PlanDocument* document, QWidget* dialogParent,
                                       std::function<const kforge::ModelSession*()> model)
    : QObject(dialogParent), m_document(document), m_dialogParent(dialogParent), m_model(std::move(model))
{
}

bool PlanFileController::keepEdits()
{
    if (!m_document->isModified())
        return true;
    Q_EMIT unsavedChangesPrompted();
    UnsavedChanges choice = m_unsavedChanges;
    if (choice == UnsavedChanges::Ask) {
        const QString name =
            m_document->filePath().isEmpty() ? tr("The plan") : QFileInfo(m_document->filePath()).fileName();
        const auto answer =
            QMessageBox::warning(m_dialogParent, tr("Unsaved Plan"), tr("%1 has changes that are not saved.").arg(name),
                                 QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
        choice = answer == QMessageBox::Save      ? UnsavedChanges::Save
                 : answer == QMessageBox::Discard ? UnsavedChanges::Discard
                                                  : UnsavedChanges::Cancel;
    }
    switch (choice) {
    case UnsavedChanges::Save:
        return save();
    case UnsavedChanges::Discard:
        return true;
    default:
        return false;
    }
}

bool PlanFileController::newPlan()
{
    if (!keepEdits())
        return false;
    m_document->newPlan();
    return true;
}

bool PlanFileController::open(const QString& path)
{
    if (!keepEdits())
        return false;
    QString message;
    if (!m_document->load(path, &message)) {
        report(tr("Cannot Open Plan"), message);
        return false;
    }
    Q_EMIT statusMessage(tr("Opened plan %1: %n entries", nullptr, int(m_document->plan().entries.size()))
                             .arg(QFileInfo(path).fileName()));
    Q_EMIT fileUsed(QFileInfo(path).absoluteFilePath());
    return true;
}

bool PlanFileController::save()
{
    if (m_document->filePath().isEmpty())
        return chooseToSave();
    return saveAs(m_document->filePath());
}

bool PlanFileController::saveAs(const QString& path)
{
    QString message;
    if (!m_document->save(path, &message, m_model ? m_model() : nullptr)) {
        report(tr("Cannot Save Plan"), message);
        return false;
    }
    Q_EMIT statusMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)));
    Q_EMIT fileUsed(QFileInfo(path).absoluteFilePath());
    return true;
}

bool PlanFileController::exportAitune(const QString& path)
{
    QString message;
    if (!m_document->exportAitune(path, &message)) {
        report(tr("Cannot Export AITune Plan"), message);
        return false;
    }
    Q_EMIT statusMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)));
    return true;
}

void PlanFileController::chooseToOpen()
{
    QSettings settings;
    const QString file = QFileDialog::getOpenFileName(m_dialogParent, tr("Open Plan"),
                                                      settings.value(kLastFolderKey).toString(), kPlanFileFilter);
    if (file.isEmpty())
        return;
    if (m_persistent)
        settings.setValue(kLastFolderKey, QFileInfo(file).absolutePath());
    open(file);
}

bool PlanFileController::chooseToSave()
{
    QSettings settings;
    QString suggestion = m_document->filePath();
    if (suggestion.isEmpty()) {
        const kforge::ModelSession* session = m_model ? m_model() : nullptr;
        const QString model = session ? QString::fromStdString(session->displayName()) : QString();
        suggestion = QDir(settings.value(kLastFolderKey).toString())
                         .filePath(QFileInfo(model.isEmpty() ? tr("plan") : model).completeBaseName() +
                                   QStringLiteral(".kfplan.json"));
    }
    const QString file = QFileDialog::getSaveFileName(m_dialogParent, tr("Save Plan"), suggestion, kPlanFileFilter);
    if (file.isEmpty())
        return false;
    if (m_persistent)
        settings.setValue(kLastFolderKey, QFileInfo(file).absolutePath());
    return saveAs(file);
}

void PlanFileController::chooseToExport()
{
    const QString file =
        QFileDialog::getSaveFileName(m_dialogParent, tr("Export AITune Plan"), QString(), kAituneFileFilter);
    if (!file.isEmpty())
        exportAitune(file);
}

void PlanFileController::report(const QString& title, const QString& message)
{
    Q_EMIT statusMessage(message);
    Q_EMIT error(message);
    if (m_modalErrors)
        QMessageBox::critical(m_dialogParent, title, message);
}

} // namespace kforge::ui
