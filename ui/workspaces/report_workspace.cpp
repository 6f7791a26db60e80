// SPDX-License-Identifier: Apache-2.0
#include "workspaces/report_workspace.h"

#include "application/app_icons.h"
#include "controllers/profile_controller.h"
#include "controllers/profile_file_controller.h"
#include "controllers/session_owner.h"
#include "item_models/module_scope.h"
#include "item_models/module_tree_model.h"
#include "views/module_tree_page.h"
#include "views/module_tree_view.h"
#include "views/profile_page.h"

#include <kforge/profiling.h>

#include <QHBoxLayout>
#include <QSplitter>

#include <utility>

namespace kforge::ui {

ReportWorkspace::ReportWorkspace(const QString& fileName, std::shared_ptr<const kforge::ProfileRun> baseline,
                                 std::shared_ptr<const kforge::ProfileRun> plan, QWidget* dialogParent, QWidget* parent)
    : QWidget(parent), m_fileName(fileName), m_owner(new SessionOwner(this)),
      m_runs(new ProfileController(m_owner, this)), m_page(new ProfilePage(m_runs, this)),
      m_files(new ProfileFileController(m_runs, m_page, dialogParent)), m_treeModel(new ModuleTreeModel(this)),
      m_tree(new ModuleTreePage(m_treeModel, this)), m_scope(new ModuleScope(this))
{
    setObjectName(QStringLiteral("reportWorkspace"));
    // Not the window's own parts of these names (parts_by_name.h): a report's are reached through it.
    m_page->setObjectName(QStringLiteral("reportProfilePage"));
    m_tree->view()->setObjectName(QStringLiteral("reportModuleTreeView"));
    m_files->setParent(this);
    m_page->setPersistent(false); // the Profile tab's settings are the user's, not a report's
    m_page->setReport();
    m_files->showSavedRuns(baseline, plan, fileName);

    // The tree of the model the runs measured, as the file records it (the runs of one file share one model).
    const auto& any = baseline ? baseline : plan;
    m_treeModel->setIcons(icon("hooked"), icon("in-scope"), icon("inside"), icon("breakpoint"));
    m_treeModel->setModules(any ? any->modules : std::vector<kforge::ModuleInfo>{}, modelName());
    showTimes();
    // Nothing runs from a report: no hooks, plan entries or forward calls to show, the times are what it is for.
    for (const int column :
         {ModuleTreeModel::HookColumn, ModuleTreeModel::ParametersColumn, ModuleTreeModel::CallsColumn,
          ModuleTreeModel::FunctionsColumn, ModuleTreeModel::PlanColumn})
        m_tree->view()->setColumnHidden(column, true);
    m_tree->view()->expandAndFit();
    connect(m_tree, &ModuleTreePage::timeRunChanged, this, &ReportWorkspace::showTimes);
    connect(m_tree, &ModuleTreePage::currentPathChanged, m_scope, &ModuleScope::setPath);
    connect(m_scope, &ModuleScope::changed, m_page, &ProfilePage::setModuleScope);

    // The page's one-line header and tab bars would otherwise claim nearly the whole width as their minimum.
    m_page->setMinimumWidth(480);
    m_splitter = new QSplitter(Qt::Horizontal, this);
    m_splitter->addWidget(m_tree);
    m_splitter->addWidget(m_page);
    m_splitter->setStretchFactor(0, 2);
    m_splitter->setStretchFactor(1, 3);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_splitter);
}

ReportWorkspace::~ReportWorkspace() = default;

void ReportWorkspace::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (std::exchange(m_sized, true))
        return;
    // Once its width is known: two fifths for the tree, wide enough for its names and time columns (the page's
    // tables would take nearly all of it otherwise).
    const int width = m_splitter->width();
    m_splitter->setSizes({width * 2 / 5, width - width * 2 / 5});
}

QString ReportWorkspace::modelName() const
{
    const auto run = m_runs->baseline() ? m_runs->baseline() : m_runs->plan();
    return run ? QString::fromStdString(run->model) : QString();
}

void ReportWorkspace::showTimes()
{
    const auto& comparison = m_runs->comparison();
    m_tree->showRunTimes(m_runs->baseline(), m_runs->plan(),
                         comparison ? comparison->bySubtree : std::vector<kforge::ComparisonRow>{});
}

} // namespace kforge::ui
