#include "recent_files.h"

#include <QSettings>

namespace kforge::ui {
namespace {
const QString kKey = QStringLiteral("recentFiles");
}

RecentFiles::RecentFiles(QObject* parent) : QObject(parent) {}

QStringList RecentFiles::entries() const
{
    // Read every time: another window or run may have changed the list since.
    QStringList list = QSettings().value(kKey).toStringList();
    list.removeAll(QString());
    list.removeDuplicates();
    while (list.size() > kMaxEntries)
        list.removeLast();
    return list;
}

bool RecentFiles::contains(const QString& source) const { return entries().contains(source); }

void RecentFiles::add(const QString& source)
{
    QStringList list = entries();
    list.removeAll(source);
    list.prepend(source);
    while (list.size() > kMaxEntries)
        list.removeLast();
    store(list);
}

void RecentFiles::remove(const QString& source)
{
    QStringList list = entries();
    if (list.removeAll(source) > 0)
        store(list);
}

void RecentFiles::clear() { store({}); }

void RecentFiles::store(const QStringList& entries)
{
    QSettings settings;
    settings.setValue(kKey, entries);
    settings.sync();
    Q_EMIT changed();
}

} // namespace kforge::ui
