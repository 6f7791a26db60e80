// SPDX-License-Identifier: Apache-2.0
#include "workspaces/plan_workspace.h"

#include "application/app_icons.h"
#include "application/status_reporter.h"
#include "application/view_registry.h"
#include "controllers/plan_file_controller.h"
#include "controllers/revalidate_controller.h"
#include "controllers/session_owner.h"
#include "item_models/module_scope.h"
#include "item_models/plan_document.h"
#include "item_models/plan_model.h"
#include "views/plan_editor_view.h"
#include "views/provenance_banner.h"
#include "window_actions.h"

#include <kforge/model_session.h>
#include <kforge/plan.h>

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QMenu>
#include <QToolBar>
#include <QUndoStack>
#include <QVBoxLayout>

namespace kforge::ui {

PlanWorkspace::PlanWorkspace(WorkspaceContext& context)
    : QObject(context.window), m_context(context),
      m_files(new PlanFileController(context.document, context.window,
                                     [owner = context.owner] { return owner->session().get(); })),
      m_editor(new PlanEditorView(context.document, context.window)), m_banner(new ProvenanceBanner(context.window)),
      m_revalidator(new RevalidateController(context.owner, this))
{
    auto* dock = new QDockWidget(tr("Plan"), context.window);
    dock->setObjectName(QStringLiteral("planDock")); // saveState() needs it
    auto* pane = new QWidget(dock);
    auto* layout = new QVBoxLayout(pane);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_banner);
    layout->addWidget(m_editor, 1);
    dock->setWidget(pane);
    context.window->addDockWidget(Qt::BottomDockWidgetArea, dock);
    context.bottomDock = m_context.bottomDock = dock;
    context.views->add(QStringLiteral("plan"), m_editor, dock);
    connect(m_files, &PlanFileController::statusMessage, this, [this](const QString& m) { m_context.status->show(m); });
    connect(context.scope, &ModuleScope::changed, this, &PlanWorkspace::setDefaultScope); // a new entry's scope
    connectRevalidation();
    createActions();
}

void PlanWorkspace::connectRevalidation()
{
    PlanDocument* document = m_context.document;
    connect(document, &PlanDocument::planReplaced, this, [this] {
        m_provenanceAccepted = false; // another plan: its provenance is asked about afresh
        refreshProvenance();
    });
    connect(document, &PlanDocument::planChanged, this, &PlanWorkspace::refreshProvenance);
    connect(m_banner, &ProvenanceBanner::acceptRequested, this, [this] {
        m_provenanceAccepted = true;
        refreshProvenance();
        m_context.status->show(tr("Plan accepted as measured elsewhere: its entries were not re-validated here"));
    });
    connect(m_banner, &ProvenanceBanner::revalidateRequested, this, [this] { revalidate(); });
    connect(m_revalidator, &RevalidateController::runningChanged, m_banner, &ProvenanceBanner::setBusy);
    connect(m_revalidator, &RevalidateController::progress, this,
            [this](const QString& line) { m_context.status->show(line.trimmed()); });
    connect(
        m_revalidator, &RevalidateController::finished, this,
        [this](bool ok, const QString& message, const kforge::Plan& revised, const kforge::RevalidationReport& report) {
            if (ok) {
                m_provenanceAccepted = true; // checked here: the banner's question is answered
                m_context.document->replaceEntries(revised, tr("Re-validate Plan"));
                m_context.document->model()->setRevalidation(report.entries); // after the edit, which clears
                refreshProvenance();
            }
            m_context.status->show(message);
            Q_EMIT revalidated(ok, message);
        });
}

void PlanWorkspace::refreshProvenance()
{
    const kforge::Plan& plan = m_context.document->plan();
    const auto& session = m_context.owner->session();
    if (m_provenanceAccepted || !session || (!plan.provenance && plan.modelName.empty())) {
        m_banner->hide();
        return;
    }
    // A plan made for another model says so before it applies, as kforge's commands warn.
    m_banner->setChanges(
        plan, plan.provenance ? m_revalidator->changes(plan, m_device) : std::vector<kforge::ProvenanceChange>{},
        QString::fromStdString(kforge::otherModelOf(plan, *session)));
}

