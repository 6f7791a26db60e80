// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QStringList>
#include <QWidget>

class QLabel;

namespace kforge::ui {

// What the window shows before a model is open: how to open one, the built-in models, and the recent models, plans
// and profiles, each a link. It only asks: the window opens what was chosen.
class StartPage : public QWidget {
    Q_OBJECT
public:
    explicit StartPage(QWidget* parent = nullptr);

    void setBuiltins(const QStringList& sources);                            // "builtin:tiny-gpt", ...
    void setRecent(const QStringList& models, const QStringList& documents); // newest first

    QLabel* recentLabel() const { return m_recent; }
    QLabel* builtinsLabel() const { return m_builtins; }

Q_SIGNALS:
    void openFileRequested();                    // the Open Model dialog
    void modelRequested(const QString& source);  // a built-in or recent model
    void documentRequested(const QString& path); // a recent plan or profile

private:
    void follow(const QString& link);

    QLabel* m_builtins;
    QLabel* m_recent;
};

} // namespace kforge::ui
