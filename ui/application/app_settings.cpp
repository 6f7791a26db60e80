// SPDX-License-Identifier: Apache-2.0
#include "application/app_settings.h"

#include <QSettings>

#include <algorithm>

namespace kforge::ui::AppSettings {
namespace {

const QString kKeepLeftovers = QStringLiteral("run/keepLeftovers");
const QString kCaptureWarmup = QStringLiteral("capture/warmupIterations");
const QString kPluginPaths = QStringLiteral("plugins/paths");
const QString kOpLibraryPaths = QStringLiteral("opLibraries/paths");
const QString kGraphExecutor = QStringLiteral("run/graphExecutor");
const QString kIntraOpThreads = QStringLiteral("run/intraOpThreads");
constexpr int kDefaultCaptureWarmup = 2; // ModelSession::capture's own default
constexpr int kMaxCaptureWarmup = 100;

} // namespace

bool keepLeftovers() { return QSettings().value(kKeepLeftovers, false).toBool(); }

void setKeepLeftovers(bool keep) { QSettings().setValue(kKeepLeftovers, keep); }

int captureWarmupIterations()
{
    return std::clamp(QSettings().value(kCaptureWarmup, kDefaultCaptureWarmup).toInt(), 0, kMaxCaptureWarmup);
}

void setCaptureWarmupIterations(int count)
{
    QSettings().setValue(kCaptureWarmup, std::clamp(count, 0, kMaxCaptureWarmup));
}

kforge::GraphExecutor graphExecutor()
{
    const QString name = QSettings().value(kGraphExecutor, QStringLiteral("direct")).toString();
    return kforge::graphExecutorFromName(name.toStdString()).value_or(kforge::GraphExecutor::Direct);
}

void setGraphExecutor(kforge::GraphExecutor executor)
{
    QSettings().setValue(kGraphExecutor, QString::fromUtf8(kforge::graphExecutorName(executor).data()));
}

int intraOpThreads() { return std::clamp(QSettings().value(kIntraOpThreads, 0).toInt(), 0, kMaxIntraOpThreads); }

void setIntraOpThreads(int threads)
{
    QSettings().setValue(kIntraOpThreads, std::clamp(threads, 0, kMaxIntraOpThreads));
}

QStringList providerPluginPaths()
{
    QStringList paths = QSettings().value(kPluginPaths).toStringList();
    paths.removeAll(QString());
    paths.removeDuplicates();
    return paths;
}

void setProviderPluginPaths(const QStringList& paths) { QSettings().setValue(kPluginPaths, paths); }

QStringList opLibraryPaths()
{
    QStringList paths = QSettings().value(kOpLibraryPaths).toStringList();
    paths.removeAll(QString());
    paths.removeDuplicates();
    return paths;
}

void setOpLibraryPaths(const QStringList& paths) { QSettings().setValue(kOpLibraryPaths, paths); }

} // namespace kforge::ui::AppSettings
