#pragma once
#include <QObject>
#include <QStringList>

namespace kforge::ui {

// The most recently opened models (absolute file paths or "builtin:NAME"), newest first, kept in QSettings
// so every window and every run of the app shares one list.
class RecentFiles : public QObject {
    Q_OBJECT
public:
    static constexpr int kMaxEntries = 10;

    explicit RecentFiles(QObject* parent = nullptr);

    QStringList entries() const;
    bool contains(const QString& source) const;
    void add(const QString& source);
    void remove(const QString& source);
    void clear();

Q_SIGNALS:
    void changed();

private:
    void store(const QStringList& entries);
};

} // namespace kforge::ui
