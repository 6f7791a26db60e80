// SPDX-License-Identifier: Apache-2.0
#include "flame_graph_view.h"

#include "views/label_fit.h"

#include "item_models/duration_format.h"
#include "item_models/format.h"
#include "item_models/semantic_colors.h"

#include <QHelpEvent>
#include <QImage>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QSvgGenerator>
#include <QToolTip>

#include <algorithm>
#include <functional>

namespace kforge::ui {
namespace {

constexpr double kMinDrawnPixels = 0.5; // narrower frames are skipped: they would only add noise

QString kindName(kforge::FlameFrame::Kind kind)
{
    switch (kind) {
    case kforge::FlameFrame::Kind::Module:
        return FlameGraphView::tr("module");
    case kforge::FlameFrame::Kind::Function:
        return FlameGraphView::tr("function");
    case kforge::FlameFrame::Kind::Op:
        return FlameGraphView::tr("op");
    }
    return {};
}

QString displayName(const kforge::FlameFrame& frame)
{
    if (frame.kind == kforge::FlameFrame::Kind::Module && frame.parent < 0)
        return FlameGraphView::tr("(root)");
    return QString::fromStdString(frame.name);
}

} // namespace

FlameGraphView::FlameGraphView(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("flameGraph"));
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setMinimumHeight(RowHeight * 4);
}

void FlameGraphView::setResults(ResultsPtr results, bool showPlan, bool differential, bool bottomUp, bool memory)
{
    const ResultsPtr before = std::exchange(m_results, std::move(results)); // alive while its frames are compared
    const std::vector<kforge::FlameFrame>* framesBefore = &frames();
    const RunResults* shown = !m_results ? nullptr : showPlan ? &m_results->plan : &m_results->baseline;
    m_shown = shown && shown->run ? shown : nullptr;
    m_memory = memory;
    m_bottomUp = bottomUp && !m_memory;
    m_differential = differential && showPlan && m_shown && m_results->both() && !m_bottomUp && !m_memory;
    if (&frames() != framesBefore) // the same frames (new results sharing this run's views) keep the zoom
        m_zoom = 0;
    setSearch(m_search);
    updateGeometry();
    update();
    Q_EMIT zoomChanged();
}

const std::vector<kforge::FlameFrame>& FlameGraphView::frames() const
{
    static const std::vector<kforge::FlameFrame> kNone;
    return !m_shown     ? kNone
           : m_memory   ? m_shown->views->memoryFlame
           : m_bottomUp ? m_shown->views->bottomUp
                        : m_shown->views->flame;
}

double FlameGraphView::baselineUs(int index) const
{
    if (index < 0 || size_t(index) >= frames().size())
        return -1.0;
    if (!m_differential)
        return -1.0;
    const auto& baselineUs = m_results->baseline.views->frameUs;
    const auto it = baselineUs.find(frames()[size_t(index)].path);
    return it == baselineUs.end() ? -1.0 : it->second;
}

kforge::SpeedVerdict FlameGraphView::verdictOf(int index) const
{
    if (index < 0 || size_t(index) >= frames().size())
        return kforge::SpeedVerdict::NoDetectableChange;
    if (!m_differential)
        return kforge::SpeedVerdict::NoDetectableChange;
    const auto& speeds = *m_results->flameSpeeds;
    const auto it = speeds.find(frames()[size_t(index)].path);
    return it == speeds.end() ? kforge::SpeedVerdict::NoDetectableChange : it->second.verdict;
}

void FlameGraphView::zoomTo(int frame)
{
    if (frame < 0 || size_t(frame) >= frames().size() || frame == m_zoom)
        return;
    m_zoom = frame;
    update();
    Q_EMIT zoomChanged();
}

void FlameGraphView::zoomOut()
{
    if (m_zoom > 0)
        zoomTo(std::max(0, frames()[size_t(m_zoom)].parent));
}

