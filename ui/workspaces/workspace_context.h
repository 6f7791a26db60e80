// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a workspace reaches of the window it lives in: the session, the plan and what runs it left on the plan, the
// status bar, the views by name, the actions and the module the pages follow; the window owns them all and outlives the
// workspaces.

class QDockWidget;
class QMainWindow;

namespace kforge::ui {

class ModuleScope;
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
    ModuleScope* scope = nullptr;      // the module the pages follow (the tree's current one)
    QDockWidget* bottomDock = nullptr; // the plan dock (PlanWorkspace): the other bottom docks are tabbed with it
};

} // namespace kforge::ui
