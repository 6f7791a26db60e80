// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading and writing large files (saved profiles, traces, CSV) off the UI thread: the window keeps painting, a
// window-modal progress dialog appears once the work has taken half a second, and its Cancel stops waiting. A
// writer given a CancellableOutput stops at its next write and leaves the target file as it was
// (writeFileStreaming); a reader cannot be stopped, so its result is dropped when it ends.
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>

class QWidget;

namespace kforge::ui {

class FileTask {
public:
    // Runs work(cancelled) on a worker thread, waiting with the event loop running. The result, or nullopt with
    // `error` set: the work's exception message, or "cancelled".
    template <class Result>
    static std::optional<Result> run(QWidget* parent, const QString& label,
                                     std::function<Result(const std::atomic<bool>& cancelled)> work, QString* error)
    {
        // Shared with the worker, which may outlive this call after a cancel.
        struct State {
            std::atomic<bool> cancelled{false};
            std::optional<Result> result;
            std::string error;
        };
        auto state = std::make_shared<State>();
        const bool finished = waitFor(parent, label, state->cancelled, [state, work = std::move(work)] {
            try {
                state->result = work(state->cancelled);
            } catch (const std::exception& e) {
                state->error = e.what();
            }
        });
        if (!finished) {
            if (error)
                *error = QStringLiteral("cancelled");
            return std::nullopt;
        }
        if (!state->result && error)
            *error = QString::fromStdString(state->error);
        return std::move(state->result);
    }

private:
    // Starts `job` on the thread pool and returns true when it finished, false when Cancel was pressed first.
    static bool waitFor(QWidget* parent, const QString& label, std::atomic<bool>& cancelled, std::function<void()> job);
};

// An ostream over another one's buffer that throws kforge::Error("...", "cancelled") at the first write after
// `cancelled` is set.
class CancellableOutput : public std::ostream {
public:
    CancellableOutput(std::ostream& out, const std::atomic<bool>& cancelled);

private:
    class Buffer : public std::streambuf {
    public:
        Buffer(std::streambuf* target, const std::atomic<bool>& cancelled) : m_target(target), m_cancelled(cancelled) {}

    protected:
        int_type overflow(int_type c) override;
        std::streamsize xsputn(const char* s, std::streamsize n) override;
        int sync() override { return m_target->pubsync(); }

    private:
        void check() const;
        std::streambuf* m_target;
        const std::atomic<bool>& m_cancelled;
    };
    Buffer m_buffer;
};

} // namespace kforge::ui
