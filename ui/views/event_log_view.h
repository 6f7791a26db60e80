// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace kforge::ui {

class EventLogModel;

// The runtime's event log: a table of the drained events (newest at the bottom, followed while "Follow" is
// on), a text filter over all columns, and the counters: rows, events dropped by the stream, rows discarded
// at the log's cap.
class EventLogView : public QWidget {
    Q_OBJECT
public:
    explicit EventLogView(EventLogModel* model, QWidget* parent = nullptr);

    QTableView* view() const;
    QSortFilterProxyModel* filterModel() const;
    QString countersText() const;
    // Why no events arrive (another observer holds the runtime's event stream); "" when they do.
    void setStreamError(const QString& error);

private:
    void updateCounters();
    void rowsAdded();

    EventLogModel* m_model;
    QSortFilterProxyModel* m_filter;
    QTableView* m_view;
    QLineEdit* m_filterEdit;
    QCheckBox* m_follow;
    QLabel* m_counters;
    QString m_streamError;
};

} // namespace kforge::ui
