// SPDX-License-Identifier: Apache-2.0
#include "module_tree_page.h"

#include "item_models/module_tree_filter_model.h"
#include "item_models/module_tree_model.h"
#include "views/module_tree_view.h"
#include "views/share_bar_delegate.h"

#include <kforge/module_info.h>
#include <kforge/profiling.h>

#include <QAction>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QHeaderView>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QToolButton>
#include <QVBoxLayout>

namespace kforge::ui {

ModuleTreePage::ModuleTreePage(ModuleTreeModel* model, QWidget* parent)
    : QWidget(parent), m_model(model), m_filter(new ModuleTreeFilterModel(this)), m_view(new ModuleTreeView(this)),
      m_filterEdit(new QLineEdit(this)), m_regexBox(new QCheckBox(tr("Regex"), this)), m_filterStatus(new QLabel(this)),
      m_timeRunLabel(new QLabel(tr("&Time of:"), this)), m_timeNotice(new QLabel(this)), m_timeRun(new QComboBox(this))
{
    m_timeNotice->setObjectName(QStringLiteral("moduleTimeNotice"));
    m_timeNotice->setWordWrap(true);
    m_timeNotice->setContentsMargins(4, 2, 4, 2);
    m_timeNotice->setVisible(false);
    setObjectName(QStringLiteral("moduleTreePage"));
    m_filter->setSourceModel(model);
    m_view->setModel(m_filter);
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);

    m_filterEdit->setObjectName(QStringLiteral("moduleFilter"));
    m_filterEdit->setPlaceholderText(tr("Filter modules by path, type or function (Ctrl+F)"));
    m_filterEdit->setClearButtonEnabled(true);
    m_regexBox->setObjectName(QStringLiteral("moduleFilterRegex"));
    m_regexBox->setToolTip(tr("Read the filter as a regular expression (case-insensitive)"));
    m_filterStatus->setObjectName(QStringLiteral("moduleFilterStatus"));

    auto* expand = new QToolButton(this);
    expand->setIcon(QIcon(QStringLiteral(":/icons/expand.svg")));
    expand->setToolTip(tr("Expand all"));
    connect(expand, &QToolButton::clicked, this, &ModuleTreePage::expandAll);
    auto* collapse = new QToolButton(this);
    collapse->setIcon(QIcon(QStringLiteral(":/icons/collapse.svg")));
    collapse->setToolTip(tr("Collapse all"));
    connect(collapse, &QToolButton::clicked, this, &ModuleTreePage::collapseAll);

    m_view->setItemDelegateForColumn(ModuleTreeModel::ShareColumn,
                                     new ShareBarDelegate(ModuleTreeModel::ShareRole, m_view));
    // Sortable by any column (time above all); model order (named_modules) until a header is clicked.
    m_view->header()->setSortIndicator(-1, Qt::AscendingOrder);
    m_view->setSortingEnabled(true);
    m_timeRun->setObjectName(QStringLiteral("moduleTimeRun"));
    m_timeRun->addItem(tr("Baseline"), int(TimeRun::Baseline));
    m_timeRun->addItem(tr("Plan"), int(TimeRun::Plan));
    m_timeRun->setCurrentIndex(1);
    m_timeRun->setToolTip(tr("The profile run whose time the Time columns show; with the plan's, Δ compares it "
                             "with the baseline's"));
    m_timeRunLabel->setBuddy(m_timeRun);
    connect(m_timeRun, &QComboBox::currentIndexChanged, this, &ModuleTreePage::timeRunChanged);
    setTimeRuns(false, false);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(4, 4, 4, 0);
    bar->addWidget(m_filterEdit, 1);
    bar->addWidget(m_regexBox);
    bar->addWidget(m_filterStatus);
    bar->addWidget(m_timeRunLabel);
    bar->addWidget(m_timeRun);
    bar->addWidget(expand);
    bar->addWidget(collapse);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(bar);
    layout->addWidget(m_timeNotice);
    layout->addWidget(m_view, 1);

    m_filterEdit->installEventFilter(this); // Return or Down: on to the tree, at the first match
    connect(m_filterEdit, &QLineEdit::textChanged, this, &ModuleTreePage::applyFilter);

