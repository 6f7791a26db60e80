// SPDX-License-Identifier: Apache-2.0
#include "application/view_registry.h"

#include <QDockWidget>

#include <algorithm>

namespace kforge::ui {

void ViewRegistry::add(const QString& name, QWidget* view, QDockWidget* dock, Show show)
{
    m_entries.push_back({name, view, dock, std::move(show)});
}

const ViewRegistry::Entry* ViewRegistry::find(const QString& name) const
{
    const auto it = std::find_if(m_entries.begin(), m_entries.end(), [&](const Entry& e) { return e.name == name; });
    return it == m_entries.end() ? nullptr : &*it;
}

QWidget* ViewRegistry::view(const QString& name) const
{
    const Entry* entry = find(name);
    return entry ? entry->view : nullptr;
}

QDockWidget* ViewRegistry::dock(const QString& name) const
{
    const Entry* entry = find(name);
    return entry ? entry->dock : nullptr;
}

bool ViewRegistry::show(const QString& name) const
{
    const Entry* entry = find(name);
    if (!entry)
        return false;
    if (entry->show) {
        entry->show();
    } else if (entry->dock) {
        entry->dock->show();
        entry->dock->raise();
    }
    return true;
}

QStringList ViewRegistry::names() const
{
    QStringList names;
    for (const Entry& entry : m_entries)
        names << entry.name;
    return names;
}

} // namespace kforge::ui
