// SPDX-License-Identifier: Apache-2.0
#pragma once
// The main window's views, models and controllers by object name (ui/parts_by_name.h), for the tests; the parts the
// tests use most have a function of their own.
#include "parts_by_name.h"

#include <QTest>

#include "application/status_reporter.h"
#include "controllers/benchmark_controller.h"
#include "controllers/optimize_controller.h"
#include "controllers/profile_controller.h"
#include "controllers/profile_results_source.h"
#include "controllers/run_controller.h"
#include "controllers/verify_controller.h"
#include "item_models/plan_document.h"
#include "views/module_tree_view.h"
#include "views/profile_page.h"

namespace kforge::ui::test {

using kforge::ui::part;

inline ModuleTreeView* moduleView(const QObject& window) { return part<ModuleTreeView>(window, "moduleTreeView"); }
inline PlanDocument* planDocument(const QObject& window) { return part<PlanDocument>(window, "planDocument"); }
inline RunController* runController(const QObject& window) { return part<RunController>(window, "runController"); }
inline ProfileController* profileController(const QObject& window)
{
    return part<ProfileController>(window, "profileController");
}
// The status bar's line, whole (the bar may show it cut, ending in "…").
inline QString statusMessage(const QObject& window)
{
    return part<StatusReporter>(window, "statusReporter")->message();
}
// The results the Profile tab shows (its controller's source).
inline ResultsPtr profileResults(const QObject& window) { return profileController(window)->source()->results(); }
inline ProfilePage* profilePage(const QObject& window) { return part<ProfilePage>(window, "profilePage"); }
// Waits until the page's kernel table has its rows (another grouping or scope is made off the UI thread).
inline bool waitForKernelTable(const ProfilePage& page)
{
    return QTest::qWaitFor([&page] { return !page.computingTable(); }, 60'000);
}
inline OptimizeController* optimizeController(const QObject& window)
{
    return part<OptimizeController>(window, "optimizeController");
}
inline BenchmarkController* benchmarkController(const QObject& window)
{
    return part<BenchmarkController>(window, "benchmarkController");
}
inline VerifyController* verifyController(const QObject& window)
{
    return part<VerifyController>(window, "verifyController");
}

} // namespace kforge::ui::test
