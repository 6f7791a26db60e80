// SPDX-License-Identifier: Apache-2.0
#include "application/provider_plugins.h"

#include "application/app_settings.h"

#include <kforge/plugins.h>

#include <QFileInfo>

#include <exception>

namespace kforge::ui {
namespace {

// One spelling per file: a plugin named through a symlink or a relative path is still the same plugin.
QString canonical(const QString& path)
{
    const QString resolved = QFileInfo(path).canonicalFilePath();
    return resolved.isEmpty() ? QFileInfo(path).absoluteFilePath() : resolved;
}

} // namespace

bool isProviderPluginLoaded(const QString& path)
{
    const QString wanted = canonical(path);
    for (const kforge::PluginInfo& plugin : kforge::loadedProviderPlugins()) {
        if (canonical(QString::fromStdString(plugin.path)) == wanted)
            return true;
    }
    return false;
}

QString ensureProviderPluginLoaded(const QString& path)
{
    if (isProviderPluginLoaded(path))
        return {};
    try {
        kforge::loadProviderPlugin(path.toStdString());
        return {};
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what()).replace(QLatin1Char('\n'), QLatin1Char(' '));
    }
}

QStringList loadStoredProviderPlugins()
{
    QStringList errors;
    for (const QString& path : AppSettings::providerPluginPaths()) {
        const QString error = ensureProviderPluginLoaded(path);
        if (!error.isEmpty())
            errors << error;
    }
    return errors;
}

} // namespace kforge::ui
