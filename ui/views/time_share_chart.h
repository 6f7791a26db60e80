// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "item_models/profile_results.h"
#include "item_models/time_share.h"

#include <kforge/profiling.h>

#include <QStringList>
#include <QWidget>

#include <memory>
#include <vector>

class QBarCategoryAxis;
class QBarSet;
class QChart;
class QChartView;
class QComboBox;
class QHorizontalBarSeries;
class QLabel;
class QStackedLayout;
class QValueAxis;

namespace kforge::ui {

// Share of a run's total kernel time by function, by module path or by kernel: a horizontal bar chart of the
// largest groups (the rest summed as "other"), largest on top, each labelled with its percentage. Bars read
// better than a pie here because module paths are long. A combo in the widget switches the grouping.
class TimeShareChart : public QWidget {
    Q_OBJECT
public:
    static constexpr int DefaultTopCount = 12;

    explicit TimeShareChart(QWidget* parent = nullptr);
    ~TimeShareChart() override;

    // A null run shows the empty-state text.
    // The run's whole-run tables give the bars (ProfileResults makes them; a run without the grouping's table shows
    // no bars).
    void setRun(RunResults run);
    // Function or Module; any other value groups by kernel name.
    void setGrouping(kforge::GroupBy grouping);
    kforge::GroupBy grouping() const { return m_grouping; }
    // How many groups get a bar of their own before the rest is summed as "other".
    void setTopCount(int count);

    // The bars as shown, top to bottom: "gelu  42.1 %".
    int sliceCount() const;
    QStringList sliceLabels() const;
    const std::vector<TimeShareSlice>& slices() const { return m_slices; }
    // The share axis' end, in percent.
    double percentAxisMax() const;
    // What the widget says instead of a chart ("" while a chart is shown).
    QString emptyText() const;
    // Whether the chart uses Qt Charts' dark theme, following the window palette.
    bool usesDarkTheme() const;

    // Renders the widget as it looks (or at its size hint when it was never laid out) to a PNG file.
    bool savePng(const QString& path, QString* error = nullptr);

Q_SIGNALS:
    void groupingChanged(kforge::GroupBy grouping);

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuild();
    void applyTheme();
    void showEmpty(const QString& text);
    void showBarToolTip(bool hovered, int index);

    RunResults m_run;
    kforge::GroupBy m_grouping = kforge::GroupBy::Function;
    int m_topCount = DefaultTopCount;
    std::vector<TimeShareSlice> m_slices;
    QStringList m_labels;

    QComboBox* m_groupingCombo;
    QStackedLayout* m_stack;
    QLabel* m_empty;
    QChartView* m_chartView;
    QChart* m_chart;
    QHorizontalBarSeries* m_series;
    QBarSet* m_bars;
    QBarCategoryAxis* m_names;
    QValueAxis* m_percent;
};

} // namespace kforge::ui
