// SPDX-License-Identifier: Apache-2.0
#include "controllers/file_task.h"

#include <kforge/error.h>

#include <QEventLoop>
#include <QFutureWatcher>
#include <QProgressDialog>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

namespace kforge::ui {
namespace {

constexpr int kDialogDelayMs = 500; // shorter work shows no dialog

} // namespace

bool FileTask::waitFor(QWidget* parent, const QString& label, std::atomic<bool>& cancelled, std::function<void()> job)
{
    QFutureWatcher<void> watcher;
    QEventLoop loop;
    QObject::connect(&watcher, &QFutureWatcher<void>::finished, &loop, &QEventLoop::quit);
    bool slow = false;
    QTimer::singleShot(kDialogDelayMs, &loop, [&] {
        slow = true;
        loop.quit();
    });
    watcher.setFuture(QtConcurrent::run(std::move(job)));
    // First without user input (nothing may start another file operation meanwhile); once the work is slow, with
    // a window-modal dialog that keeps the window's input away and takes the Cancel click.
    if (!watcher.isFinished())
        loop.exec(QEventLoop::ExcludeUserInputEvents);
    if (watcher.isFinished() || !slow)
        return true;
    QProgressDialog progress(label, QObject::tr("Cancel"), 0, 0, parent); // busy: there are no steps to count
    progress.setWindowModality(Qt::WindowModal);
    progress.setMinimumDuration(0);
    bool wasCancelled = false;
    const auto cancel = [&] {
        wasCancelled = true;
        cancelled = true;
        loop.quit();
    };
    QObject::connect(&progress, &QProgressDialog::canceled, &loop, cancel); // the button, or closing the dialog
    QObject::connect(&progress, &QDialog::rejected, &loop, cancel);         // Esc
    progress.show();
    if (!watcher.isFinished())
        loop.exec();
    return !wasCancelled;
}

CancellableOutput::CancellableOutput(std::ostream& out, const std::atomic<bool>& cancelled)
    : std::ostream(nullptr), m_buffer(out.rdbuf(), cancelled)
{
    rdbuf(&m_buffer);
    exceptions(std::ios::badbit);
}

void CancellableOutput::Buffer::check() const
{
    if (m_cancelled)
        throw Error("writing the file", "cancelled");
}

CancellableOutput::Buffer::int_type CancellableOutput::Buffer::overflow(int_type c)
{
    check();
    return traits_type::eq_int_type(c, traits_type::eof()) ? traits_type::not_eof(c) : m_target->sputc(char(c));
}

std::streamsize CancellableOutput::Buffer::xsputn(const char* s, std::streamsize n)
{
    check();
    return m_target->sputn(s, n);
}

} // namespace kforge::ui
