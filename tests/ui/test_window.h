// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the UI suites set up alike: settings of their own, and main windows that ask nothing.
#include "application/application_identity.h"
#include "main_window.h"

#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QString>
#include <QTest>
#include <QtGlobal>

#include <memory>

namespace kforge::ui::test {

// For initTestCase, before the first QSettings: Qt's test locations (the user's own settings stay untouched),
// emptied.
inline void useTestSettings()
{
    QStandardPaths::setTestModeEnabled(true);
    applyApplicationIdentity();
    QSettings().clear();
}

inline bool settingsAreTestSettings() { return QSettings().fileName().contains(QStringLiteral("qttest")); }

// A shown window that asks nothing: errors go to the status bar, not message boxes; it writes no window state and
// drops unsaved work without a prompt.
inline std::unique_ptr<MainWindow> makeTestWindow()
{
    auto window = std::make_unique<MainWindow>();
    window->setModalErrors(false);
    window->setPersistent(false);
    window->setUnsavedChanges(MainWindow::UnsavedChanges::Discard);
    window->setUnsavedResults(MainWindow::UnsavedChanges::Discard);
    window->show();
    return window;
}

// makeTestWindow() once `source` has loaded; a load that fails or does not finish in time is named in a warning
// (the test's own checks then fail on what is missing).
inline std::unique_ptr<MainWindow> openInTestWindow(const QString& source, int timeoutMs = 120'000)
{
    auto window = makeTestWindow();
    QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
    QSignalSpy failed(window.get(), &MainWindow::loadFailed);
    window->openSource(source);
    if (!QTest::qWaitFor([&] { return loaded.count() + failed.count() > 0; }, timeoutMs) || failed.count() > 0)
        qWarning() << "load of" << source
                   << "failed:" << (failed.isEmpty() ? QStringLiteral("timeout") : failed.first().first().toString());
    return window;
}

} // namespace kforge::ui::test
