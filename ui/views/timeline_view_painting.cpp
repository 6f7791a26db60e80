// SPDX-License-Identifier: Apache-2.0
// What the timeline looks like: the axis, the lanes, the items (coloured by a stable hash of their function
// and provider, thin ones merged), the selection, and the tooltip text.
#include "views/timeline_view.h"

#include "item_models/duration_format.h"
#include "item_models/format.h"
#include "item_models/semantic_colors.h"
#include "item_models/time_axis.h"
#include "item_models/timeline_layout.h"
#include "views/label_fit.h"

#include <QPainter>
#include <QPolygonF>

#include <algorithm>
#include <cmath>

namespace kforge::ui {
namespace {

// FNV-1a: the same name gets the same colour in every run and on every machine (qHash is seeded).
std::uint32_t stableHash(const std::string& text)
{
    std::uint32_t hash = 2166136261u;
    for (unsigned char c : text)
        hash = (hash ^ c) * 16777619u;
    return hash;
}

// A module path in `width` pixels: whole if it fits; else the longest tail of whole names that fits, after an
// ellipsis ("…blocks.3.attn", "…attn"); else the last name cut while it can be read, or nothing. A list index stays
// with its list ("blocks.3" is one name here: "…3" would say nothing).
QString fitModuleLabel(const QString& path, const QFontMetrics& metrics, int width)
{
    if (metrics.horizontalAdvance(path) <= width)
        return path;
    QStringList names;
    for (const QString& part : path.split(QLatin1Char('.'))) {
        bool numeric = false;
        part.toInt(&numeric);
        if (numeric && !names.isEmpty())
            names.last() += QLatin1Char('.') + part;
        else
            names << part;
    }
    const QString ellipsis(QChar(0x2026));
    for (qsizetype first = 1; first < names.size(); ++first) {
        const QString tail = ellipsis + names.mid(first).join(QLatin1Char('.'));
        if (metrics.horizontalAdvance(tail) <= width)
            return tail;
    }
    return readableElision(names.last(), metrics, width);
}

} // namespace

void TimelineView::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Base));
    if (m_layout->empty()) {
        painter.setPen(palette().color(QPalette::Disabled, QPalette::Text));
        painter.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
                         m_run ? tr("This run recorded no kernels, operators or ranges.")
                               : tr("No profile yet. Run a baseline or a plan, or open a saved profile (.kfprof)."));
        return;
    }
    paintLanes(painter);
    paintForwardMarkers(painter);
    paintModuleHighlight(painter);
    paintMeasuredSpan(painter);
    paintSelection(painter);
    paintAxis(painter);
}

// A dashed line where each measured forward begins, labelled in the axis, so ten forwards read as ten.
void TimelineView::paintForwardMarkers(QPainter& painter) const
{
    if (m_forwards.size() < 2)
        return;
    const QRect plot = plotRect();
    QColor line = palette().color(QPalette::Highlight);
    painter.save();
    painter.setClipRect(plot.adjusted(0, -m_axisHeight, 0, 0));
    for (size_t i = 0; i < m_forwards.size(); ++i) {
        const double x = xForTime(m_forwards[i].first);
        if (x < plot.left() || x > plot.right())
            continue;
        painter.setPen(QPen(line, 1, Qt::DashLine));
        painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    }
    painter.restore();
}

