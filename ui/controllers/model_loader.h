// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "application/program_choice.h"

#include <QObject>
#include <QString>

#include <memory>

class QFutureWatcherBase;

namespace kforge {
class ModelSession;
}

namespace kforge::ui {

// Opens models on the thread pool so the UI never waits for torch::jit::load. Only the latest request
// counts: a result that arrives after a newer load() was asked for is dropped.
class ModelLoader : public QObject {
    Q_OBJECT
public:
    explicit ModelLoader(QObject* parent = nullptr);
    ~ModelLoader() override;

    // `source` is a file path or "builtin:NAME", as ModelSession::open takes it; `choice` what to run of a .pt2
    // package (OpenOptions::program and compiled; {}: its default program).
    void load(const QString& source, const ProgramChoice& choice = {});
    bool isBusy() const;
    QString pendingSource() const;

Q_SIGNALS:
    void busyChanged(bool busy);
    void loaded(const QString& source, std::shared_ptr<kforge::ModelSession> session);
    void failed(const QString& source, const QString& message);

private:
    void finish(QFutureWatcherBase* watcher, const QString& source);

    QFutureWatcherBase* m_current = nullptr;
    QString m_pendingSource;
};

} // namespace kforge::ui