    connect(m_regexBox, &QCheckBox::toggled, this, &ModuleTreePage::applyFilter);
    connect(m_view, &QWidget::customContextMenuRequested, this, &ModuleTreePage::showContextMenu);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this] { Q_EMIT currentPathChanged(currentPath()); });
}

ModuleTreeView* ModuleTreePage::view() const { return m_view; }

void ModuleTreePage::setTimeRuns(bool baseline, bool plan)
{
    const bool both = baseline && plan;
    m_timeRunLabel->setVisible(both);
    m_timeRun->setVisible(both);
    const bool times = m_model->hasModuleTimes();
    for (int column = ModuleTreeModel::TimeColumn; column <= ModuleTreeModel::TopFunctionColumn; ++column)
        m_view->setColumnHidden(column, !times);
    m_view->setColumnHidden(ModuleTreeModel::DeltaColumn, !m_model->hasDelta());
    m_view->setColumnHidden(ModuleTreeModel::ErrorColumn, !m_model->hasModuleAgreement());
    m_view->setColumnHidden(ModuleTreeModel::AllocatedColumn, !m_model->hasModuleMemory());
    m_view->setColumnHidden(ModuleTreeModel::PeakColumn, !m_model->hasModuleMemory());
    m_view->setColumnHidden(ModuleTreeModel::LiveAtExitColumn, !m_model->hasModuleMemory());
    m_view->setColumnHidden(ModuleTreeModel::PeakDeltaColumn, !m_model->hasMemoryDelta());
}

void ModuleTreePage::showRunTimes(const ResultsPtr& results)
{
    const bool baseline = results && results->baseline;
    const bool plan = results && results->plan;
    const bool showPlan = plan && (!baseline || timeRun() == TimeRun::Plan);
    const RunResults* shown = showPlan ? &results->plan : baseline ? &results->baseline : nullptr;
    m_model->setModuleTimes(shown ? shown->views->moduleTimes : std::vector<kforge::ModuleTime>{},
                            showPlan && baseline ? results->comparison->bySubtree
                                                 : std::vector<kforge::ComparisonRow>{});
    m_model->setModuleMemory(shown ? &shown->views->memory : nullptr,
                             showPlan && baseline ? &results->baseline.views->memory : nullptr);
    setTimeRuns(baseline, plan);
}

void ModuleTreePage::setTimeNotice(const QString& notice)
{
    m_timeNotice->setText(notice);
    m_timeNotice->setVisible(!notice.isEmpty());
}

ModuleTreePage::TimeRun ModuleTreePage::timeRun() const { return TimeRun(m_timeRun->currentData().toInt()); }

ModuleTreeFilterModel* ModuleTreePage::filterModel() const { return m_filter; }

QLineEdit* ModuleTreePage::filterEdit() const { return m_filterEdit; }

QCheckBox* ModuleTreePage::regexBox() const { return m_regexBox; }

void ModuleTreePage::setCatalog(std::vector<kforge::ProviderCatalogEntry> catalog) { m_catalog = std::move(catalog); }

void ModuleTreePage::applyFilter()
{
    m_filter->setFilter(m_filterEdit->text(), m_regexBox->isChecked());
    const QString error = m_filter->filterError();
    m_filterStatus->setText(error.isEmpty() ? QString() : tr("invalid regex"));
    m_filterStatus->setToolTip(error);
    // A filtered tree is only useful open: show every match.
    if (!m_filter->filterText().isEmpty() && error.isEmpty())
        m_view->expandAll();
}

