// SPDX-License-Identifier: Apache-2.0
#include "item_models/profile_results.h"

#include <kforge/module_path.h>

#include <QCoreApplication>
#include <QThread>

#include <algorithm>
#include <iterator>
#include <utility>

namespace kforge::ui {
namespace {

using RunPtr = std::shared_ptr<const kforge::ProfileRun>;

bool offUiThread()
{
    const QCoreApplication* app = QCoreApplication::instance();
    return !app || QThread::currentThread() != app->thread();
}

std::shared_ptr<const RunViews> viewsOfRun(const kforge::ProfileRun& run)
{
    auto views = std::make_shared<RunViews>();
    views->flame = kforge::flameGraph(run);
    views->bottomUp = kforge::bottomUp(views->flame);
    for (const kforge::FlameFrame& frame : views->flame)
        views->frameUs.emplace(frame.path, frame.us);
    views->moduleTimes = kforge::moduleTimes(run);
    views->memory = kforge::summarizeMemory(run);
    views->memoryFlame = kforge::memoryFlameGraph(run);
    return views;
}

// `run`'s results, starting from what `reuse` (either side) holds of the same run.
RunResults runResults(const RunPtr& run, const std::vector<TableKey>& tables, const ProfileResults* reuse)
{
    RunResults results;
    if (!run)
        return results;
    if (reuse)
        for (const RunResults* old : {&reuse->baseline, &reuse->plan})
            if (old->run == run)
                results = *old;
    results.run = run;
    if (!results.views)
        results.views = viewsOfRun(*run);
    for (const TableKey& key : tables)
        if (!results.tables.contains(key))
            results.tables.emplace(key, std::make_shared<const StatRows>(tableOf(*run, key)));
    return results;
}

} // namespace

std::shared_ptr<const StatRows> RunResults::table(const TableKey& key) const
{
    const auto it = tables.find(key);
    return it == tables.end() ? nullptr : it->second;
}

bool ProfileResults::hasTable(const TableKey& key) const
{
    return (!baseline || baseline.table(key)) && (!plan || plan.table(key));
}

std::vector<TableKey> tablesToCompute(bool recordShapes, const TableKey& shown)
{
    std::vector<TableKey> keys;
    for (const kforge::GroupBy each :
         {kforge::GroupBy::Kernel, kforge::GroupBy::KernelGeometry, kforge::GroupBy::Function, kforge::GroupBy::Module})
        keys.push_back({each, {}});
    if (recordShapes)
        keys.push_back({kforge::GroupBy::OpInputShapes, {}});
    if (std::find(keys.begin(), keys.end(), shown) == keys.end())
        keys.push_back(shown);
    return keys;
}

StatRows tableOf(const kforge::ProfileRun& run, const TableKey& key)
{
    if (key.scope.empty())
        return kforge::statistics(run.records, key.groupBy);
    std::vector<kforge::KernelRecord> inside;
    std::copy_if(run.records.begin(), run.records.end(), std::back_inserter(inside),
                 [&key](const kforge::KernelRecord& record) {
                     return kforge::module_path::isWithin(record.modulePath, key.scope);
                 });
    return kforge::statistics(inside, key.groupBy);
}

ResultsPtr makeProfileResults(RunPtr baseline, RunPtr plan, const std::vector<TableKey>& tables,
                              const ProfileResults* reuse, std::shared_ptr<const kforge::Comparison> comparison)
{
    auto results = std::make_shared<ProfileResults>();
    results->madeOffUiThread = offUiThread();
    results->baseline = runResults(baseline, tables, reuse);
    results->plan = runResults(plan, tables, reuse);
    if (baseline && plan) {
        const bool samePair = reuse && reuse->baseline.run == baseline && reuse->plan.run == plan;
        results->comparison = comparison ? std::move(comparison)
                              : samePair && reuse->comparison
                                  ? reuse->comparison
                                  : std::make_shared<const kforge::Comparison>(kforge::compare(*baseline, *plan));
        results->flameSpeeds = samePair && reuse->flameSpeeds
                                   ? reuse->flameSpeeds
                                   : std::make_shared<const std::map<std::string, kforge::SpeedComparison>>(
                                         kforge::flameGraphSpeeds(*baseline, *plan));
    }
    return results;
}

ResultsPtr withTable(const ResultsPtr& results, const TableKey& key)
{
    if (!results || results->hasTable(key))
        return results;
    auto more = std::make_shared<ProfileResults>(*results);
    more->madeOffUiThread = offUiThread();
    for (RunResults* side : {&more->baseline, &more->plan})
        if (side->run && !side->table(key))
            side->tables.emplace(key, std::make_shared<const StatRows>(tableOf(*side->run, key)));
    return more;
}

} // namespace kforge::ui
