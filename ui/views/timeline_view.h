// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/profiling.h>

#include <QStringList>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

class QPainter;
class QScrollBar;

namespace kforge::ui {

class TimelineLayout;
struct TimelineItem;
struct TimelineLane;

// A custom-painted timeline of one profile run: per host thread a lane of module ranges (nested scopes as
// sub-rows) and a lane of function calls, then a lane of kernels per (device, stream), or of CPU ops per
// thread for CPU runs; a run that recorded memory has a lane of its device's live bytes, the peak marked. The wheel
// zooms around the cursor, left-drag and horizontal scrolling pan, a double-click or Home/0 fits the run; +/- and the
// arrow keys do the same from the keyboard. Items narrower than a pixel are merged, and only the visible part of each
// row is visited, so 100k records stay fluid.
class TimelineView : public QWidget {
    Q_OBJECT
public:
    static constexpr int LabelWidth = 150; // the column of lane names
    static constexpr int LaneGap = 6;

    explicit TimelineView(QWidget* parent = nullptr);
    ~TimelineView() override;

    void setRun(std::shared_ptr<const kforge::ProfileRun> run);
    const std::shared_ptr<const kforge::ProfileRun>& run() const { return m_run; }
    // Highlights run->records[recordIndex] and scrolls it into view; -1 clears the selection.
    void selectRecord(int recordIndex);
    int selectedRecord() const { return m_selected; }
    int selectedRange() const { return m_selectedRange; } // a module's or function call's bar the user clicked
    // A measured time span: Shift+drag marks one (its duration is drawn on it), Escape clears it.
    void setMeasuredSpan(double startNs, double endNs);
    void clearMeasuredSpan();
    bool hasMeasuredSpan() const { return m_spanEndNs > m_spanStartNs; }
    std::pair<double, double> measuredSpanNs() const { return {m_spanStartNs, m_spanEndNs}; }

    // Outlines every range of this module (the module tree's selection); "" outlines none.
    void setHighlightedModule(const QString& path);
    QString highlightedModule() const { return m_highlightedModule; }
    int highlightedRangeCount() const; // module ranges of the run with that path

    // The visible time window (ns, relative to the start of the profile).
    double visibleStartNs() const { return m_startNs; }
    double visibleEndNs() const;
    void setVisibleRange(double startNs, double endNs);
    void resetZoom(); // fits the whole run

    // The measured forwards (iterations) of the run: marked by a line where each begins. F zooms to the forward
    // under the middle of the view, Page Up/Down to the previous/next one.
    int forwardCount() const { return int(m_forwards.size()); }
    std::pair<double, double> forwardSpanNs(int forward) const; // begin, end; {0, 0} when out of range
    int forwardAt(double ns) const;                             // -1 outside every forward
    void zoomToForward(int forward);

    // Geometry, for tests and for callers that place things over the view.
    QRect plotRect() const;                  // where items are drawn (right of the lane labels, below the axis)
    QRect recordRect(int recordIndex) const; // where a record is drawn (may lie outside the plot); null if none
    QRect rangeRect(int rangeIndex) const;   // the same of a range (run->ranges)
    double xForTime(double ns) const;
    double timeForX(double x) const;
    int recordAt(const QPoint& pos) const; // -1 when no record is there
    QStringList laneLabels() const;
    // The tooltip shown at `pos` (rich text; "" where nothing is under it): a record, a range, or the live bytes of
    // the memory lane at that time.
    QString toolTipAt(const QPoint& pos) const;

    QSize sizeHint() const override;

    bool savePng(const QString& path, QString* error = nullptr);

Q_SIGNALS:
    // The user clicked a record (index into run->records).
    void recordClicked(int recordIndex);
    // The user clicked a module's or function call's bar (index into run->ranges).
    void rangeClicked(int rangeIndex);
    // Shift+drag marked a span, or it was cleared (start == end == 0).
    void measuredSpanChanged(double startNs, double endNs);
    void visibleRangeChanged(double startNs, double endNs);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct Hit { // what lies under a point: a record or a range of some row, or a row of the memory lane
        int row = -1;
        int record = -1;
        int range = -1;
        bool memory = false;
        double ns = 0; // the time under the point
    };
    Hit hitAt(const QPoint& pos) const;
    QRect itemRect(std::pair<int, int> place) const; // {row, position} in the layout
    void computeRows();                              // lane and row positions, after a new run or font
    int rowTop(int row) const;                       // in widget coordinates, after vertical scrolling
    double fitNsPerPixel() const;
    void zoomAround(double x, double factor);
    void panPixels(double dx); // moves the content right by dx pixels
    void clampView();
    void updateScrollBar();
    void paintAxis(QPainter& painter) const;
    void paintLanes(QPainter& painter) const;
    void paintRow(QPainter& painter, int row) const;
    void paintMemoryLane(QPainter& painter, const TimelineLane& lane) const;
    void paintSelection(QPainter& painter) const;
    void paintForwardMarkers(QPainter& painter) const;
    void paintModuleHighlight(QPainter& painter) const;
    void paintMeasuredSpan(QPainter& painter) const;
    std::string colorKey(const TimelineItem& item) const;
    QString itemText(const TimelineItem& item) const;
    QString tooltipFor(const Hit& hit) const;

    std::shared_ptr<const kforge::ProfileRun> m_run;
    std::unique_ptr<TimelineLayout> m_layout;
    std::vector<int> m_rowY; // top of each row in content coordinates
    int m_contentHeight = 0;
    int m_rowHeight = 16;
    int m_axisHeight = 24;
    double m_startNs = 0;
    std::vector<std::pair<double, double>> m_forwards; // begin and end of each iteration, in ns
    std::vector<int> m_forwardIterations;              // each one's iteration (records' `iteration`), 0-based
    QString m_highlightedModule;
    bool m_measuring = false; // a Shift+drag is marking a span
    double m_spanStartNs = 0, m_spanEndNs = 0;
    double m_nsPerPixel = 1;
    bool m_fitted = true;     // follows resizes by fitting again until the user zooms or pans
    int m_selected = -1;      // a record
    int m_selectedRange = -1; // or a range
    QScrollBar* m_vertical;
    // Dragging: where the press happened and the view at that moment.
    bool m_pressed = false;
    bool m_dragged = false;
    QPoint m_pressPos;
    double m_pressStartNs = 0;
    int m_pressScroll = 0;
};

} // namespace kforge::ui
