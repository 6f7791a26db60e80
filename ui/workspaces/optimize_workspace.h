// SPDX-License-Identifier: Apache-2.0
#pragma once
// The optimize workspace: make_plan with providers and generators off the UI thread (OptimizeController), its
// candidates in the Optimize dock, Apply Optimized Plan (one undoable step), then Benchmark; its actions join the
// Profile menu, whose profile settings (device, iterations) it uses.
#include "controllers/optimize_controller.h"
#include "workspaces/workspace_context.h"

#include <QObject>
#include <QString>

class QDockWidget;
class QMenu;

namespace kforge::ui {

class OptimizeView;
class ProfileController;

class OptimizeWorkspace : public QObject {
    Q_OBJECT
public:
    OptimizeWorkspace(const WorkspaceContext& context, ProfileController* profiles);

    void addProfileMenuActions(QMenu* profileMenu);
    OptimizeController* controller() const { return m_optimize; }
    OptimizeView* view() const { return m_view; }

    // False, with error(), when nothing started; finished() follows a start.
    bool optimize();
    void cancelOptimize();
    bool applyOptimizedPlan(); // the plan made replaces the plan's entries, undoably

Q_SIGNALS:
    void finished(bool ok, const QString& message); // ok: every function tried
    void error(const QString& message);

private:
    void createActions();
    void updateActions();
    void optimizationEnded(OptimizeController::Outcome outcome, const QString& message);

    WorkspaceContext m_context;
    ProfileController* m_profiles;
    OptimizeController* m_optimize;
    OptimizeView* m_view = nullptr;
    QDockWidget* m_dock = nullptr;
};

} // namespace kforge::ui
