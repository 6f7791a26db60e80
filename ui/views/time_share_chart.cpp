// SPDX-License-Identifier: Apache-2.0
#include "views/time_share_chart.h"

#include "item_models/duration_format.h"
#include "views/widget_png.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QCursor>
#include <QEvent>
#include <QHBoxLayout>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QStackedLayout>
#include <QToolTip>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace kforge::ui {
namespace {

bool isDark(const QPalette& palette) { return palette.color(QPalette::Window).lightness() < 128; }

} // namespace

TimeShareChart::TimeShareChart(QWidget* parent)
    : QWidget(parent), m_groupingCombo(new QComboBox(this)), m_stack(new QStackedLayout), m_empty(new QLabel(this)),
      m_chartView(new QChartView(this)), m_chart(new QChart), m_series(new QHorizontalBarSeries),
      m_bars(new QBarSet(tr("Share"))), m_names(new QBarCategoryAxis), m_percent(new QValueAxis)
{
    m_groupingCombo->addItem(tr("By function"), static_cast<int>(kforge::GroupBy::Function));
    m_groupingCombo->addItem(tr("By module"), static_cast<int>(kforge::GroupBy::Module));
    m_groupingCombo->addItem(tr("By kernel"), static_cast<int>(kforge::GroupBy::Kernel));
    m_groupingCombo->setToolTip(tr("What the time is grouped by"));
    connect(m_groupingCombo, &QComboBox::currentIndexChanged, this,
            [this](int index) { setGrouping(static_cast<kforge::GroupBy>(m_groupingCombo->itemData(index).toInt())); });

    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_empty->setEnabled(false); // the palette's disabled text colour: a hint, not content

    // One series and two axes for the widget's life; a new run or grouping only refills them.
    m_series->append(m_bars);
    m_series->setBarWidth(0.7);
    m_chart->addSeries(m_series);
    m_chart->addAxis(m_names, Qt::AlignLeft);
    m_series->attachAxis(m_names);
    m_percent->setLabelFormat(QStringLiteral("%.0f"));
    m_percent->setTitleText(tr("% of the run's kernel time"));
    m_chart->addAxis(m_percent, Qt::AlignBottom);
    m_series->attachAxis(m_percent);
    connect(m_bars, &QBarSet::hovered, this, &TimeShareChart::showBarToolTip);
    m_chart->legend()->hide();
    m_chart->setAnimationOptions(QChart::NoAnimation); // a grab right after setRun must show the bars
    // The view owns the chart now. setChart() releases, but does not delete, the chart that QChartView's
    // constructor made for itself (Qt's documentation: the caller must); leaking it was an ASan finding.
    QChart* const placeholder = m_chartView->chart();
    m_chartView->setChart(m_chart);
    delete placeholder;
    m_chartView->setRenderHint(QPainter::Antialiasing);

    m_stack->addWidget(m_empty);
    m_stack->addWidget(m_chartView);

    auto* header = new QHBoxLayout;
    header->addWidget(new QLabel(tr("Time share"), this));
    header->addStretch();
    header->addWidget(m_groupingCombo);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(header);
    layout->addLayout(m_stack, 1);

    applyTheme();
    rebuild();
}

TimeShareChart::~TimeShareChart() = default;

void TimeShareChart::setRun(RunResults run)
{
    m_run = std::move(run);
    rebuild();
}

void TimeShareChart::setGrouping(kforge::GroupBy grouping)
{
    if (grouping != kforge::GroupBy::Function && grouping != kforge::GroupBy::Module)
        grouping = kforge::GroupBy::Kernel;
    const int index = m_groupingCombo->findData(static_cast<int>(grouping));
    if (m_groupingCombo->currentIndex() != index)
        m_groupingCombo->setCurrentIndex(index); // comes back here through the combo's signal
    if (grouping == m_grouping)
        return;
    m_grouping = grouping;
    rebuild();
    Q_EMIT groupingChanged(m_grouping);
}

void TimeShareChart::setTopCount(int count)
{
    m_topCount = std::max(count, 1);
    rebuild();
}

int TimeShareChart::sliceCount() const { return static_cast<int>(m_slices.size()); }

double TimeShareChart::percentAxisMax() const { return m_percent->max(); }

