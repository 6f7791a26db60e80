// SPDX-License-Identifier: Apache-2.0
#include "application/status_reporter.h"

#include <QMainWindow>
#include <QMessageBox>
#include <QStatusBar>

namespace kforge::ui {

StatusReporter::StatusReporter(QMainWindow* window) : QObject(window), m_window(window) {}

void StatusReporter::show(const QString& message, int timeoutMs)
{
    m_window->statusBar()->showMessage(message, timeoutMs);
}

void StatusReporter::clear() { m_window->statusBar()->clearMessage(); }

void StatusReporter::warningDialog(const QString& title, const QString& text)
{
    if (m_modal)
        QMessageBox::warning(m_window, title, text);
}

void StatusReporter::errorDialog(const QString& title, const QString& text)
{
    if (m_modal)
        QMessageBox::critical(m_window, title, text);
}

} // namespace kforge::ui
