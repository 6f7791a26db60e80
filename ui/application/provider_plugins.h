// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QString>
#include <QStringList>

namespace kforge::ui {

// Loads a provider plugin unless it is loaded already (from the command line, KFORGE_PROVIDER_PATH or an
// earlier Add): the engine refuses a second load of the same file. Returns "" on success, else the engine's
// one-line reason (the load is all or nothing: a refused plugin registers nothing).
QString ensureProviderPluginLoaded(const QString& path);
bool isProviderPluginLoaded(const QString& path);

// The settings' plugin list, at start; one message per plugin that did not load.
QStringList loadStoredProviderPlugins();

// The same for op libraries (kforge/op_libraries.h): loading one again is no error in the engine, but asking first
// keeps the messages alike.
QString ensureOpLibraryLoaded(const QString& path);
bool isOpLibraryLoaded(const QString& path);
QStringList loadStoredOpLibraries();

} // namespace kforge::ui
