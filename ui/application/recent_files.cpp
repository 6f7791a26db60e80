// SPDX-License-Identifier: Apache-2.0
#include "application/recent_files.h"

#include <QSettings>
#include <QVariantMap>

#include <iterator>

namespace kforge::ui {
namespace {
const QString kKey = QStringLiteral("recentFiles");
const QString kInputsKey = QStringLiteral("recentInputs"); // a map: model source -> inputs
const QString kDocumentsKey = QStringLiteral("recentDocuments");

// A list as stored, read every time: another window or run may have changed it since.
QStringList readList(const QString& key)
{
    QStringList list = QSettings().value(key).toStringList();
    list.removeAll(QString());
    list.removeDuplicates();
    while (list.size() > RecentFiles::kMaxEntries)
        list.removeLast();
    return list;
}

// `item` first, once, and at most kMaxEntries in all.
QStringList withFirst(QStringList list, const QString& item)
{
    list.removeAll(item);
    list.prepend(item);
    while (list.size() > RecentFiles::kMaxEntries)
        list.removeLast();
    return list;
}

} // namespace

RecentFiles::RecentFiles(QObject* parent) : QObject(parent) {}

QStringList RecentFiles::entries() const { return readList(kKey); }

bool RecentFiles::contains(const QString& source) const { return entries().contains(source); }

void RecentFiles::add(const QString& source) { store(withFirst(entries(), source)); }

void RecentFiles::remove(const QString& source)
{
    QStringList list = entries();
    if (list.removeAll(source) > 0)
        store(list);
}

void RecentFiles::clear()
{
    storeDocuments({});
    store({});
}

QStringList RecentFiles::documents() const { return readList(kDocumentsKey); }

void RecentFiles::addDocument(const QString& path)
{
    storeDocuments(withFirst(documents(), path));
    Q_EMIT changed();
}

void RecentFiles::removeDocument(const QString& path)
{
    QStringList list = documents();
    if (list.removeAll(path) > 0) {
        storeDocuments(list);
        Q_EMIT changed();
    }
}

void RecentFiles::storeDocuments(const QStringList& documents)
{
    QSettings settings;
    settings.setValue(kDocumentsKey, documents);
    settings.sync();
}

QString RecentFiles::inputsFor(const QString& source) const
{
    return QSettings().value(kInputsKey).toMap().value(source).toString();
}

void RecentFiles::setInputsFor(const QString& source, const QString& inputs)
{
    QSettings settings;
    QVariantMap map = settings.value(kInputsKey).toMap();
    if (inputs.isEmpty())
        map.remove(source);
    else
        map.insert(source, inputs);
    // Only the models still in the list keep theirs, so the map stays as short as the list.
    const QStringList models = entries();
    for (auto it = map.begin(); it != map.end();)
        it = models.contains(it.key()) || it.key() == source ? std::next(it) : map.erase(it);
    settings.setValue(kInputsKey, map);
}

void RecentFiles::store(const QStringList& entries)
{
    QSettings settings;
    settings.setValue(kKey, entries);
    settings.sync();
    Q_EMIT changed();
}

} // namespace kforge::ui
