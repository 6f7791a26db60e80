// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/plan.h>

#include <QObject>
#include <QString>

class QUndoStack;

namespace kforge {
class ModelSession;
}

namespace kforge::ui {

class PlanModel;

// The plan being edited: its entries (PlanModel), the file it came from and an undo history in which every
// edit is one command. "Modified" means the undo stack has left the state last saved or opened.
class PlanDocument : public QObject {
    Q_OBJECT
    Q_PROPERTY(bool modified READ isModified NOTIFY modifiedChanged)
    Q_PROPERTY(QString filePath READ filePath NOTIFY filePathChanged)

public:
    explicit PlanDocument(QObject* parent = nullptr);
    ~PlanDocument() override;

    PlanModel* model() const;
    QUndoStack* undoStack() const;
    const kforge::Plan& plan() const;
    QString filePath() const; // "" for a plan never saved
    bool isModified() const;

    // These replace the plan and clear the history.
    void newPlan();
    void setPlan(kforge::Plan plan, const QString& filePath = {});
    // Read and write plan files (docs/design/plan-format.md); `error` gets one line on failure.
    bool load(const QString& path, QString* error = nullptr);
    // `model`, when given, is recorded as the model the plan was made for (name and file digest, as `kforge plan new
    // --model` records it), so that opening it on another model says so.
    bool save(const QString& path, QString* error = nullptr, const kforge::ModelSession* model = nullptr);
    // The AITune dialect; refuses (with the reasons) plans it cannot express. Does not change the file path.
    bool exportAitune(const QString& path, QString* error = nullptr) const;

    // Undoable edits. Rows outside the plan are ignored; `row` -1 appends.
    void addEntry(const kforge::PlanEntry& entry, int row = -1);
    void removeEntry(int row);
    void moveEntry(int from, int to);
    void editEntry(int row, const kforge::PlanEntry& entry, const QString& description);
    void setEntryEnabled(int row, bool enabled);
    // Replaces every entry at once, as one undoable step (Optimize › Apply as Plan); the file path stays.
    void replaceEntries(const kforge::Plan& plan, const QString& description);

Q_SIGNALS:
    void planChanged();
    void planReplaced(); // a new or opened plan took the place of the one edited (setPlan)
    void modifiedChanged(bool modified);
    void filePathChanged(const QString& path);

private:
    void setFilePath(const QString& path);

    PlanModel* m_model;
    QUndoStack* m_undo;
    QString m_filePath;
};

} // namespace kforge::ui
