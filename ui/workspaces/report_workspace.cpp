// SPDX-License-Identifier: Apache-2.0
#include "workspaces/report_workspace.h"

#include "application/app_icons.h"
#include "controllers/profile_file_controller.h"
#include "controllers/profile_results_source.h"
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

ReportWorkspace::ReportWorkspace(const QString& fileName, const ResultsPtr& results, QWidget* dialogParent,
                                 QWidget* parent)
    : QWidget(parent), m_fileName(fileName), m_results(new ProfileResultsSource(this)),
      m_page(new ProfilePage(m_results, nullptr, this)),
      m_files(new ProfileFileController(m_results, m_page, dialogParent)), m_treeModel(new ModuleTreeModel(this)),
      m_tree(new ModuleTreePage(m_treeModel, this)), m_scope(new ModuleScope(this))
{
    setObjectName(QStringLiteral("reportWorkspace"));
    // Not the window's own parts of these names (parts_by_name.h): a report's are reached through it.
    m_page->setObjectName(QStringLiteral("reportProfilePage"));
    m_tree->view()->setObjectName(QStringLiteral("reportModuleTreeView"));
    m_files->setParent(this);
    m_files->showSavedResults(results, fileName);

    // The tree of the model the runs measured, as the file records it (the runs of one file share one model).
    const auto& any = results->baseline ? results->baseline.run : results->plan.run;
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
    connect(m_results, &ProfileResultsSource::resultsChanged, this, &ReportWorkspace::showTimes);
    connect(m_tree, &ModuleTreePage::currentPathChanged, m_scope, &ModuleScope::setPath);
    connect(m_scope, &ModuleScope::changed, m_page, &ProfilePage::setModuleScope);
    connect(m_page, &ProfilePage::moduleScopeCleared, m_tree, [this] { m_tree->revealPath(QString()); });

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
    const ProfileResults& results = *m_results->results();
    const auto& run = results.baseline ? results.baseline.run : results.plan.run;
    return run ? QString::fromStdString(run->model) : QString();
}

void ReportWorkspace::showTimes() { m_tree->showRunTimes(m_results->results()); }

} // namespace kforge::ui
