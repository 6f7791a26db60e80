// SPDX-License-Identifier: Apache-2.0
#include "item_models/run_views.h"

#include <kforge/module_path.h>

#include <QCoreApplication>
#include <QThread>

#include <algorithm>
#include <iterator>
#include <mutex>
#include <tuple>
#include <utility>

namespace kforge::ui {
namespace {

using RunPtr = std::shared_ptr<const kforge::ProfileRun>;
using Speeds = std::map<std::string, kforge::SpeedComparison>;

// Entries hold their runs weakly: one whose run is gone is dropped on the next insertion.
template <typename Key, typename Value> struct Cache {
    std::mutex mutex;
    std::map<Key, std::pair<std::vector<std::weak_ptr<const kforge::ProfileRun>>, std::shared_ptr<const Value>>>
        entries;

    std::shared_ptr<const Value> find(const Key& key)
    {
        std::lock_guard lock(mutex);
        const auto it = entries.find(key);
        if (it == entries.end())
            return nullptr;
        for (const auto& run : it->second.first)
            if (run.expired()) // its run is gone and another may live at the same address
                return nullptr;
        return it->second.second;
    }
    // The first value stored under `key` wins, so that every caller shares one.
    std::shared_ptr<const Value> store(const Key& key, std::vector<std::weak_ptr<const kforge::ProfileRun>> runs,
                                       std::shared_ptr<const Value> value)
    {
        std::lock_guard lock(mutex);
        std::erase_if(entries, [](const auto& entry) {
            for (const auto& run : entry.second.first)
                if (run.expired())
                    return true;
            return false;
        });
        return entries.try_emplace(key, std::move(runs), std::move(value)).first->second.second;
    }
};

Cache<const kforge::ProfileRun*, RunViews>& runCache()
{
    static auto* cache = new Cache<const kforge::ProfileRun*, RunViews>();
    return *cache;
}

using StatisticsKey = std::tuple<const kforge::ProfileRun*, kforge::GroupBy, std::string>;

Cache<StatisticsKey, std::vector<kforge::StatRow>>& statisticsCache()
{
    static auto* cache = new Cache<StatisticsKey, std::vector<kforge::StatRow>>();
    return *cache;
}

Cache<std::pair<const kforge::ProfileRun*, const kforge::ProfileRun*>, Speeds>& speedCache()
{
    static auto* cache = new Cache<std::pair<const kforge::ProfileRun*, const kforge::ProfileRun*>, Speeds>();
    return *cache;
}

bool onUiThread()
{
    const QCoreApplication* app = QCoreApplication::instance();
    return app && QThread::currentThread() == app->thread();
}

} // namespace

std::shared_ptr<const RunViews> viewsOf(const RunPtr& run)
{
    if (!run)
        return nullptr;
    if (auto found = runCache().find(run.get()))
        return found;
    auto views = std::make_shared<RunViews>();
    views->flame = kforge::flameGraph(*run);
    views->bottomUp = kforge::bottomUp(views->flame);
    for (const kforge::FlameFrame& frame : views->flame)
        views->frameUs.emplace(frame.path, frame.us);
    views->moduleTimes = kforge::moduleTimes(*run);
    views->computedOffUiThread = !onUiThread();
    return runCache().store(run.get(), {run}, std::move(views));
}

std::shared_ptr<const std::vector<kforge::StatRow>> statisticsOf(const RunPtr& run, kforge::GroupBy groupBy,
                                                                 const std::string& scope)
{
    if (!run)
        return nullptr;
    StatisticsKey key{run.get(), groupBy, scope};
    if (auto found = statisticsCache().find(key))
        return found;
    std::vector<kforge::StatRow> rows;
    if (scope.empty()) {
        rows = kforge::statistics(run->records, groupBy);
    } else {
        std::vector<kforge::KernelRecord> inside;
        std::copy_if(run->records.begin(), run->records.end(), std::back_inserter(inside),
                     [&scope](const kforge::KernelRecord& record) {
                         return kforge::module_path::isWithin(record.modulePath, scope);
                     });
        rows = kforge::statistics(inside, groupBy);
    }
    return statisticsCache().store(std::move(key), {run},
                                   std::make_shared<const std::vector<kforge::StatRow>>(std::move(rows)));
}

std::shared_ptr<const Speeds> flameSpeedsOf(const RunPtr& baseline, const RunPtr& plan)
{
    if (!baseline || !plan)
        return nullptr;
    const std::pair key{baseline.get(), plan.get()};
    if (auto found = speedCache().find(key))
        return found;
    return speedCache().store(key, {baseline, plan},
                              std::make_shared<const Speeds>(kforge::flameGraphSpeeds(*baseline, *plan)));
}

} // namespace kforge::ui
