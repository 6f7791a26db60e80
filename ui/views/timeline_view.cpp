// SPDX-License-Identifier: Apache-2.0
#include "views/timeline_view.h"

#include "item_models/timeline_layout.h"
#include "views/widget_png.h"

#include <QEvent>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <limits>
#include <cmath>

namespace kforge::ui {
namespace {

constexpr double ZoomStep = 0.8; // per wheel notch or key press
constexpr double MinNsPerPixel = 0.01;
constexpr int DragThreshold = 3; // pixels a press may wander and still be a click
constexpr int PickTolerance = 2; // pixels around a thin item that still hit it

} // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent), m_vertical(new QScrollBar(Qt::Vertical, this))
{
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMinimumSize(LabelWidth + 120, 80);
    m_vertical->hide();
    connect(m_vertical, &QScrollBar::valueChanged, this, qOverload<>(&QWidget::update));
    setRun(nullptr);
}

TimelineView::~TimelineView() = default;

QSize TimelineView::sizeHint() const { return {900, 360}; }

void TimelineView::setRun(std::shared_ptr<const kforge::ProfileRun> run)
{
    m_run = std::move(run);
    m_layout = std::make_unique<TimelineLayout>(m_run ? *m_run : kforge::ProfileRun{});
    m_forwards.clear();
    m_forwardIterations.clear();
    if (m_run) {
        const auto extend = [this](int iteration, std::int64_t start, std::int64_t duration) {
            if (iteration < 0)
                return;
            if (size_t(iteration) >= m_forwards.size())
                m_forwards.resize(size_t(iteration) + 1, {std::numeric_limits<double>::max(), 0.0});
            auto& [begin, end] = m_forwards[size_t(iteration)];
            begin = std::min(begin, double(start));
            end = std::max(end, double(start + duration));
        };
        for (const kforge::KernelRecord& r : m_run->records)
            extend(r.iteration, r.startNs, r.durationNs);
        for (const kforge::RangeRecord& r : m_run->ranges)
            extend(r.iteration, r.startNs, r.durationNs);
        for (size_t i = 0; i < m_forwards.size(); ++i)
            m_forwardIterations.push_back(int(i));
        for (size_t i = m_forwards.size(); i-- > 0;) // iterations without records
            if (m_forwards[i].second <= 0.0) {
                m_forwards.erase(m_forwards.begin() + std::ptrdiff_t(i));
                m_forwardIterations.erase(m_forwardIterations.begin() + std::ptrdiff_t(i));
            }
    }
    m_selected = -1;
    m_selectedRange = -1;
    m_pressed = false;
    computeRows();
    m_vertical->setValue(0);
    resetZoom();
}

void TimelineView::computeRows()
{
    m_rowHeight = fontMetrics().height() + 4;
    m_axisHeight = fontMetrics().height() + 10;
    m_rowY.assign(static_cast<size_t>(m_layout->rowCount()), 0);
    int y = 0;
    for (const TimelineLane& lane : m_layout->lanes()) {
        for (int row = lane.firstRow; row < lane.firstRow + lane.rowCount; ++row, y += m_rowHeight)
            m_rowY[static_cast<size_t>(row)] = y;
        y += LaneGap;
    }
    m_contentHeight = y;
    updateScrollBar();
}

void TimelineView::updateScrollBar()
{
    const int visibleHeight = std::max(0, height() - m_axisHeight);
    const int maximum = std::max(0, m_contentHeight - visibleHeight);
    m_vertical->setGeometry(width() - m_vertical->sizeHint().width(), m_axisHeight, m_vertical->sizeHint().width(),
                            visibleHeight);
    m_vertical->setRange(0, maximum);
    m_vertical->setPageStep(visibleHeight);
    m_vertical->setSingleStep(m_rowHeight);
    const bool wasHidden = m_vertical->isHidden();
    m_vertical->setHidden(maximum == 0);
    if (wasHidden != m_vertical->isHidden() && m_fitted)
        resetZoom(); // the plot got narrower or wider
}

QRect TimelineView::plotRect() const
{
    const int scrollBar = m_vertical->isHidden() ? 0 : m_vertical->width();
    return {LabelWidth, m_axisHeight, std::max(1, width() - LabelWidth - scrollBar),
            std::max(0, height() - m_axisHeight)};
}

double TimelineView::visibleEndNs() const { return m_startNs + plotRect().width() * m_nsPerPixel; }

double TimelineView::xForTime(double ns) const { return plotRect().left() + (ns - m_startNs) / m_nsPerPixel; }

double TimelineView::timeForX(double x) const { return m_startNs + (x - plotRect().left()) * m_nsPerPixel; }

int TimelineView::rowTop(int row) const
{
    return m_axisHeight + m_rowY[static_cast<size_t>(row)] - m_vertical->value();
}

double TimelineView::fitNsPerPixel() const
{
    const double span = std::max<double>(1000.0, double(m_layout->endNs() - m_layout->beginNs()));
    return span * 1.04 / plotRect().width(); // 2 % margin on each side
}

void TimelineView::resetZoom()
{
    const double span = std::max<double>(1000.0, double(m_layout->endNs() - m_layout->beginNs()));
    m_nsPerPixel = fitNsPerPixel();
    m_startNs = double(m_layout->beginNs()) - span * 0.02;
    m_fitted = true;
    update();
    Q_EMIT visibleRangeChanged(m_startNs, visibleEndNs());
}

void TimelineView::setMeasuredSpan(double startNs, double endNs)
{
    m_spanStartNs = std::min(startNs, endNs);
    m_spanEndNs = std::max(startNs, endNs);
    update();
    Q_EMIT measuredSpanChanged(m_spanStartNs, m_spanEndNs);
}

void TimelineView::clearMeasuredSpan()
{
    m_spanStartNs = m_spanEndNs = 0;
    update();
    Q_EMIT measuredSpanChanged(0, 0);
}

void TimelineView::setHighlightedModule(const QString& path)
{
    if (path == m_highlightedModule)
        return;
    m_highlightedModule = path;
    update();
}

int TimelineView::highlightedRangeCount() const
{
    if (!m_run || m_highlightedModule.isEmpty())
        return 0;
    const std::string path = m_highlightedModule.toStdString();
    return int(std::count_if(m_run->ranges.begin(), m_run->ranges.end(),
                             [&](const kforge::RangeRecord& r) { return r.kind == "module" && r.name == path; }));
}

std::pair<double, double> TimelineView::forwardSpanNs(int forward) const
{
    return forward >= 0 && size_t(forward) < m_forwards.size() ? m_forwards[size_t(forward)]
                                                               : std::pair<double, double>{0.0, 0.0};
}

int TimelineView::forwardAt(double ns) const
{
    for (size_t i = 0; i < m_forwards.size(); ++i)
        if (ns >= m_forwards[i].first && ns <= m_forwards[i].second)
            return int(i);
    return -1;
}

void TimelineView::zoomToForward(int forward)
{
    const auto [begin, end] = forwardSpanNs(forward);
    if (end <= begin)
        return;
    const double margin = (end - begin) * 0.02;
    setVisibleRange(begin - margin, end + margin);
}

void TimelineView::setVisibleRange(double startNs, double endNs)
{
    if (!(endNs > startNs))
        return;
    m_nsPerPixel = std::clamp((endNs - startNs) / plotRect().width(), MinNsPerPixel, 2 * fitNsPerPixel());
    m_startNs = startNs;
    m_fitted = false;
    clampView();
    update();
    Q_EMIT visibleRangeChanged(m_startNs, visibleEndNs());
}

void TimelineView::clampView()
{
    // Keep at least half a window of the run in sight, so panning cannot lose it.
    const double half = plotRect().width() * m_nsPerPixel / 2;
    m_startNs = std::clamp(m_startNs, double(m_layout->beginNs()) - half, double(m_layout->endNs()) - half);
}

void TimelineView::zoomAround(double x, double factor)
{
    const double anchorNs = timeForX(x);
    m_nsPerPixel = std::clamp(m_nsPerPixel * factor, MinNsPerPixel, 2 * fitNsPerPixel());
    m_startNs = anchorNs - (x - plotRect().left()) * m_nsPerPixel;
    m_fitted = false;
    clampView();
    update();
    Q_EMIT visibleRangeChanged(m_startNs, visibleEndNs());
}

void TimelineView::panPixels(double dx)
{
    m_startNs -= dx * m_nsPerPixel;
    m_fitted = false;
    clampView();
    update();
    Q_EMIT visibleRangeChanged(m_startNs, visibleEndNs());
}

void TimelineView::selectRecord(int recordIndex)
{
    const auto [row, position] = m_layout->locate(recordIndex);
    m_selected = row < 0 ? -1 : recordIndex;
    m_selectedRange = -1;
    if (m_selected >= 0) {
        const TimelineItem& item = m_layout->row(row)[static_cast<size_t>(position)];
        const double visible = visibleEndNs() - m_startNs;
        const double duration = double(item.endNs - item.startNs);
        if (duration > visible * 0.8)
            setVisibleRange(item.startNs - duration / 2, item.endNs + duration / 2);
        else if (item.startNs < m_startNs || item.endNs > visibleEndNs())
            setVisibleRange((item.startNs + item.endNs) / 2.0 - visible / 2,
                            (item.startNs + item.endNs) / 2.0 + visible / 2);
        const int top = m_rowY[static_cast<size_t>(row)];
        const int visibleHeight = plotRect().height();
        if (top < m_vertical->value())
            m_vertical->setValue(top);
        else if (top + m_rowHeight > m_vertical->value() + visibleHeight)
            m_vertical->setValue(top + m_rowHeight - visibleHeight);
    }
    update();
}

QRect TimelineView::recordRect(int recordIndex) const { return itemRect(m_layout->locate(recordIndex)); }

QRect TimelineView::rangeRect(int rangeIndex) const { return itemRect(m_layout->locateRange(rangeIndex)); }

QRect TimelineView::itemRect(std::pair<int, int> place) const
{
    const auto [row, position] = place;
    if (row < 0)
        return {};
    const TimelineItem& item = m_layout->row(row)[static_cast<size_t>(position)];
    const double x0 = xForTime(double(item.startNs));
    const double x1 = std::max(xForTime(double(item.endNs)), x0 + 1);
    return QRectF(QPointF(x0, rowTop(row) + 1), QPointF(x1, rowTop(row) + m_rowHeight - 1)).toAlignedRect();
}

TimelineView::Hit TimelineView::hitAt(const QPoint& pos) const
{
    Hit hit;
    const QRect plot = plotRect();
    if (!plot.contains(pos) || m_rowY.empty())
        return hit;
    const int contentY = pos.y() - m_axisHeight + m_vertical->value();
    const auto next = std::upper_bound(m_rowY.begin(), m_rowY.end(), contentY);
    if (next == m_rowY.begin())
        return hit;
    const int row = static_cast<int>(next - m_rowY.begin()) - 1;
    if (contentY >= m_rowY[static_cast<size_t>(row)] + m_rowHeight)
        return hit; // in the gap between lanes
    const double ns = timeForX(pos.x());
    if (m_layout->lanes()[size_t(m_layout->laneOfRow(row))].kind == TimelineLane::Kind::Memory)
        return {row, -1, -1, true, ns};
    const double tolerance = PickTolerance * m_nsPerPixel;
    const auto& items = m_layout->row(row);
    // Prefer the item under the cursor, else the nearest within the tolerance (thin kernels are hard to hit).
    double best = tolerance;
    for (size_t i = m_layout->firstEndingAfter(row, ns - tolerance); i < items.size(); ++i) {
        const TimelineItem& item = items[i];
        if (double(item.startNs) > ns + tolerance)
            break;
        const double distance = ns < item.startNs ? item.startNs - ns : ns > item.endNs ? ns - item.endNs : 0.0;
        if (distance <= best) {
            best = distance;
            hit = {row, item.record, item.range};
            if (distance == 0)
                break;
        }
    }
    return hit;
}

int TimelineView::recordAt(const QPoint& pos) const { return hitAt(pos).record; }

QString TimelineView::toolTipAt(const QPoint& pos) const
{
    const Hit hit = hitAt(pos);
    return hit.record >= 0 || hit.range >= 0 || hit.memory ? tooltipFor(hit) : QString();
}

QStringList TimelineView::laneLabels() const
{
    QStringList labels;
    for (const TimelineLane& lane : m_layout->lanes())
        labels << lane.label;
    return labels;
}

bool TimelineView::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        if (const QString text = toolTipAt(help->pos()); !text.isEmpty())
            QToolTip::showText(help->globalPos(), text, this);
        else
            QToolTip::hideText();
        return true;
    }
    if (event->type() == QEvent::FontChange)
        computeRows();
    return QWidget::event(event);
}

