// SPDX-License-Identifier: Apache-2.0
#include "application/status_reporter.h"

#include <QEvent>
#include <QMainWindow>
#include <QMessageBox>
#include <QMouseEvent>
#include <QStatusBar>
#include <QToolTip>

namespace kforge::ui {
namespace {

// The width a temporary message has: the bar's, less the permanent widgets beside it (the others hide while it
// shows) and the style's margins.
int messageWidth(const QStatusBar& bar)
{
    int width = bar.width() - 16;
    for (const QWidget* child : bar.findChildren<QWidget*>(Qt::FindDirectChildrenOnly))
        if (child->isVisible())
            width -= child->width() + 6;
    return std::max(width, 0);
}

} // namespace

StatusReporter::StatusReporter(QMainWindow* window) : QObject(window), m_window(window), m_bar(window->statusBar())
{
    setObjectName(QStringLiteral("statusReporter"));
    m_bar->installEventFilter(this);
    connect(m_bar, &QStatusBar::messageChanged, this, [this](const QString& shown) {
        if (shown.isEmpty()) { // timed out, or another part cleared the bar
            m_message.clear();
            m_bar->setToolTip({});
        }
    });
}

void StatusReporter::show(const QString& message, int timeoutMs)
{
    m_message = message;
    m_until = timeoutMs > 0 ? QDeadlineTimer(timeoutMs) : QDeadlineTimer(QDeadlineTimer::Forever);
    showFitted();
}

void StatusReporter::showFitted()
{
    if (m_message.isEmpty() || !m_bar)
        return;
    const QString shown = m_bar->fontMetrics().elidedText(m_message, Qt::ElideRight, messageWidth(*m_bar));
    m_bar->setToolTip(shown == m_message ? QString() : m_message);
    const qint64 left = m_until.remainingTime(); // -1: forever
    if (left == 0)
        return;
    m_bar->showMessage(shown.isEmpty() ? m_message : shown, left < 0 ? 0 : int(left));
}

bool StatusReporter::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_bar && !m_message.isEmpty()) {
        if (event->type() == QEvent::Resize)
            showFitted();
        else if (event->type() == QEvent::MouseButtonRelease && !m_bar->toolTip().isEmpty())
            QToolTip::showText(static_cast<QMouseEvent*>(event)->globalPosition().toPoint(), m_message, m_bar);
    }
    return QObject::eventFilter(watched, event);
}

void StatusReporter::clear()
{
    m_message.clear();
    if (!m_bar)
        return;
    m_bar->setToolTip({});
    m_bar->clearMessage();
}

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