bool PlanWorkspace::revalidate(QString* error)
{
    QString why;
    if (!m_revalidator->start(m_context.document->plan(), &why)) {
        m_context.status->show(tr("Cannot re-validate: %1").arg(why));
        if (error)
            *error = why;
        return false;
    }
    return true;
}

void PlanWorkspace::createActions()
{
    WindowActions& a = *m_context.actions;
    auto make = [this](const char* iconName, const QString& text, auto slot) {
        auto* action = new QAction(iconName ? icon(iconName) : QIcon(), text, this);
        connect(action, &QAction::triggered, this, slot);
        return action;
    };
    a.newPlan = make("new-plan", tr("&New Plan"), [this] { m_files->newPlan(); });
    a.newPlan->setShortcut(QKeySequence::New);
    a.openPlan = make("open", tr("Open &Plan…"), [this] { m_files->chooseToOpen(); });
    a.openPlan->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_P)); // Ctrl+Shift+O is Optimize
    a.savePlan = make("save", tr("&Save Plan"), [this] { m_files->save(); });
    a.savePlan->setShortcut(QKeySequence::Save);
    a.savePlanAs = make(nullptr, tr("Save Plan &As…"), [this] { m_files->chooseToSave(); });
    a.savePlanAs->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    a.exportAitune = make("export", tr("&Export AITune Plan…"), [this] { m_files->chooseToExport(); });
    a.exportAitune->setStatusTip(tr("Write the plan in AITune's {\"providers\": [...]} form"));

    QUndoStack* undo = m_context.document->undoStack();
    a.undo = undo->createUndoAction(this, tr("&Undo"));
    a.undo->setIcon(icon("undo"));
    a.undo->setShortcut(QKeySequence::Undo);
    a.redo = undo->createRedoAction(this, tr("&Redo"));
    a.redo->setIcon(icon("redo"));
    a.redo->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)});
}

void PlanWorkspace::addFileActions(QMenu* fileMenu)
{
    const WindowActions& a = *m_context.actions;
    fileMenu->addActions({a.newPlan, a.openPlan, a.savePlan, a.savePlanAs, a.exportAitune});
}

void PlanWorkspace::addEditActions(QMenu* editMenu)
{
    editMenu->addActions({m_context.actions->undo, m_context.actions->redo});
}

void PlanWorkspace::addToolBarActions(QToolBar* toolBar) { toolBar->addAction(m_context.actions->savePlan); }

void PlanWorkspace::addUndoToolBarActions(QToolBar* toolBar)
{
    toolBar->addActions({m_context.actions->undo, m_context.actions->redo});
}

void PlanWorkspace::addEntry(const QString& scope, const QString& function, const QString& providerType)
{
    kforge::PlanEntry entry;
    entry.scope = scope.toStdString();
    entry.function = function.toStdString();
    entry.provider = nlohmann::json{{"type", providerType.toStdString()}};
    m_context.document->addEntry(entry);
    m_context.bottomDock->show();
    m_context.bottomDock->raise();
    m_editor->selectRow(int(m_context.document->plan().entries.size()) - 1);
    m_context.status->show(
        tr("Plan: %1 runs %2 in %3").arg(function, providerType, scope.isEmpty() ? tr("the root") : scope));
}

void PlanWorkspace::setSession(const kforge::ModelSession* session)
{
    if (session) {
        m_device = QString::fromStdString(session->device());
        m_editor->setSession(session, m_device);
    } else {
        m_editor->setSession(nullptr);
    }
    refreshProvenance();
}

void PlanWorkspace::setCatalog(const std::vector<kforge::ProviderCatalogEntry>& catalog)
{
    m_editor->setCatalog(catalog);
    m_editor->validate(); // entries naming new provider types may be valid now
}

void PlanWorkspace::setDefaultScope(const QString& path) { m_editor->setDefaultScope(path); }

} // namespace kforge::ui