void TimelineView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    updateScrollBar();
    if (m_fitted)
        resetZoom();
    else
        clampView();
}

void TimelineView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton)
        return QWidget::mousePressEvent(event);
    m_pressed = true;
    m_dragged = false;
    m_measuring = event->modifiers().testFlag(Qt::ShiftModifier);
    m_pressPos = event->position().toPoint();
    m_pressStartNs = m_startNs;
    m_pressScroll = m_vertical->value();
}

void TimelineView::mouseMoveEvent(QMouseEvent* event)
{
    if (!m_pressed)
        return QWidget::mouseMoveEvent(event);
    const QPoint delta = event->position().toPoint() - m_pressPos;
    if (!m_dragged && delta.manhattanLength() < DragThreshold)
        return;
    if (m_measuring) {
        m_dragged = true;
        const double a = timeForX(m_pressPos.x()), b = timeForX(event->position().x());
        setMeasuredSpan(std::min(a, b), std::max(a, b));
        return;
    }
    if (!m_dragged)
        setCursor(Qt::ClosedHandCursor);
    m_dragged = true;
    m_startNs = m_pressStartNs - delta.x() * m_nsPerPixel;
    m_fitted = false;
    clampView();
    m_vertical->setValue(m_pressScroll - delta.y());
    update();
    Q_EMIT visibleRangeChanged(m_startNs, visibleEndNs());
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton || !m_pressed)
        return QWidget::mouseReleaseEvent(event);
    m_pressed = false;
    if (m_dragged) {
        if (!m_measuring)
            unsetCursor();
        return;
    }
    const Hit hit = hitAt(event->position().toPoint());
    m_selected = hit.record;
    m_selectedRange = hit.record < 0 ? hit.range : -1;
    update();
    if (m_selected >= 0)
        Q_EMIT recordClicked(m_selected);
    else if (m_selectedRange >= 0)
        Q_EMIT rangeClicked(m_selectedRange);
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton)
        resetZoom();
}

