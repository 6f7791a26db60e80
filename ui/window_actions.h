// SPDX-License-Identifier: Apache-2.0
#pragma once
// The window's actions, in one place for shortcuts, tests and the batch driver. The window creates the model, plan
// and application ones; each workspace creates (and puts in its menus) its own.
class QAction;
class QMenu;

namespace kforge::ui {

struct WindowActions {
    QAction* open = nullptr;
    QMenu* openBuiltin = nullptr;
    QMenu* openRecent = nullptr;
    QAction* clearRecent = nullptr;
    QAction* setInputs = nullptr;
    QAction* loadInputs = nullptr;
    QAction* quit = nullptr;
    QAction* newPlan = nullptr;
    QAction* openPlan = nullptr;
    QAction* savePlan = nullptr;
    QAction* savePlanAs = nullptr;
    QAction* exportAitune = nullptr;
    QAction* undo = nullptr;
    QAction* redo = nullptr;
    QAction* filter = nullptr;
    QAction* expandAll = nullptr;
    QAction* collapseAll = nullptr;
    QAction* run = nullptr;
    QAction* step = nullptr;
    QAction* continueRun = nullptr;
    QAction* abort = nullptr;
    QAction* keepLeftovers = nullptr;
    QAction* unwind = nullptr;
    QAction* clearBreakpoints = nullptr;
    QAction* capture = nullptr;
    QAction* preferences = nullptr;
    QAction* about = nullptr;
    QAction* openProfile = nullptr;
    QAction* compareWith = nullptr;
    QAction* swapSides = nullptr;
    QAction* saveProfile = nullptr;
    QAction* closeReport = nullptr;
    QAction* exportTrace = nullptr;
    QAction* exportCsv = nullptr;
    QAction* exportChart = nullptr;
    QAction* exportTimeline = nullptr;
    QAction* profileBaseline = nullptr;
    QAction* profileWithPlan = nullptr;
    QAction* profileCompare = nullptr;
    QAction* profileBenchmark = nullptr;
    QAction* profileVerify = nullptr;
    QAction* cancelProfile = nullptr;
    QAction* optimize = nullptr;
    QAction* cancelOptimize = nullptr;
    QAction* applyOptimized = nullptr;
};

} // namespace kforge::ui
