// SPDX-License-Identifier: Apache-2.0
#include "controllers/profile_results_source.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include <utility>

namespace kforge::ui {

ProfileResultsSource::ProfileResultsSource(QObject* parent)
    : QObject(parent), m_results(std::make_shared<const ProfileResults>()),
      m_tableJob(new QFutureWatcher<ResultsPtr>(this))
{
    connect(m_tableJob, &QFutureWatcherBase::finished, this, [this] {
        ResultsPtr computed = m_tableJob->result();
        const bool current = std::exchange(m_tableJobInput, nullptr) == m_results;
        if (current) // not replaced meanwhile by a profile or a file
            setResults(std::move(computed));
        if (!m_results->hasTable(m_shownTable)) // asked for another while this one was computed
            showTable(m_shownTable);
    });
}

// The pool's job holds only values: it may finish after this source is gone.
ProfileResultsSource::~ProfileResultsSource() = default;

void ProfileResultsSource::setResults(ResultsPtr results)
{
    m_results = results ? std::move(results) : std::make_shared<const ProfileResults>();
    Q_EMIT resultsChanged(m_results);
}

void ProfileResultsSource::showTable(const TableKey& key)
{
    m_shownTable = key;
    if (m_results->hasTable(key) || m_tableJob->isRunning())
        return; // a running job asks again for the table shown once it ends
    m_tableJobInput = m_results;
    m_tableJob->setFuture(QtConcurrent::run([results = m_results, key] { return withTable(results, key); }));
}

bool ProfileResultsSource::computingTable() const { return !m_results->hasTable(m_shownTable); }

} // namespace kforge::ui