void TimelineView::wheelEvent(QWheelEvent* event)
{
    const QPoint angle = event->angleDelta();
    const double x = event->position().x();
    if (angle.x() != 0 && std::abs(angle.x()) > std::abs(angle.y()))
        panPixels(angle.x() / 120.0 * plotRect().width() / 8);
    else if (event->modifiers() & Qt::ShiftModifier)
        panPixels(angle.y() / 120.0 * plotRect().width() / 8);
    else if (x < LabelWidth) // over the lane names the wheel scrolls the lanes
        m_vertical->setValue(m_vertical->value() - static_cast<int>(angle.y() / 120.0 * 3 * m_rowHeight));
    else if (angle.y() != 0)
        zoomAround(x, std::pow(ZoomStep, angle.y() / 120.0));
    event->accept();
}

void TimelineView::keyPressEvent(QKeyEvent* event)
{
    const QRect plot = plotRect();
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        return zoomAround(plot.center().x(), ZoomStep);
    case Qt::Key_Minus:
        return zoomAround(plot.center().x(), 1 / ZoomStep);
    case Qt::Key_Left:
        return panPixels(plot.width() / 8.0);
    case Qt::Key_Right:
        return panPixels(-plot.width() / 8.0);
    case Qt::Key_Up:
        return m_vertical->setValue(m_vertical->value() - m_rowHeight);
    case Qt::Key_Down:
        return m_vertical->setValue(m_vertical->value() + m_rowHeight);
    case Qt::Key_Home:
    case Qt::Key_0:
        return resetZoom();
    case Qt::Key_Escape:
        if (hasMeasuredSpan())
            return clearMeasuredSpan();
        return QWidget::keyPressEvent(event);
    case Qt::Key_F: {
        const int forward = forwardAt((m_startNs + visibleEndNs()) / 2);
        return zoomToForward(forward >= 0 ? forward : 0);
    }
    case Qt::Key_PageDown:
    case Qt::Key_PageUp: {
        const int current = forwardAt((m_startNs + visibleEndNs()) / 2);
        const int step = event->key() == Qt::Key_PageDown ? 1 : -1;
        return zoomToForward(std::clamp(current < 0 ? 0 : current + step, 0, std::max(0, forwardCount() - 1)));
    }
    default:
        QWidget::keyPressEvent(event);
    }
}

bool TimelineView::savePng(const QString& path, QString* error)
{
    // A view on a page that was never shown has no size yet; lay it out at its natural size first.
    if (!isVisible() && (width() < minimumWidth() + 1 || height() < minimumHeight() + 1))
        resize(sizeHint());
    return saveWidgetPng(*this, path, error);
}

} // namespace kforge::ui
