// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/profiling.h>

#include "item_models/profile_results.h"

#include <QWidget>

#include <memory>

class QCheckBox;
class QLabel;
class QLineEdit;

namespace kforge::ui {

class FlameGraphView;

// The Profile page's Flame graph tab: a breadcrumb of the zoomed frame (each level a link back up), a search box
// that highlights frames, a Differential switch (the plan's frames coloured by speedup against the baseline's)
// and PNG/SVG export, over the flame graph itself.
class FlameGraphPage : public QWidget {
    Q_OBJECT
public:
    explicit FlameGraphPage(QWidget* parent = nullptr);

    // The flame graph of the results' plan run (`showPlan`) or baseline; the plan's offers the differential colouring
    // against the baseline when the results hold both.
    void setResults(ResultsPtr results, bool showPlan);
    FlameGraphView* view() const { return m_view; }
    QLineEdit* searchEdit() const { return m_search; }
    QCheckBox* differentialBox() const { return m_differential; }
    QCheckBox* bottomUpBox() const { return m_bottomUp; }
    QCheckBox* memoryBox() const { return m_memory; }
    QLabel* legend() const { return m_legend; }
    QLabel* breadcrumbLabel() const { return m_breadcrumb; }

    bool exportImage(const QString& path, QString* error = nullptr); // .svg, else PNG

private:
    void applyRuns();
    void updateMatches(); // the search's count and share of time, cleared without a search or a profile
    void updateBreadcrumb();
    void exportInteractively();

    FlameGraphView* m_view;
    QLabel* m_breadcrumb;
    QLineEdit* m_search;
    QLabel* m_matches;
    QCheckBox* m_differential;
    QCheckBox* m_bottomUp;
    QCheckBox* m_memory;
    QLabel* m_legend; // what the differential colours mean, shown with them
    ResultsPtr m_results;
    bool m_showPlan = false;
};

} // namespace kforge::ui
