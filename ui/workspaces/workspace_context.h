// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a workspace reaches of the window it lives in: the session, the plan and what runs it left on the plan, the
// status bar, the views by name and the actions; the window owns them all and outlives the workspaces.

class QDockWidget;
class QMainWindow;

namespace kforge::ui {

class PlanDocument;
class PlanRunNotes;
class SessionOwner;
class StatusReporter;
class ViewRegistry;
struct WindowActions;

struct WorkspaceContext {
    QMainWindow* window = nullptr;
    SessionOwner* owner = nullptr;
    PlanDocument* document = nullptr;
    PlanRunNotes* notes = nullptr;
    StatusReporter* status = nullptr;
    ViewRegistry* views = nullptr;
    WindowActions* actions = nullptr;
    QDockWidget* bottomDock = nullptr; // the plan dock (PlanWorkspace): the other bottom docks are tabbed with it
};

} // namespace kforge::ui
