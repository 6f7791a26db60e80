// SPDX-License-Identifier: Apache-2.0
#pragma once
// The window's views by name ("tree", "stacks", "plan", "chart", ...), for screenshots and tests: each workspace
// registers the views it owns, with the dock they live in, if any, and how to bring them to the front.
#include <QString>
#include <QStringList>

#include <functional>
#include <vector>

class QDockWidget;
class QWidget;

namespace kforge::ui {

class ViewRegistry {
public:
    using Show = std::function<void()>;

    // `show` brings the view to the front; without one, its dock is shown and raised.
    void add(const QString& name, QWidget* view, QDockWidget* dock = nullptr, Show show = {});
    QWidget* view(const QString& name) const;
    QDockWidget* dock(const QString& name) const;
    bool show(const QString& name) const;
    QStringList names() const;

private:
    struct Entry {
        QString name;
        QWidget* view;
        QDockWidget* dock;
        Show show;
    };
    const Entry* find(const QString& name) const;
    std::vector<Entry> m_entries;
};

} // namespace kforge::ui
