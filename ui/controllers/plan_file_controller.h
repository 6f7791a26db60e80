// SPDX-License-Identifier: Apache-2.0
#pragma once
// Plan files for the main window, beside the PlanDocument being edited (as Hotspot's main window hands its pages
// their own work): new, open, save, save as, AITune export, their file dialogs, and the unsaved-changes prompt
// that comes before anything that would replace the plan.
#include <QObject>
#include <QString>

#include <functional>

class QWidget;

namespace kforge {
class ModelSession;
}

namespace kforge::ui {

class PlanDocument;

class PlanFileController : public QObject {
    Q_OBJECT

public:
    enum class UnsavedChanges { Ask, Save, Discard, Cancel };
    Q_ENUM(UnsavedChanges)

    // `dialogParent` owns the dialogs; `model` is the model loaded (null: none): it names a new file's suggested name
    // and is recorded in the plans saved.
    PlanFileController(PlanDocument* document, QWidget* dialogParent,
                       std::function<const kforge::ModelSession*()> model);

    // Off under test and in batch runs: errors are only signalled (error()).
    void setModalErrors(bool modal) { m_modalErrors = modal; }
    // Off for batch runs: the last plan folder is not remembered.
    void setPersistent(bool persistent) { m_persistent = persistent; }
    UnsavedChanges unsavedChanges() const { return m_unsavedChanges; }
    void setUnsavedChanges(UnsavedChanges choice) { m_unsavedChanges = choice; }

    // True when the plan may be replaced: unmodified, saved, or its edits discarded; false when the user cancelled
    // or saving failed.
    bool keepEdits();
    bool newPlan();
    bool open(const QString& path);
    bool save(); // asks for a file name when the plan has none
    bool saveAs(const QString& path);
    bool exportAitune(const QString& path);

    // The File menu's dialogs.
    void chooseToOpen();
    bool chooseToSave();
    void chooseToExport();

Q_SIGNALS:
    void statusMessage(const QString& message);
    void error(const QString& message); // one line: a plan file could not be read or written
    void unsavedChangesPrompted();
    void fileUsed(const QString& path); // a plan file opened or saved: for the recent files

private:
    void report(const QString& title, const QString& message);

    PlanDocument* m_document;
    QWidget* m_dialogParent;
    std::function<const kforge::ModelSession*()> m_model;
    bool m_modalErrors = true;
    bool m_persistent = true;
    UnsavedChanges m_unsavedChanges = UnsavedChanges::Ask;
};

} // namespace kforge::ui
