// SPDX-License-Identifier: Apache-2.0
#include "controllers/model_loader.h"

#include <kforge/error.h>
#include <kforge/model_session.h>

#include "application/app_settings.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>

namespace kforge::ui {
namespace {

struct LoadResult {
    std::shared_ptr<kforge::ModelSession> session;
    QString error;
};

LoadResult openSession(const QString& source, const ProgramChoice& choice, kforge::GraphExecutor executor,
                       int intraOpThreads)
{
    // LibTorch's own count, before any model set another: "0" must bring it back for the next model.
    static const int defaultThreads = kforge::intraOpThreadCount();
    // Exceptions must not escape into the thread pool: they would surface as an unhandled QFuture
    // exception on the UI thread.
    try {
        kforge::OpenOptions options;
        options.executor = executor;
        options.program = choice.program.toStdString();
        options.compiled = choice.compiled;
        options.intraOpThreads = intraOpThreads > 0 ? intraOpThreads : defaultThreads;
        auto session = kforge::ModelSession::open(source.toStdString(), options);
        // The file's digest, which saved plans record and a plan for another model is told by, read here rather
        // than on the UI thread the first time a plan is saved or opened.
        (void)session->fileSha256();
        return {std::move(session), {}};
    } catch (const std::exception& e) {
        return {nullptr, QString::fromUtf8(e.what())};
    } catch (...) {
        return {nullptr, QStringLiteral("%1: unknown error").arg(source)};
    }
}

} // namespace

ModelLoader::ModelLoader(QObject* parent) : QObject(parent) {}

ModelLoader::~ModelLoader()
{
    // A load still running would finish while the process tears down LibTorch's statics; wait for it.
    for (QFutureWatcherBase* watcher : findChildren<QFutureWatcherBase*>(Qt::FindDirectChildrenOnly))
        watcher->waitForFinished();
}

void ModelLoader::load(const QString& source, const ProgramChoice& choice)
{
    const bool wasBusy = isBusy();
    auto* watcher = new QFutureWatcher<LoadResult>(this);
    m_current = watcher;
    m_pendingSource = source;
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, source] { finish(watcher, source); });
    watcher->setFuture(
        QtConcurrent::run(openSession, source, choice, AppSettings::graphExecutor(), AppSettings::intraOpThreads()));
    if (!wasBusy)
        Q_EMIT busyChanged(true);
}

bool ModelLoader::isBusy() const { return m_current != nullptr; }

QString ModelLoader::pendingSource() const { return m_pendingSource; }

void ModelLoader::finish(QFutureWatcherBase* watcher, const QString& source)
{
    watcher->deleteLater();
    if (watcher != m_current)
        return;
    const LoadResult result = static_cast<QFutureWatcher<LoadResult>*>(watcher)->result();
    m_current = nullptr;
    m_pendingSource.clear();
    Q_EMIT busyChanged(false);
    if (result.session)
        Q_EMIT loaded(source, result.session);
    else
        Q_EMIT failed(source, result.error);
}

} // namespace kforge::ui
