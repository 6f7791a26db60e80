// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the Profile side's pages get their results: the ProfileResults value on screen, replaced whole (by a profile,
// a .kfprof read, a regrouping) and handed out by resultsChanged. The Profile tab's source is fed by its
// ProfileController; a report's holds the runs of its file and nothing else. Asking for a kernel table the value
// lacks (another grouping, another module scope) computes it on the thread pool, never on the UI thread, and
// delivers a new value with it.
#include "item_models/profile_results.h"

#include <QObject>

template <typename T> class QFutureWatcher;

namespace kforge::ui {

class ProfileResultsSource : public QObject {
    Q_OBJECT
public:
    explicit ProfileResultsSource(QObject* parent = nullptr);
    ~ProfileResultsSource() override;

    // Never null: an empty value when there are no runs.
    const ResultsPtr& results() const { return m_results; }
    void setResults(ResultsPtr results);

    // The kernel table on screen: made with every new profile (tablesToCompute), and computed off the UI thread
    // now when the results lack it (resultsChanged follows with it).
    void showTable(const TableKey& key);
    const TableKey& shownTable() const { return m_shownTable; }
    // Whether the rows of shownTable() are still being computed.
    bool computingTable() const;

    // Set by whoever is measuring runs that will replace these (a profile in progress): opening a file then waits.
    void setMeasuring(bool measuring) { m_measuring = measuring; }
    bool isMeasuring() const { return m_measuring; }

Q_SIGNALS:
    void resultsChanged(const kforge::ui::ResultsPtr& results);

private:
    ResultsPtr m_results;
    TableKey m_shownTable;
    bool m_measuring = false;
    QFutureWatcher<ResultsPtr>* m_tableJob; // the table being computed, of the results then on screen
    ResultsPtr m_tableJobInput;
};

} // namespace kforge::ui
