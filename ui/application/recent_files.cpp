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
} // namespace

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

void RecentFiles::clear()
{
    storeDocuments({});
    store({});
}

QStringList RecentFiles::documents() const
{
    QStringList list = QSettings().value(kDocumentsKey).toStringList();
    list.removeAll(QString());
    list.removeDuplicates();
    while (list.size() > kMaxEntries)
        list.removeLast();
    return list;
}

void RecentFiles::addDocument(const QString& path)
{
    QStringList list = documents();
    list.removeAll(path);
    list.prepend(path);
    while (list.size() > kMaxEntries)
        list.removeLast();
    storeDocuments(list);
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
