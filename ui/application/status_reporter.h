// SPDX-License-Identifier: Apache-2.0
#pragma once
// How every part of the window tells the user what happened: a line in the status bar, and for failures a dialog
// unless modal errors are off (tests, batch runs), where the line and the part's own signal are all there is.
#include <QObject>
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
    // A warning or critical dialog, when modal errors are on (the caller showed the line and emitted its signal).
    void warningDialog(const QString& title, const QString& text);
    void errorDialog(const QString& title, const QString& text);

    bool modalErrors() const { return m_modal; }
    void setModalErrors(bool modal) { m_modal = modal; }
    bool isPersistent() const { return m_persistent; } // recent files, inputs and geometry are remembered
    void setPersistent(bool persistent) { m_persistent = persistent; }
    QMainWindow* window() const { return m_window; }

private:
    QMainWindow* m_window;
    bool m_modal = true;
    bool m_persistent = true;
};

} // namespace kforge::ui