QStringList FlameGraphView::labelCandidates(int frame) const
{
    const kforge::FlameFrame& f = frames()[size_t(frame)];
    QString name = displayName(f);
    if (f.kind != kforge::FlameFrame::Kind::Module)
        return {name};
    const bool listIndex =
        !f.name.empty() && std::all_of(f.name.begin(), f.name.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (listIndex && f.parent > 0)
        name = QString::fromStdString(frames()[size_t(f.parent)].name) + QLatin1Char('.') + name;
    if (f.typeName.empty())
        return {name};
    return {QStringLiteral("%1 %2 %3").arg(name, QChar(0x00B7), QString::fromStdString(f.typeName)), name};
}

QString FlameGraphView::frameLabel(int frame) const { return labelCandidates(frame).first(); }

QString FlameGraphView::paintedLabel(int frame, const QFontMetrics& metrics, int width) const
{
    return fittedLabel(labelCandidates(frame), metrics, width);
}

QStringList FlameGraphView::breadcrumb() const
{
    QStringList names;
    for (int f = frames().empty() ? -1 : m_zoom; f >= 0; f = frames()[size_t(f)].parent)
        names.prepend(displayName(frames()[size_t(f)]));
    return names;
}

void FlameGraphView::setSearch(const QString& text)
{
    m_search = text.trimmed();
    m_matches = 0;
    double matchedUs = 0;
    std::vector<bool> inMatch(frames().size(), false); // the frame or an ancestor matches (parents come first)
    for (size_t i = 0; i < frames().size(); ++i) {
        const bool match = matches(int(i));
        const bool insideMatch = frames()[i].parent >= 0 && inMatch[size_t(frames()[i].parent)];
        m_matches += match ? 1 : 0;
        if (match && !insideMatch)
            matchedUs += frames()[i].us;
        inMatch[i] = match || insideMatch;
    }
    m_matchedShare = frames().empty() || frames().front().us <= 0 ? 0.0 : matchedUs / frames().front().us;
    update();
}

bool FlameGraphView::matches(int frame) const
{
    return !m_search.isEmpty() && frameLabel(frame).contains(m_search, Qt::CaseInsensitive);
}

bool FlameGraphView::isInZoom(int frame) const
{
    for (int f = frame; f >= 0; f = frames()[size_t(f)].parent)
        if (f == m_zoom)
            return true;
    return false;
}

QRectF FlameGraphView::frameRect(int frame, const QRect& area) const
{
    if (frame < 0 || size_t(frame) >= frames().size() || !isInZoom(frame))
        return {};
    const kforge::FlameFrame& zoom = frames()[size_t(m_zoom)];
    const kforge::FlameFrame& f = frames()[size_t(frame)];
    if (zoom.us <= 0)
        return {};
    const double scale = area.width() / zoom.us;
    return QRectF(area.left() + (f.offsetUs - zoom.offsetUs) * scale, area.top() + (f.depth - zoom.depth) * RowHeight,
                  f.us * scale, RowHeight - 1);
}

QRectF FlameGraphView::frameRect(int frame) const { return frameRect(frame, rect()); }

int FlameGraphView::frameAt(const QPoint& pos) const
{
    for (size_t i = 0; i < frames().size(); ++i) {
        const QRectF r = frameRect(int(i));
        if (r.width() >= kMinDrawnPixels && r.contains(pos))
            return int(i);
    }
    return -1;
}

QString FlameGraphView::frameToolTip(int frame) const
{
    if (frame < 0 || size_t(frame) >= frames().size())
        return {};
    const kforge::FlameFrame& f = frames()[size_t(frame)];
    const double forward = frames().front().us;
    QStringList lines;
    lines << tr("%1 (%2)").arg(formatModulePath(f.path), kindName(f.kind));
    // Widths are totals over the measured forwards divided by their count: a mean, so that a frame's children add
    // up to it (medians would not); the comparison's medians and verdicts are in the differential lines below.
    const int forwards = m_shown ? std::max(1, m_shown->run->iterations) : 1;
    const QString amount = m_memory ? tr("%1 allocated").arg(formatBytes(std::int64_t(f.us))) : formatDuration(f.us);
    lines << tr("%1 per forward (the mean of %n forward(s)), %2 of it", nullptr, forwards)
                 .arg(amount, QStringLiteral("%1 %").arg(forward > 0 ? f.us / forward * 100 : 0.0, 0, 'f', 1));
    if (f.calls > 0)
        lines << (m_memory ? tr("%1 allocation(s) per forward") : tr("%1 call(s) per forward")).arg(f.calls, 0, 'g', 4);
    if (isDifferential()) {
        const double base = baselineUs(frame);
        const auto& speeds = *m_results->flameSpeeds;
        const auto speed = speeds.find(f.path);
        lines << (base < 0 ? tr("not in the baseline")
                           : tr("baseline %1 (mean per forward)").arg(formatDuration(base)));
        if (speed != speeds.end())
            lines << formatSpeedComparison(speed->second);
    }
    lines << tr("Click to zoom in; Backspace goes back up");
    return lines.join(QLatin1Char('\n'));
}

QColor FlameGraphView::fillOf(int frame) const
{
    const kforge::FlameFrame& f = frames()[size_t(frame)];
    if (isDifferential()) {
        const double base = baselineUs(frame);
        // Only a verdict earns a colour: a frame within the noise stays grey, however large its ratio.
        if (base < 0 || f.us <= 0 || !kforge::isChange(verdictOf(frame)))
            return palette().color(QPalette::Mid);
        return speedupColor(base / f.us, palette());
    }
    QColor fill = semanticColor(f.kind == kforge::FlameFrame::Kind::Module     ? Semantic::Module
                                : f.kind == kforge::FlameFrame::Kind::Function ? Semantic::Function
                                                                               : Semantic::Op,
                                palette());
    // Neighbours differ a little, so that adjacent frames of one kind stay apart.
    const int shade = int(std::hash<std::string>{}(f.name) % 24) - 12;
    return fill.lighter(100 + shade);
}

int FlameGraphView::maxDepth() const
{
    int depth = 0;
    for (const kforge::FlameFrame& f : frames())
        depth = std::max(depth, f.depth);
    return depth;
}

QSize FlameGraphView::sizeHint() const { return {800, (maxDepth() + 1) * RowHeight + 2}; }

void FlameGraphView::paint(QPainter& painter, const QRect& area) const
{
    painter.fillRect(area, palette().color(QPalette::Base));
    if (frames().empty()) {
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(area, Qt::AlignCenter, tr("No profile yet: run a baseline or a plan (Profile menu)."));
        return;
    }
    const QFontMetrics metrics(painter.font());
    for (size_t i = 0; i < frames().size(); ++i) {
        const QRectF r = frameRect(int(i), area);
        if (r.isEmpty() || r.width() < kMinDrawnPixels || r.right() < area.left() || r.left() > area.right())
            continue;
        const QColor fill = fillOf(int(i));
        painter.fillRect(r, fill);
        if (matches(int(i))) {
            painter.setPen(QPen(palette().color(QPalette::Highlight), 2));
            painter.drawRect(r.adjusted(1, 1, -1, -1));
        }
        const QRectF text = r.adjusted(3, 0, -3, 0);
        const QString label = paintedLabel(int(i), metrics, int(text.width()));
        if (!label.isEmpty()) {
            painter.setPen(textColorOn(fill));
            painter.drawText(text, Qt::AlignVCenter | Qt::AlignLeft, label);
        }
    }
}

void FlameGraphView::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    paint(painter, rect());
}