void TimelineView::paintAxis(QPainter& painter) const
{
    const QRect plot = plotRect();
    painter.fillRect(QRect(0, 0, width(), m_axisHeight), palette().color(QPalette::Window));
    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(QRect(6, 0, LabelWidth - 12, m_axisHeight), Qt::AlignVCenter | Qt::AlignLeft,
                     tr("%1 shown").arg(formatDuration((visibleEndNs() - m_startNs) / 1000.0)));
    QColor grid = palette().color(QPalette::Text);
    grid.setAlpha(40);
    for (const TimeTick& tick : timeTicks(m_startNs, visibleEndNs(), std::max(2, plot.width() / 110))) {
        const int x = static_cast<int>(std::lround(xForTime(tick.ns)));
        painter.setPen(grid);
        painter.drawLine(x, m_axisHeight, x, height());
        painter.setPen(palette().color(QPalette::WindowText));
        painter.drawLine(x, m_axisHeight - 5, x, m_axisHeight - 1);
        painter.drawText(QRect(x + 3, 0, 100, m_axisHeight - 2), Qt::AlignBottom | Qt::AlignLeft, tick.label);
    }
    if (m_forwards.size() > 1) { // which forward each marker starts, above the ticks' labels, none over another
        painter.setPen(palette().color(QPalette::Highlight));
        double freeFrom = plot.left();
        for (size_t i = 0; i < m_forwards.size(); ++i) {
            const double x = xForTime(m_forwards[i].first);
            const QString label = tr("forward %1").arg(m_forwardIterations[i] + 1);
            const double width = fontMetrics().horizontalAdvance(label) + 6;
            if (x < freeFrom || x > plot.right())
                continue;
            painter.drawText(QRectF(x + 3, 0, width, m_axisHeight / 2.0 + 2), Qt::AlignTop | Qt::AlignLeft, label);
            freeFrom = x + width;
        }
    }
    painter.drawLine(0, m_axisHeight - 1, width(), m_axisHeight - 1);
}

void TimelineView::paintLanes(QPainter& painter) const
{
    const QRect plot = plotRect();
    painter.save();
    painter.setClipRect(QRect(0, m_axisHeight, width(), plot.height()));
    QColor separator = palette().color(QPalette::Text);
    separator.setAlpha(60);
    for (const TimelineLane& lane : m_layout->lanes()) {
        const int top = rowTop(lane.firstRow);
        const int bottom = top + lane.rowCount * m_rowHeight;
        if (bottom < m_axisHeight || top > height())
            continue;
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(QRect(6, top, LabelWidth - 12, m_rowHeight), Qt::AlignVCenter | Qt::AlignLeft,
                         fontMetrics().elidedText(lane.label, Qt::ElideRight, LabelWidth - 12));
        painter.setPen(separator);
        painter.drawLine(0, bottom + LaneGap / 2, width(), bottom + LaneGap / 2);
        painter.setClipRect(plot.intersected(QRect(0, m_axisHeight, width(), plot.height())));
        if (lane.kind == TimelineLane::Kind::Memory)
            paintMemoryLane(painter, lane);
        else
            for (int row = lane.firstRow; row < lane.firstRow + lane.rowCount; ++row)
                if (rowTop(row) + m_rowHeight >= m_axisHeight && rowTop(row) <= height())
                    paintRow(painter, row);
        painter.setClipRect(QRect(0, m_axisHeight, width(), plot.height()));
    }
    painter.restore();
}

std::string TimelineView::colorKey(const TimelineItem& item) const
{
    if (item.record >= 0) {
        const kforge::KernelRecord& record = m_run->records[static_cast<size_t>(item.record)];
        return record.function.empty() ? record.name : record.function + "/" + record.provider;
    }
    const kforge::RangeRecord& range = m_run->ranges[static_cast<size_t>(item.range)];
    return range.kind == "module" ? range.name : range.name + "/" + range.provider;
}

QString TimelineView::itemText(const TimelineItem& item) const
{
    if (item.record >= 0)
        return QString::fromStdString(m_run->records[static_cast<size_t>(item.record)].name);
    const kforge::RangeRecord& range = m_run->ranges[static_cast<size_t>(item.range)];
    return range.kind == "module" ? formatModulePath(range.name) : QString::fromStdString(range.name);
}

