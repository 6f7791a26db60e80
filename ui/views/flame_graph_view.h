// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "item_models/profile_results.h"

#include <kforge/profiling.h>

#include <QString>
#include <QStringList>
#include <QWidget>

#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

class QFontMetrics;

namespace kforge::ui {

// A custom-painted flame graph (icicle: the root on top) of one profile run: modules, then each module's own
// time by function, then by op or kernel, widths proportional to time per forward. Hover tells path, time, share
// and calls; a click zooms into a frame, Backspace/Escape or the breadcrumb go back up; a search highlights
// matching frames. Given a baseline, each frame whose speed verdict against the baseline's frame of the same path
// is faster or slower is coloured by its speedup, the others grey (differential), else by kind. Exports as PNG and
// SVG.
class FlameGraphView : public QWidget {
    Q_OBJECT
public:
    static constexpr int RowHeight = 20;

    explicit FlameGraphView(QWidget* parent = nullptr);

    // The flame graph of the results' plan run (`showPlan`) or baseline run, as the results made it; `differential`
    // colours the plan's frames by their verdicts against the baseline's. With `bottomUp`, the frames holding time
    // of their own on top, their callers below (kforge::bottomUp); the differential colouring is top-down only.
    // With `memory`, where the run's memory was allocated instead (kforge::memoryFlameGraph): widths are bytes per
    // forward, top-down and not differential.
    void setResults(ResultsPtr results, bool showPlan, bool differential = false, bool bottomUp = false,
                    bool memory = false);
    bool isBottomUp() const { return m_bottomUp; }
    bool isMemory() const { return m_memory; }
    const std::vector<kforge::FlameFrame>& frames() const;
    bool isDifferential() const { return m_differential; }
    // The baseline's time of frame `index`'s path, per forward; negative when the baseline has no such frame.
    double baselineUs(int index) const;
    // Frame `index`'s speed verdict against the baseline; "no detectable change" where there is none.
    kforge::SpeedVerdict verdictOf(int index) const;

    void zoomTo(int frame); // 0: the whole forward
    void zoomOut();         // to the zoomed frame's parent
    int zoomedFrame() const { return m_zoom; }
    QStringList breadcrumb() const; // frame names from the root to the zoomed frame

    void setSearch(const QString& text); // case-insensitive substring of frame labels (frameLabel); "" clears
    int matchCount() const { return m_matches; }
    // The share of the forward's time in matching frames, each counted once (a match inside a match is not added).
    double matchedShare() const { return m_matchedShare; }

    int frameAt(const QPoint& pos) const; // -1 where none is drawn
    QRectF frameRect(int frame) const;    // empty when not drawn (outside the zoomed frame)
    QString frameToolTip(int frame) const;
    // What a frame says on screen: a module's name, with its container's when it is a list index ("layer1.0", not
    // "0"), and its type ("layer1.0 · Bottleneck"); a function's or op's name.
    QString frameLabel(int frame) const; // "layers.0 · LlamaDecoderLayer", "linear"
    // What a frame `width` pixels wide shows of its label: the whole label, else the module's name alone, else that
    // cut while it can be read, else nothing (label_fit.h).
    QString paintedLabel(int frame, const QFontMetrics& metrics, int width) const;

    bool savePng(const QString& path, QString* error = nullptr);
    bool saveSvg(const QString& path, QString* error = nullptr);

    QSize sizeHint() const override;

Q_SIGNALS:
    void zoomChanged();

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override; // tooltips

private:
    void paint(QPainter& painter, const QRect& area) const;
    QRectF frameRect(int frame, const QRect& area) const;
    bool isInZoom(int frame) const;
    QStringList labelCandidates(int frame) const; // the fullest first
    bool matches(int frame) const;
    QColor fillOf(int frame) const;
    int maxDepth() const;

    ResultsPtr m_results;
    const RunResults* m_shown = nullptr; // of m_results; null without a run
    bool m_differential = false;         // the plan's frames against the baseline's (m_results has both)
    bool m_memory = false;
    bool m_bottomUp = false;
    int m_zoom = 0;
    QString m_search;
    int m_matches = 0;
    double m_matchedShare = 0;
};

} // namespace kforge::ui