void FlameGraphView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton) {
        const int frame = frameAt(event->position().toPoint());
        if (frame >= 0)
            zoomTo(frame == m_zoom ? std::max(0, frames()[size_t(frame)].parent) : frame);
    } else if (event->button() == Qt::BackButton || event->button() == Qt::RightButton) {
        zoomOut();
    }
}

void FlameGraphView::keyPressEvent(QKeyEvent* event)
{
    switch (event->key()) {
    case Qt::Key_Backspace:
    case Qt::Key_Escape:
        zoomOut();
        return;
    case Qt::Key_Home:
        zoomTo(0);
        return;
    default:
        QWidget::keyPressEvent(event);
    }
}

bool FlameGraphView::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = frameToolTip(frameAt(help->pos()));
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

bool FlameGraphView::savePng(const QString& path, QString* error)
{
    QImage image(QSize(std::max(width(), 800), (maxDepth() + 1) * RowHeight + 2), QImage::Format_ARGB32);
    QPainter painter(&image);
    paint(painter, image.rect());
    painter.end();
    if (image.save(path, "PNG"))
        return true;
    if (error)
        *error = tr("cannot write %1").arg(path);
    return false;
}

bool FlameGraphView::saveSvg(const QString& path, QString* error)
{
    const QSize size(std::max(width(), 800), (maxDepth() + 1) * RowHeight + 2);
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(tr("Flame graph"));
    QPainter painter;
    if (!painter.begin(&svg)) {
        if (error)
            *error = tr("cannot write %1").arg(path);
        return false;
    }
    paint(painter, QRect(QPoint(0, 0), size));
    painter.end();
    return true;
}

} // namespace kforge::ui