QStringList TimeShareChart::sliceLabels() const { return m_labels; }

QString TimeShareChart::emptyText() const { return m_stack->currentWidget() == m_empty ? m_empty->text() : QString(); }

bool TimeShareChart::usesDarkTheme() const { return m_chart->theme() == QChart::ChartThemeDark; }

void TimeShareChart::showEmpty(const QString& text)
{
    m_slices.clear();
    m_labels.clear();
    m_bars->remove(0, m_bars->count());
    m_names->clear();
    m_empty->setText(text);
    m_stack->setCurrentWidget(m_empty);
}

void TimeShareChart::rebuild()
{
    if (!m_run)
        return showEmpty(tr("No profile yet. Run a baseline or a plan, or open a saved profile (.kfprof)."));
    const kforge::GroupBy grouping =
        m_grouping == kforge::GroupBy::KernelGeometry ? kforge::GroupBy::Kernel : m_grouping;
    const auto rows = m_run.table({grouping, {}});
    m_slices = rows ? timeShareSlices(*rows, grouping, m_topCount) : std::vector<TimeShareSlice>{};
    if (m_slices.empty())
        return showEmpty(tr("This run recorded no kernels or operators."));

    m_labels.clear();
    for (const TimeShareSlice& slice : m_slices)
        m_labels << slice.label();

    // A horizontal bar chart draws its first category at the bottom; the largest belongs on top.
    QStringList categories;
    QList<qreal> percents;
    for (auto it = m_slices.rbegin(); it != m_slices.rend(); ++it) {
        categories << it->label();
        percents << it->share * 100.0;
    }
    m_bars->remove(0, m_bars->count());
    m_bars->append(percents);
    m_bars->setColor(palette().color(QPalette::Highlight));
    m_bars->setBorderColor(palette().color(QPalette::Highlight));
    m_names->clear();
    m_names->append(categories);
    // Whole-number ticks at a step of 1, 2, 5, 10, 20 or 25 %, at most six of them, up to the largest bar: "other",
    // last, may be larger than the first (it was clipped at the first bar's axis).
    double largest = 0;
    for (const TimeShareSlice& slice : m_slices)
        largest = std::max(largest, slice.share * 100.0);
    double step = 25;
    for (double candidate : {1.0, 2.0, 5.0, 10.0, 20.0})
        if (largest / candidate <= 5) {
            step = candidate;
            break;
        }
    const double top = std::clamp(step * std::ceil(largest * 1.05 / step), step, 100.0);
    m_percent->setRange(0, top);
    m_percent->setTickCount(static_cast<int>(std::lround(top / step)) + 1);

    m_stack->setCurrentWidget(m_chartView);
}

void TimeShareChart::showBarToolTip(bool hovered, int index)
{
    if (!hovered || index < 0 || static_cast<size_t>(index) >= m_slices.size())
        return QToolTip::hideText();
    const TimeShareSlice& slice = m_slices[m_slices.size() - 1 - static_cast<size_t>(index)];
    QString text = tr("%1\n%2 in %3 records (%4 of the run)")
                       .arg(slice.key, formatDuration(slice.totalUs))
                       .arg(slice.calls)
                       .arg(formatShare(slice.share));
    if (slice.isOther)
        text += tr("\nthe %1 smaller groups").arg(slice.groups);
    QToolTip::showText(QCursor::pos(), text, this);
}

void TimeShareChart::applyTheme()
{
    // A theme resets series colours; changeEvent rebuilds the bars after it.
    m_chart->setTheme(isDark(palette()) ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    m_chart->setBackgroundBrush(palette().color(QPalette::Base));
    m_chartView->setBackgroundBrush(palette().color(QPalette::Base));
}

void TimeShareChart::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyTheme();
        rebuild();
    }
}

bool TimeShareChart::savePng(const QString& path, QString* error)
{
    // A chart on a page that was never shown has no size yet; lay it out at its natural size first.
    if (!isVisible() && (width() < minimumSizeHint().width() || height() < minimumSizeHint().height()))
        resize(sizeHint().expandedTo(QSize(480, 320)));
    return saveWidgetPng(*this, path, error);
}

} // namespace kforge::ui