void TimelineView::paintRow(QPainter& painter, int row) const
{
    const auto& items = m_layout->row(row);
    const TimelineLane& lane = m_layout->lanes()[static_cast<size_t>(m_layout->laneOfRow(row))];
    const int top = rowTop(row) + 1;
    const int h = m_rowHeight - 2;
    const double viewEnd = visibleEndNs();
    const double plotLeft = plotRect().left();
    QColor merged = palette().color(QPalette::Text);
    merged.setAlpha(110);

    // Items thinner than a pixel are collected into one grey run per stretch of adjacent pixels.
    bool inRun = false;
    double runStart = 0, runEnd = 0;
    const auto flush = [&] {
        if (inRun)
            painter.fillRect(QRectF(runStart, top, std::max(1.0, runEnd - runStart), h), merged);
        inRun = false;
    };
    size_t i = m_layout->firstEndingAfter(row, m_startNs);
    while (i < items.size() && double(items[i].startNs) <= viewEnd) {
        const TimelineItem& item = items[i];
        const double x0 = xForTime(double(item.startNs));
        const double x1 = xForTime(double(item.endNs));
        if (x1 - x0 < 1.0) {
            if (inRun && x0 > runEnd + 1)
                flush();
            if (!inRun) {
                inRun = true;
                runStart = x0;
            }
            // Everything ending within this pixel column merges anyway: jump past it without looking.
            const size_t next = std::max(i + 1, m_layout->firstEndingAfter(row, timeForX(std::floor(x1) + 1)));
            runEnd = std::max(x1, xForTime(double(items[next - 1].endNs)));
            i = next;
            continue;
        }
        flush();
        // Clipped to the plot so that the name of an item reaching in from the left stays readable; a pixel
        // of gap keeps neighbours of the same colour apart.
        QRectF box(QPointF(std::max(x0, plotLeft - 1), top), QPointF(std::min(x1, double(width()) + 1), top + h));
        if (box.width() >= 3)
            box.adjust(0, 0, -1, 0);
        const QColor fill =
            identityColor(stableHash(colorKey(item)), lane.kind == TimelineLane::Kind::Modules, palette());
        painter.fillRect(box, fill);
        if (box.width() >= 24) {
            const QRectF textBox = box.adjusted(3, 0, -3, 0);
            const int room = static_cast<int>(textBox.width());
            const QString text = lane.kind == TimelineLane::Kind::Modules
                                     ? fitModuleLabel(itemText(item), fontMetrics(), room)
                                     : readableElision(itemText(item), fontMetrics(), room);
            if (!text.isEmpty()) {
                painter.setPen(textColorOn(fill));
                painter.drawText(textBox, Qt::AlignVCenter | Qt::AlignLeft, text);
            }
        }
        ++i;
    }
    flush();
}

// The memory lane: the device's live bytes as a filled step curve, its height the run's peak (fixed, so zooming never
// rescales it), the peak marked with its bytes. Only the visible steps are visited; steps within one pixel column
// draw their highest value, so a short-lived spike between two frees still shows.
void TimelineView::paintMemoryLane(QPainter& painter, const TimelineLane& lane) const
{
    const kforge::LiveBytesSeries& series = m_layout->liveBytes();
    if (series.peak < 0)
        return;
    const auto& steps = series.steps;
    const kforge::LiveBytesStep& peak = steps[size_t(series.peak)];
    const double top = rowTop(lane.firstRow) + fontMetrics().height() + 2; // room for the peak's label
    const double bottom = rowTop(lane.firstRow) + lane.rowCount * m_rowHeight - 1;
    const auto yFor = [&](double bytes) {
        return bottom - (bottom - top) * std::clamp(bytes / std::max<double>(1, peak.liveBytes), 0.0, 1.0);
    };
    const QRect plot = plotRect();
    const double left = plot.left() - 1, right = plot.right() + 1;
    double value = double(m_layout->liveBytesAt(timeForX(left)));
    QPolygonF area;
    area << QPointF(left, bottom) << QPointF(left, yFor(value));
    const double viewEnd = timeForX(right);
    for (size_t i = m_layout->firstStepFrom(timeForX(left)); i < steps.size() && double(steps[i].timeNs) <= viewEnd;) {
        const double x = xForTime(double(steps[i].timeNs));
        double highest = double(steps[i].liveBytes);
        size_t last = i;
        while (last + 1 < steps.size() && xForTime(double(steps[last + 1].timeNs)) < std::floor(x) + 1)
            highest = std::max(highest, double(steps[++last].liveBytes));
        area << QPointF(x, yFor(value)) << QPointF(x, yFor(highest));
        value = double(steps[last].liveBytes);
        if (last > i)
            area << QPointF(x + 1, yFor(highest)) << QPointF(x + 1, yFor(value));
        i = last + 1;
    }
    area << QPointF(right, yFor(value)) << QPointF(right, bottom);
    QColor fill = semanticColor(Semantic::Function, palette());
    painter.setPen(QPen(fill.darker(130), 1));
    fill.setAlpha(140);
    painter.setBrush(fill);
    painter.drawPolygon(area);
    painter.setBrush(Qt::NoBrush);

    const double peakX = xForTime(double(peak.timeNs));
    if (peakX < plot.left() - 1 || peakX > plot.right() + 1)
        return;
    const QColor mark = semanticColor(Semantic::Slower, palette());
    painter.setPen(QPen(mark, 1, Qt::DashLine));
    painter.drawLine(QPointF(peakX, top - 1), QPointF(peakX, bottom));
    const QString label = tr("peak %1").arg(QString::fromStdString(kforge::bytesText(double(peak.liveBytes))));
    const double labelWidth = fontMetrics().horizontalAdvance(label) + 6;
    const double labelX = peakX + labelWidth <= plot.right() ? peakX + 3 : peakX - labelWidth; // inside the plot
    painter.setPen(semanticTextColor(Semantic::Slower, palette()));
    painter.drawText(QRectF(labelX, rowTop(lane.firstRow), labelWidth, fontMetrics().height() + 2),
                     Qt::AlignVCenter | Qt::AlignLeft, label);
}

