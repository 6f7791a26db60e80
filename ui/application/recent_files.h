// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QObject>
#include <QStringList>

namespace kforge::ui {

// The most recently opened models (absolute file paths or "builtin:NAME"), and plans and profiles, newest first,
// kept in QSettings so every window and every run of the app shares the lists.
class RecentFiles : public QObject {
    Q_OBJECT
public:
    static constexpr int kMaxEntries = 10;

    explicit RecentFiles(QObject* parent = nullptr);

    QStringList entries() const;
    bool contains(const QString& source) const;
    void add(const QString& source);
    void remove(const QString& source);
    void clear(); // models and documents

    // The plans and profiles (.kfprof) most recently opened or saved, newest first, as absolute paths.
    QStringList documents() const;
    void addDocument(const QString& path);
    void removeDocument(const QString& path);

    // The inputs last given to a model, kept with the list: "file:PATH" (a torch.save file) or
    // "specs:float32[1,16];int64[1,8]" (random tensors); "" when none were given.
    QString inputsFor(const QString& source) const;
    void setInputsFor(const QString& source, const QString& inputs);

Q_SIGNALS:
    void changed();

private:
    void store(const QStringList& entries);
    void storeDocuments(const QStringList& documents);
};

} // namespace kforge::ui