bool ModuleTreePage::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_filterEdit && event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent*>(event)->key();
        if (key == Qt::Key_Return || key == Qt::Key_Enter || key == Qt::Key_Down) {
            focusFirstMatch();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void ModuleTreePage::focusFirstMatch()
{
    const QModelIndex match = m_filter->firstMatch();
    if (match.isValid()) {
        m_view->scrollTo(match);
        m_view->setCurrentIndex(match);
    }
    m_view->setFocus(Qt::OtherFocusReason);
}

void ModuleTreePage::focusFilter()
{
    m_filterEdit->setFocus(Qt::ShortcutFocusReason);
    m_filterEdit->selectAll();
}

void ModuleTreePage::sortByTime() { view()->sortByColumn(ModuleTreeModel::TimeColumn, Qt::DescendingOrder); }

void ModuleTreePage::expandAll() { m_view->expandAll(); }

void ModuleTreePage::collapseAll()
{
    m_view->collapseAll();
    m_view->expand(m_filter->index(0, 0)); // the root alone says little
}

void ModuleTreePage::revealPath(const QString& path)
{
    const QModelIndex index = m_filter->mapFromSource(m_model->indexOfPath(path));
    if (!index.isValid())
        return;
    for (QModelIndex parent = index.parent(); parent.isValid(); parent = parent.parent())
        m_view->expand(parent);
    m_view->setCurrentIndex(index);
    m_view->scrollTo(index);
}

QString ModuleTreePage::currentPath() const
{
    return m_view->currentIndex().data(ModuleTreeModel::PathRole).toString();
}

void ModuleTreePage::showContextMenu(const QPoint& pos)
{
    const QModelIndex index = m_filter->mapToSource(m_view->indexAt(pos));
    if (!index.isValid())
        return;
    QMenu* menu = createContextMenu(index, this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(m_view->viewport()->mapToGlobal(pos));
}

QMenu* ModuleTreePage::createContextMenu(const QModelIndex& sourceIndex, QWidget* parent)
{
    auto* menu = new QMenu(parent);
    menu->setObjectName(QStringLiteral("moduleContextMenu"));
    const kforge::ModuleInfo* module = m_model->moduleAt(sourceIndex);
    if (!module)
        return menu;
    const QString path = QString::fromStdString(module->path);
    const QString where = path.isEmpty() ? tr("the root") : path;

    for (const auto& [function, calls] : module->subtreeFunctions) {
        if (calls <= 0)
            continue;
        const QString name = QString::fromStdString(function);
        QMenu* sub = menu->addMenu(tr("Add provider for %1 here").arg(name));
        sub->setObjectName(QStringLiteral("addProvider:%1").arg(name));
        for (const kforge::ProviderCatalogEntry& provider : m_catalog) {
            if (provider.function != function)
                continue;
            const QString type = QString::fromStdString(provider.typeName);
            QStringList devices;
            for (const std::string& device : provider.devices)
                devices << QString::fromStdString(device);
            QAction* action = sub->addAction(devices.isEmpty() ? type : tr("%1 (%2)").arg(type, devices.join(", ")));
            action->setData(type);
            action->setToolTip(QString::fromStdString(provider.description));
            action->setStatusTip(tr("Add an entry to the plan: in %1, %2 runs %3").arg(where, name, type));
            connect(action, &QAction::triggered, this,
                    [this, path, name, type] { Q_EMIT addProviderRequested(path, name, type); });
        }
        if (sub->isEmpty())
            sub->addAction(tr("(no provider for %1)").arg(name))->setEnabled(false);
    }
    if (module->subtreeFunctions.empty())
        menu->addAction(tr("No replaceable function is called here"))->setEnabled(false);

    menu->addSeparator();
    QAction* breakpoint = menu->addAction(QIcon(QStringLiteral(":/icons/breakpoint.svg")), tr("Break on Entry"));
    breakpoint->setObjectName(QStringLiteral("toggleModuleBreakpoint"));
    breakpoint->setCheckable(true);
    breakpoint->setChecked(sourceIndex.siblingAtColumn(0).data(ModuleTreeModel::BreakpointRole).toBool());
    breakpoint->setStatusTip(tr("Pause a forward when it enters %1").arg(where));
    connect(breakpoint, &QAction::triggered, this, [this, path] { Q_EMIT moduleBreakpointToggled(path); });

    menu->addSeparator();
    menu->addAction(tr("Copy Path"), this, [path] { QGuiApplication::clipboard()->setText(path); });
    menu->addAction(QIcon(QStringLiteral(":/icons/expand.svg")), tr("Expand All"), this, &ModuleTreePage::expandAll);
    menu->addAction(QIcon(QStringLiteral(":/icons/collapse.svg")), tr("Collapse All"), this,
                    &ModuleTreePage::collapseAll);
    return menu;
}

} // namespace kforge::ui
