// SPDX-License-Identifier: Apache-2.0
#pragma once
// How every part of the window tells the user what happened: a line in the status bar, and for failures a dialog
// unless modal errors are off (tests, batch runs), where the line and the part's own signal are all there is. A line
// wider than the bar ends in "…" where it is cut (QStatusBar clips it mid-word otherwise), and the whole of it is the
// bar's tooltip and shows on a click: a finished job's message is never lost at the bar's edge.
#include <QDeadlineTimer>
#include <QObject>
#include <QPointer>
#include <QStatusBar>
#include <QString>

class QMainWindow;

namespace kforge::ui {

class StatusReporter : public QObject {
    Q_OBJECT
public:
    static constexpr int kMessageTimeoutMs = 10'000;

    explicit StatusReporter(QMainWindow* window);

    void show(const QString& message, int timeoutMs = kMessageTimeoutMs); // 0: until the next one
    void clear();
    // The line shown, whole (the bar may show it cut); "" once it timed out or was cleared.
    QString message() const { return m_message; }
    // A warning or critical dialog, when modal errors are on (the caller showed the line and emitted its signal).
    void warningDialog(const QString& title, const QString& text);
    void errorDialog(const QString& title, const QString& text);

    bool modalErrors() const { return m_modal; }
    void setModalErrors(bool modal) { m_modal = modal; }
    bool isPersistent() const { return m_persistent; } // recent files, inputs and geometry are remembered
    void setPersistent(bool persistent) { m_persistent = persistent; }
    QMainWindow* window() const { return m_window; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override; // the bar's resizes and clicks

private:
    void showFitted(); // m_message, cut to the bar's width, for what is left of its time

    QMainWindow* m_window;
    QPointer<QStatusBar> m_bar; // the window's, taken once: statusBar() would make another while the window goes
    QString m_message;
    QDeadlineTimer m_until; // of m_message
    bool m_modal = true;
    bool m_persistent = true;
};

} // namespace kforge::ui
