// SPDX-License-Identifier: Apache-2.0
#include "event_log_view.h"

#include "item_models/event_log_model.h"
#include "views/path_elision.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace kforge::ui {

EventLogView::EventLogView(EventLogModel* model, QWidget* parent)
    : QWidget(parent), m_model(model), m_filter(new QSortFilterProxyModel(this)), m_view(new QTableView(this)),
      m_filterEdit(new QLineEdit(this)), m_follow(new QCheckBox(tr("Follow"), this)), m_counters(new QLabel(this))
{
    setObjectName(QStringLiteral("eventLogView"));
    m_filter->setSourceModel(model);
    m_filter->setFilterKeyColumn(-1);
    m_filter->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_filter->setSortRole(EventLogModel::SortRole);

    m_view->setObjectName(QStringLiteral("eventLogTable"));
    m_view->setModel(m_filter);
    m_view->setItemDelegate(new PathElisionDelegate({EventLogModel::ModuleColumn}, m_view));
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    m_view->verticalHeader()->hide();
    // 100k rows: fixed row heights keep scrolling and inserting cheap.
    m_view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 6);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    const QFontMetrics metrics = m_view->fontMetrics();
    const int digit = metrics.horizontalAdvance(QLatin1Char('0'));
    m_view->setColumnWidth(EventLogModel::SequenceColumn, digit * 8);
    m_view->setColumnWidth(EventLogModel::TimeColumn, digit * 11);
    m_view->setColumnWidth(EventLogModel::ThreadColumn, digit * 7);
    int kindWidth = 0;
    for (int kind = int(kforge::EventKind::Activate); kind <= int(kforge::EventKind::Unwind); ++kind) {
        const std::string_view name = kforge::eventKindName(kforge::EventKind(kind));
        kindWidth =
            std::max(kindWidth, metrics.horizontalAdvance(QString::fromUtf8(name.data(), qsizetype(name.size()))));
    }
    m_view->setColumnWidth(EventLogModel::KindColumn, kindWidth + 16);
    m_view->setColumnWidth(EventLogModel::ModuleColumn, digit * 22);
    m_view->setColumnWidth(EventLogModel::FunctionColumn, digit * 16);
    m_view->setColumnWidth(EventLogModel::ProviderColumn, digit * 22);
    m_view->setColumnWidth(EventLogModel::DepthColumn, digit * 6);

    m_filterEdit->setObjectName(QStringLiteral("eventFilter"));
    m_filterEdit->setPlaceholderText(tr("Filter events"));
    m_filterEdit->setClearButtonEnabled(true);
    m_follow->setChecked(true);
    m_follow->setToolTip(tr("Keep the newest event in view"));
    m_counters->setObjectName(QStringLiteral("eventCounters"));
    auto* clear = new QPushButton(tr("Clear"), this);
    clear->setObjectName(QStringLiteral("clearEvents"));

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(4, 4, 4, 0);
    bar->addWidget(m_filterEdit, 1);
    bar->addWidget(m_counters);
    bar->addWidget(m_follow);
    bar->addWidget(clear);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(bar);
    layout->addWidget(m_view, 1);

    connect(m_filterEdit, &QLineEdit::textChanged, m_filter, &QSortFilterProxyModel::setFilterFixedString);
    connect(clear, &QPushButton::clicked, model, &EventLogModel::clear);
    connect(model, &EventLogModel::countersChanged, this, &EventLogView::updateCounters);
    connect(m_filter, &QAbstractItemModel::rowsInserted, this, &EventLogView::rowsAdded);
    updateCounters();
}

QTableView* EventLogView::view() const { return m_view; }

QSortFilterProxyModel* EventLogView::filterModel() const { return m_filter; }

QString EventLogView::countersText() const { return m_counters->text(); }

void EventLogView::setStreamError(const QString& error)
{
    if (error == m_streamError)
        return;
    m_streamError = error;
    updateCounters();
}

void EventLogView::updateCounters()
{
    if (!m_streamError.isEmpty()) {
        m_counters->setText(tr("no events: %1").arg(m_streamError));
        return;
    }
    const QLocale locale;
    QString text = tr("%1 events").arg(locale.toString(m_model->rowCount()));
    text += tr(" · %1 dropped").arg(locale.toString(qulonglong(m_model->dropped())));
    if (m_model->discarded() > 0)
        text += tr(" · %1 older discarded").arg(locale.toString(qulonglong(m_model->discarded())));
    m_counters->setText(text);
    m_counters->setToolTip(tr("Dropped: events the runtime could not buffer between two refreshes.\n"
                              "Discarded: rows beyond the newest %1 kept here.")
                               .arg(locale.toString(m_model->capacity())));
}

void EventLogView::rowsAdded()
{
    if (m_follow->isChecked())
        m_view->scrollToBottom();
}

} // namespace kforge::ui
