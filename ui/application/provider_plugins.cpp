// SPDX-License-Identifier: Apache-2.0
#include "application/provider_plugins.h"

#include "application/app_settings.h"

#include <kforge/op_libraries.h>
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

// Loads `path` with `load` unless `isLoaded`; the engine's one-line reason when it fails.
template <typename Load> QString ensureLoaded(const QString& path, bool isLoaded, Load load)
{
    if (isLoaded)
        return {};
    try {
        load(path.toStdString());
        return {};
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what()).replace(QLatin1Char('\n'), QLatin1Char(' '));
    }
}

template <typename Ensure> QStringList loadEach(const QStringList& paths, Ensure ensure)
{
    QStringList errors;
    for (const QString& path : paths)
        if (const QString error = ensure(path); !error.isEmpty())
            errors << error;
    return errors;
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
    return ensureLoaded(path, isProviderPluginLoaded(path),
                        [](const std::string& p) { kforge::loadProviderPlugin(p); });
}

QStringList loadStoredProviderPlugins()
{
    return loadEach(AppSettings::providerPluginPaths(), ensureProviderPluginLoaded);
}

bool isOpLibraryLoaded(const QString& path)
{
    const QString wanted = canonical(path);
    for (const kforge::OpLibraryInfo& library : kforge::loadedOpLibraries())
        if (canonical(QString::fromStdString(library.path)) == wanted)
            return true;
    return false;
}

QString ensureOpLibraryLoaded(const QString& path)
{
    return ensureLoaded(path, isOpLibraryLoaded(path), [](const std::string& p) { kforge::loadOpLibrary(p); });
}

QStringList loadStoredOpLibraries() { return loadEach(AppSettings::opLibraryPaths(), ensureOpLibraryLoaded); }

} // namespace kforge::ui
