// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the Profile workspace's measurements have in common: the settings they run with and how they report. A
// profile (ProfileController), a benchmark (BenchmarkController) and a verification (VerifyController) each run on
// the owner's session through a job of their own; they read one MeasureSettings, so they never disagree on the
// device or the iterations, and the page and the workspace follow any of them the same way (running, progress, an
// outcome). Only one runs at a time: each claims the session (SessionOwner::claim).
#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>

namespace kforge {
struct Plan;
}

namespace kforge::ui {

class SessionOwner;

struct MeasureSettings {
    QString device = QStringLiteral("cpu"); // "cpu" or "cuda"
    int warmup = 3;                         // forwards (a benchmark's rounds) before measuring
    int iterations = 10;                    // measured forwards (a benchmark's rounds)
    bool recordShapes = false;              // of each CPU op, in profiles (ProfileOptions::recordShapes)
    bool recordMemory = false;              // every allocation and free, in profiles (ProfileOptions::recordMemory)
};

class MeasureController : public QObject {
    Q_OBJECT
public:
    enum class Outcome { Finished, Cancelled, Failed };
    Q_ENUM(Outcome)

    MeasureController(SessionOwner* owner, std::shared_ptr<const MeasureSettings> settings, QObject* parent);

    const MeasureSettings& settings() const { return *m_settings; }
    QString device() const { return m_settings->device; }
    int warmupIterations() const { return m_settings->warmup; }
    int iterations() const { return m_settings->iterations; }

    virtual bool isRunning() const = 0;
    virtual void cancel() = 0; // the work stops after its current forward and reports Cancelled
    virtual void stop() = 0;   // cancels and waits (blocking; for when the session goes away)

Q_SIGNALS:
    void runningChanged(bool running);
    // Forwards done of all the forwards the action runs (warm-up included); `stage` names what runs ("baseline",
    // "plan", "baseline and plan", "benchmark", "verify").
    void progress(int done, int total, const QString& stage);
    void resultsChanged();
    void finished(kforge::ui::MeasureController::Outcome outcome, const QString& message);

protected:
    SessionOwner* owner() const { return m_owner; }
    // A new session came: the results held belonged to the previous model (its work was stopped before).
    virtual void forgetResults() = 0;
    // Whether work with `plan` may start: false with a one-line `error` when a model is loaded and the plan has no
    // enabled entry (`what`: "profile", "benchmark", "verify"); the claim itself is the job's.
    bool planCanRun(const kforge::Plan& plan, const QString& what, QString* error) const;
    // Runs a job's work on the worker and says in one line what went wrong ("" when nothing did): an exception must
    // not escape the worker, and the job's result carries the message to the UI thread.
    static QString errorOf(const std::function<void()>& work);
    // Progress from the worker thread, delivered on the UI thread (queued); answers whether to go on.
    std::function<bool(int, int)> progressReporter(std::shared_ptr<const std::atomic<bool>> cancel,
                                                   const QString& stage);

private:
    SessionOwner* m_owner;
    std::shared_ptr<const MeasureSettings> m_settings;
};

} // namespace kforge::ui
