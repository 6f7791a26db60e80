// SPDX-License-Identifier: Apache-2.0
#include "workspaces/plan_workspace.h"

#include "application/app_icons.h"
#include "application/status_reporter.h"
#include "application/view_registry.h"
#include "controllers/plan_file_controller.h"
#include "controllers/session_owner.h"
#include "item_models/plan_document.h"
#include "views/plan_editor_view.h"
#include "window_actions.h"

#include <kforge/model_session.h>
#include <kforge/plan.h>

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QMenu>
#include <QToolBar>
#include <QUndoStack>

namespace kforge::ui {

PlanWorkspace::PlanWorkspace(WorkspaceContext& context)
    : QObject(context.window), m_context(context),
      m_files(new PlanFileController(context.document, context.window,
                                     [owner = context.owner] {
                                         const auto& session = owner->session();
                                         return session ? QString::fromStdString(session->displayName()) : QString();
                                     })),
      m_editor(new PlanEditorView(context.document, context.window))
{
    auto* dock = new QDockWidget(tr("Plan"), context.window);
    dock->setObjectName(QStringLiteral("planDock")); // saveState() needs it
    dock->setWidget(m_editor);
    context.window->addDockWidget(Qt::BottomDockWidgetArea, dock);
    context.bottomDock = m_context.bottomDock = dock;
    context.views->add(QStringLiteral("plan"), m_editor, dock);
    connect(m_files, &PlanFileController::statusMessage, this, [this](const QString& m) { m_context.status->show(m); });
    createActions();
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
    if (session)
        m_editor->setSession(session, QString::fromStdString(session->device()));
    else
        m_editor->setSession(nullptr);
}

void PlanWorkspace::setCatalog(const std::vector<kforge::ProviderCatalogEntry>& catalog)
{
    m_editor->setCatalog(catalog);
    m_editor->validate(); // entries naming new provider types may be valid now
}

void PlanWorkspace::setDefaultScope(const QString& path) { m_editor->setDefaultScope(path); }

} // namespace kforge::ui
