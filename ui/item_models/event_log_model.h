// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/events.h>

#include <QAbstractTableModel>

#include <cstdint>
#include <deque>
#include <vector>

namespace kforge::ui {

// The runtime's events as drained from the EventStream, oldest first, capped to the newest `capacity` rows.
class EventLogModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        SequenceColumn,
        TimeColumn, // ms since the first event in the log
        ThreadColumn,
        KindColumn,
        ModuleColumn,
        FunctionColumn,
        ProviderColumn,
        DepthColumn,
        DetailColumn,
        ColumnCount
    };
    enum Role {
        KindRole = Qt::UserRole + 1, // int (kforge::EventKind)
        SortRole,                    // raw value: sequence, ns, thread, depth as qint64; text otherwise
    };
    Q_ENUM(Column)

    static constexpr int kDefaultCapacity = 100'000;

    explicit EventLogModel(QObject* parent = nullptr);

    void setCapacity(int capacity);
    int capacity() const { return m_capacity; }
    void append(std::vector<kforge::Event> events);
    void clear();
    const kforge::Event& event(int row) const { return m_events.at(size_t(row)); }

    // Events the stream dropped because its buffer was full, and rows this log discarded at its cap.
    void setDropped(std::uint64_t dropped);
    std::uint64_t dropped() const { return m_dropped; }
    std::uint64_t discarded() const { return m_discarded; }
    std::uint64_t total() const { return m_total; } // every event appended since the last clear()

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    void countersChanged();

private:
    void trimTo(int rows);

    std::deque<kforge::Event> m_events;
    int m_capacity = kDefaultCapacity;
    std::int64_t m_timeBase = 0;
    bool m_haveTimeBase = false;
    std::uint64_t m_dropped = 0;
    std::uint64_t m_discarded = 0;
    std::uint64_t m_total = 0;
};

} // namespace kforge::ui
