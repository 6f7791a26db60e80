// SPDX-License-Identifier: Apache-2.0
#pragma once
// Benchmarks the plan against the model as it is, without the profiler (kforge::benchmarkPlan(), as `kforge bench`):
// forward latency in alternating rounds, the settings' warm-up and iterations counted in rounds. Keeps the last
// benchmark of the model (a stopped one keeps its measured rounds) and the plan it measured; a new session clears
// them.
#include "controllers/measure_controller.h"
#include "controllers/session_job.h"

#include <kforge/benchmark.h>
#include <kforge/plan.h>

#include <memory>
#include <optional>
#include <vector>

namespace kforge::ui {

class BenchmarkController : public MeasureController {
    Q_OBJECT
public:
    BenchmarkController(SessionOwner* owner, std::shared_ptr<const MeasureSettings> settings,
                        QObject* parent = nullptr);
    ~BenchmarkController() override; // cancels and waits

    // False with a one-line `error` when nothing started: no model, the session is taken, the plan has no enabled
    // entry. finished() follows a start.
    bool benchmark(const kforge::Plan& plan, QString* error = nullptr);
    bool isRunning() const override { return m_job.isRunning(); }
    void cancel() override { m_job.cancel(); }
    void stop() override { m_job.stop(); }

    // The last benchmark with measured rounds, and the plan it measured; none before the first.
    const std::optional<kforge::BenchmarkResult>& result() const { return m_result; }
    const kforge::Plan& measuredPlan() const { return m_measuredPlan; }
    // Calls the plan's providers declined in the last benchmark's forwards, entries numbered as in its plan.
    const std::vector<kforge::EntryDeclines>& declines() const { return m_declines; }

private:
    void forgetResults() override;
    struct Result {
        std::shared_ptr<kforge::BenchmarkResult> benchmark;
        QString error;
    };
    void finish(const Result& result);

    SessionJob<Result> m_job;
    kforge::Plan m_startedPlan;
    std::optional<kforge::BenchmarkResult> m_result;
    kforge::Plan m_measuredPlan;
    std::vector<kforge::EntryDeclines> m_declines;
};

} // namespace kforge::ui
