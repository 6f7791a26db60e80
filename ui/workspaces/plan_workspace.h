// SPDX-License-Identifier: Apache-2.0
#pragma once
// The plan workspace: the plan editor (the Plan dock), the plan files in the File menu (new, open, save, save as,
// export in AITune's form) and undo/redo in the Edit menu. Entries come from the module tree (Add provider, drops)
// and the optimizer; the editor validates them against the session and its device. A plan measured on another
// machine gets a banner: re-validate its flagged entries here, or accept them.
#include "workspaces/workspace_context.h"

#include <kforge/provider_catalog.h>

#include <QObject>
#include <QString>

#include <vector>

class QMenu;
class QToolBar;

namespace kforge {
class ModelSession;
}

namespace kforge::ui {

class PlanEditorView;
class PlanFileController;
class ProvenanceBanner;
class RevalidateController;

class PlanWorkspace : public QObject {
    Q_OBJECT
public:
    // Creates the Plan dock: context.bottomDock is null until then, and is this dock afterwards.
    explicit PlanWorkspace(WorkspaceContext& context);

    void addFileActions(QMenu* fileMenu);
    void addEditActions(QMenu* editMenu);
    void addToolBarActions(QToolBar* toolBar); // save
    void addUndoToolBarActions(QToolBar* toolBar);

    PlanFileController* files() const { return m_files; }
    PlanEditorView* editor() const { return m_editor; }
    // Adds an entry (undoable) and shows it in the plan editor.
    void addEntry(const QString& scope, const QString& function, const QString& providerType);
    // Validation follows the session and its device (nullptr while a new one loads).
    void setSession(const kforge::ModelSession* session);
    void setCatalog(const std::vector<kforge::ProviderCatalogEntry>& catalog);
    void setDefaultScope(const QString& path);

    // A plan measured elsewhere (its provenance differs from this machine): the banner above the editor names the
    // flagged entries; revalidate() checks them on the session (the banner's Re-validate), disabling those that fail.
    ProvenanceBanner* provenanceBanner() const { return m_banner; }
    bool revalidate(QString* error = nullptr);

Q_SIGNALS:
    void revalidated(bool ok, const QString& message);

private:
    void createActions();
    void connectRevalidation();
    void refreshProvenance();

    WorkspaceContext m_context;
    PlanFileController* m_files;
    PlanEditorView* m_editor;
    ProvenanceBanner* m_banner;
    RevalidateController* m_revalidator;
    QString m_device = QStringLiteral("cpu");
    bool m_provenanceAccepted = false;
};

} // namespace kforge::ui
