// SPDX-License-Identifier: Apache-2.0
#pragma once
// A saved profile in a report of its own (one per tab, as Nsight Systems opens each report): the module tree
// rebuilt from the file, with the runs' times on it, beside the runs' tables, chart, timeline, comparison and
// flame graphs. Nothing runs from a report; it can be saved and exported like the Profile tab's runs. The window
// opens one for a profile of another model than the one loaded, so that nothing on screen is replaced and no
// view shows one model's times on another's tree.
#include "item_models/profile_results.h"

#include <QString>
#include <QWidget>

class QSplitter;

namespace kforge::ui {

class ModuleScope;
class ModuleTreeModel;
class ModuleTreePage;
class ProfileFileController;
class ProfilePage;
class ProfileResultsSource;

class ReportWorkspace : public QWidget {
    Q_OBJECT
public:
    // `fileName` names the report (its tab, the page's header); `dialogParent` parents its file dialogs.
    ReportWorkspace(const QString& fileName, const ResultsPtr& results, QWidget* dialogParent,
                    QWidget* parent = nullptr);
    ~ReportWorkspace() override;

    QString fileName() const { return m_fileName; }
    QString modelName() const;
    ProfileResultsSource* results() const { return m_results; }
    ProfilePage* page() const { return m_page; }
    ProfileFileController* files() const { return m_files; }
    ModuleTreeModel* treeModel() const { return m_treeModel; }
    ModuleTreePage* tree() const { return m_tree; }

protected:
    void showEvent(QShowEvent* event) override;

private:
    void showTimes();

    QString m_fileName;
    ProfileResultsSource* m_results; // the file's runs; nothing runs from a report
    ProfilePage* m_page;
    ProfileFileController* m_files;
    ModuleTreeModel* m_treeModel;
    ModuleTreePage* m_tree;
    ModuleScope* m_scope; // the report's own: its tree's module, which its page follows
    QSplitter* m_splitter;
    bool m_sized = false; // the splitter's first sizes are set when the report is first shown
};

} // namespace kforge::ui
