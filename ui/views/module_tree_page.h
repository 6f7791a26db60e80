// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "item_models/profile_results.h"

#include <kforge/provider_catalog.h>

#include <QWidget>

#include <memory>
#include <vector>

class QAction;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;

namespace kforge {
struct ComparisonRow;
struct ProfileRun;
} // namespace kforge

namespace kforge::ui {

class ModuleTreeFilterModel;
class ModuleTreeModel;
class ModuleTreeView;

// The module tree page: a filter bar (substring or regex, Ctrl+F focuses it), expand/collapse, the tree, and
// the context menu that adds plan entries and toggles module breakpoints.
class ModuleTreePage : public QWidget {
    Q_OBJECT
public:
    explicit ModuleTreePage(ModuleTreeModel* model, QWidget* parent = nullptr);

    ModuleTreeView* view() const;
    ModuleTreeFilterModel* filterModel() const;
    QLineEdit* filterEdit() const;
    QCheckBox* regexBox() const;

    void setCatalog(std::vector<kforge::ProviderCatalogEntry> catalog);
    // The menu the tree shows for the module at `sourceIndex` (an index of the ModuleTreeModel); the caller
    // owns it. "Add provider for <function> here" submenus list the catalog's providers of each function the
    // module's subtree calls.
    QMenu* createContextMenu(const QModelIndex& sourceIndex, QWidget* parent = nullptr);

    void focusFilter();
    // The tree takes the keyboard at the first module matching the filter (what Return or Down in the filter do):
    // from there the Menu key opens the module's menu, to add a provider without the mouse.
    void focusFirstMatch();
    // Sorts by total time per forward, widest first (the Time column; a profile must have run to fill it).
    void sortByTime();
    void expandAll();
    void collapseAll();
    // Expands down to `path` and selects it.
    void revealPath(const QString& path);
    QString currentPath() const; // the selected module's path; "" for the root or none

    // Which profile run the Time columns show: the choice appears when both a baseline and a plan run exist
    // (the plan's by default, with its Δ against the baseline). Call after the model's times changed.
    enum class TimeRun { Baseline, Plan };
    void setTimeRuns(bool baseline, bool plan);
    // The times of the results' baseline or plan run (whichever timeRun() picks; the plan's with its Δ against the
    // baseline, the comparison's bySubtree) on the tree, for runs of this tree's model; empty results clear them.
    void showRunTimes(const ResultsPtr& results);
    // A line above the tree saying why it shows no times (a profile of another model); "" hides it.
    void setTimeNotice(const QString& notice);
    QLabel* timeNotice() const { return m_timeNotice; }
    TimeRun timeRun() const;
    QComboBox* timeRunCombo() const { return m_timeRun; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

Q_SIGNALS:
    void addProviderRequested(const QString& scope, const QString& function, const QString& providerType);
    void moduleBreakpointToggled(const QString& path);
    void currentPathChanged(const QString& path);
    void timeRunChanged();

private:
    void applyFilter();
    void showContextMenu(const QPoint& pos);

    ModuleTreeModel* m_model;
    ModuleTreeFilterModel* m_filter;
    ModuleTreeView* m_view;
    QLineEdit* m_filterEdit;
    QCheckBox* m_regexBox;
    QLabel* m_filterStatus;
    QLabel* m_timeRunLabel;
    QLabel* m_timeNotice;
    QComboBox* m_timeRun;
    std::vector<kforge::ProviderCatalogEntry> m_catalog;
};

} // namespace kforge::ui