// The module tree's selection: every range of that module outlined, so its share of each forward shows.
void TimelineView::paintModuleHighlight(QPainter& painter) const
{
    if (m_highlightedModule.isEmpty() || !m_run)
        return;
    const std::string path = m_highlightedModule.toStdString();
    const QRect plot = plotRect();
    painter.save();
    painter.setClipRect(plot);
    painter.setPen(QPen(palette().color(QPalette::Highlight), 2));
    for (const TimelineLane& lane : m_layout->lanes()) {
        if (lane.kind != TimelineLane::Kind::Modules)
            continue;
        for (int row = lane.firstRow; row < lane.firstRow + lane.rowCount; ++row)
            for (const TimelineItem& item : m_layout->row(row)) {
                if (item.range < 0 || m_run->ranges[size_t(item.range)].name != path)
                    continue;
                const double x0 = xForTime(double(item.startNs));
                const double x1 = std::max(xForTime(double(item.endNs)), x0 + 2);
                if (x1 < plot.left() || x0 > plot.right())
                    continue;
                painter.drawRect(QRectF(QPointF(x0, rowTop(row) + 1), QPointF(x1, rowTop(row) + m_rowHeight - 1)));
            }
    }
    painter.restore();
}

// A Shift+drag span: a translucent band over the lanes with its duration, as Nsight's range selection.
void TimelineView::paintMeasuredSpan(QPainter& painter) const
{
    if (!hasMeasuredSpan())
        return;
    const QRect plot = plotRect();
    const double x0 = xForTime(m_spanStartNs), x1 = std::max(xForTime(m_spanEndNs), x0 + 1);
    if (x1 < plot.left() || x0 > plot.right())
        return;
    painter.save();
    painter.setClipRect(plot);
    QColor band = palette().color(QPalette::Highlight);
    band.setAlpha(50);
    const QRectF area(QPointF(x0, plot.top()), QPointF(x1, plot.bottom()));
    painter.fillRect(area, band);
    painter.setPen(palette().color(QPalette::Highlight));
    painter.drawLine(area.topLeft(), area.bottomLeft());
    painter.drawLine(area.topRight(), area.bottomRight());
    const QString label = formatDuration((m_spanEndNs - m_spanStartNs) / 1000.0);
    const QRectF text(QPointF(x0 + 4, plot.top() + 2), QSizeF(std::max(80.0, x1 - x0), fontMetrics().height() + 2));
    painter.fillRect(QRectF(text.topLeft(), QSizeF(fontMetrics().horizontalAdvance(label) + 6, text.height())),
                     palette().color(QPalette::Base));
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(text.adjusted(3, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft, label);
    painter.restore();
}

void TimelineView::paintSelection(QPainter& painter) const
{
    if (m_selected < 0 && m_selectedRange < 0)
        return;
    const QRect plot = plotRect();
    QRect box = m_selected >= 0 ? recordRect(m_selected) : rangeRect(m_selectedRange);
    if (box.width() < 3)
        box.adjust(-1, 0, 1, 0); // a selected sliver stays visible
    if (!box.intersects(plot))
        return;
    painter.save();
    painter.setClipRect(plot);
    QColor fill = palette().color(QPalette::Highlight);
    fill.setAlpha(90);
    painter.fillRect(box, fill);
    painter.setPen(QPen(palette().color(QPalette::Highlight), 2));
    painter.drawRect(box.adjusted(0, 0, -1, -1));
    painter.restore();
}

QString TimelineView::tooltipFor(const Hit& hit) const
{
    const auto line = [](const QString& label, const QString& value) {
        return QStringLiteral("<br/>%1: %2").arg(label, value.toHtmlEscaped());
    };
    QString text;
    if (hit.memory) {
        const kforge::LiveBytesSeries& series = m_layout->liveBytes();
        const auto bytes = [](std::int64_t n) { return QString::fromStdString(kforge::bytesText(double(n))); };
        text = tr("<b>%1 live</b>").arg(bytes(m_layout->liveBytesAt(hit.ns)));
        text += line(tr("at"), formatDuration(hit.ns / 1000.0));
        if (series.peak >= 0) {
            const kforge::LiveBytesStep& peak = series.steps[size_t(series.peak)];
            text += line(tr("peak"), tr("%1 at %2").arg(bytes(peak.liveBytes), formatDuration(peak.timeNs / 1000.0)));
        }
        text += tr("<br/><i>allocated on the run's device since its forward began</i>");
    } else if (hit.record >= 0) {
        const kforge::KernelRecord& r = m_run->records[static_cast<size_t>(hit.record)];
        text = QStringLiteral("<b>%1</b>").arg(QString::fromStdString(r.name).toHtmlEscaped());
        text += line(tr("kind"), QString::fromStdString(r.kind));
        text += line(tr("module"), formatModulePath(r.modulePath));
        text += line(tr("function"), r.function.empty() ? tr("(none)") : QString::fromStdString(r.function));
        if (!r.provider.empty())
            text += line(tr("provider"), QString::fromStdString(r.provider));
        if (!r.op.empty() && r.op != r.name)
            text += line(tr("op"), QString::fromStdString(r.op));
        text += line(tr("duration"), formatDuration(double(r.durationNs) / 1000.0));
        text += line(tr("start"), formatDuration(double(r.startNs) / 1000.0));
        if (r.device >= 0)
            text += line(tr("device"), tr("GPU %1, stream %2").arg(r.device).arg(r.stream));
        text += line(tr("forward"), QString::number(r.iteration + 1));
    } else if (hit.range >= 0) {
        const kforge::RangeRecord& r = m_run->ranges[static_cast<size_t>(hit.range)];
        const bool module = r.kind == "module";
        text = QStringLiteral("<b>%1</b>")
                   .arg((module ? formatModulePath(r.name) : QString::fromStdString(r.name)).toHtmlEscaped());
        text += line(tr("kind"), module ? tr("module scope") : tr("function call"));
        if (!r.provider.empty())
            text += line(tr("provider"), QString::fromStdString(r.provider));
        text += line(tr("duration"), formatDuration(double(r.durationNs) / 1000.0));
        text += line(tr("start"), formatDuration(double(r.startNs) / 1000.0));
        text += line(tr("forward"), QString::number(r.iteration + 1));
    }
    return text;
}

} // namespace kforge::ui
