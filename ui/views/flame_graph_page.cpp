// SPDX-License-Identifier: Apache-2.0
#include "flame_graph_page.h"

#include "views/flame_graph_view.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMessageBox>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>

namespace kforge::ui {

FlameGraphPage::FlameGraphPage(QWidget* parent)
    : QWidget(parent), m_view(new FlameGraphView(this)), m_breadcrumb(new QLabel(this)), m_search(new QLineEdit(this)),
      m_matches(new QLabel(this)), m_differential(new QCheckBox(tr("Differe&ntial"), this)),
      m_bottomUp(new QCheckBox(tr("&Bottom-up"), this)), m_memory(new QCheckBox(tr("&Memory"), this)),
      m_legend(new QLabel(this))
{
    m_memory->setObjectName(QStringLiteral("flameMemory"));
    m_memory->setToolTip(tr("Where the memory was allocated instead of the time: widths are bytes allocated per "
                            "forward (a run profiled with Record memory)"));
    m_bottomUp->setObjectName(QStringLiteral("flameBottomUp"));
    m_bottomUp->setToolTip(tr("Where the time is spent first: ops, kernels and the functions and modules with time "
                              "of their own on top, merged wherever they ran, their callers below"));
    m_legend->setObjectName(QStringLiteral("flameLegend"));
    m_legend->setWordWrap(true);
    m_legend->setContentsMargins(4, 0, 4, 0);
    m_legend->setText(tr("Differential: green frames are faster with the plan, red ones slower (the 95% interval of "
                         "the per-iteration ratios excludes 1.0×; deeper colour, larger change); grey frames show no "
                         "detectable change or are not in the baseline. Widths are mean times per forward."));
    setObjectName(QStringLiteral("flameGraphPage"));
    m_breadcrumb->setObjectName(QStringLiteral("flameBreadcrumb"));
    m_breadcrumb->setTextFormat(Qt::RichText);
    m_breadcrumb->setToolTip(tr("The zoomed frame and the frames above it: click one to zoom out to it"));
    m_search->setObjectName(QStringLiteral("flameSearch"));
    m_search->setPlaceholderText(tr("Highlight frames (module, function, op)"));
    m_search->setClearButtonEnabled(true);
    m_search->setMaximumWidth(320);
    m_differential->setObjectName(QStringLiteral("flameDifferential"));
    m_differential->setToolTip(tr("Colour the plan's frames by their speedup against the baseline's frames of the "
                                  "same path where the change is beyond the run's noise: green is faster, red is "
                                  "slower, grey no detectable change"));
    m_differential->setChecked(true);
    auto* exportButton = new QToolButton(this);
    exportButton->setObjectName(QStringLiteral("flameExport"));
    exportButton->setText(tr("Export…"));
    exportButton->setToolTip(tr("Save the flame graph as PNG or SVG"));

    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_view);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(4, 4, 4, 0);
    bar->addWidget(m_breadcrumb, 1);
    bar->addWidget(m_search);
    bar->addWidget(m_matches);
    bar->addWidget(m_bottomUp);
    bar->addWidget(m_memory);
    bar->addWidget(m_differential);
    bar->addWidget(exportButton);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(bar);
    layout->addWidget(m_legend);
    layout->addWidget(scroll, 1);

    connect(m_view, &FlameGraphView::zoomChanged, this, &FlameGraphPage::updateBreadcrumb);
    connect(m_breadcrumb, &QLabel::linkActivated, this, [this](const QString& link) {
        // The link is the number of levels above the zoomed frame.
        for (int up = link.toInt(); up > 0; --up)
            m_view->zoomOut();
    });
    connect(m_search, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_view->setSearch(text);
        updateMatches();
    });
    connect(m_differential, &QCheckBox::toggled, this, &FlameGraphPage::applyRuns);
    connect(m_bottomUp, &QCheckBox::toggled, this, &FlameGraphPage::applyRuns);
    connect(m_memory, &QCheckBox::toggled, this, &FlameGraphPage::applyRuns);
    connect(exportButton, &QToolButton::clicked, this, &FlameGraphPage::exportInteractively);
    applyRuns();
}

void FlameGraphPage::setResults(ResultsPtr results, bool showPlan)
{
    m_results = std::move(results);
    m_showPlan = showPlan;
    applyRuns();
}

void FlameGraphPage::applyRuns()
{
    const RunResults* shown = !m_results ? nullptr : m_showPlan ? &m_results->plan : &m_results->baseline;
    const bool hasMemory = shown && shown->views && !shown->views->memoryFlame.empty();
    m_memory->setVisible(hasMemory); // offered for a run that recorded memory
    const bool memory = hasMemory && m_memory->isChecked();
    const bool bottomUp = m_bottomUp->isChecked() && !memory;
    const bool offersBaseline = m_showPlan && m_results && m_results->both();
    m_bottomUp->setEnabled(!memory);
    m_differential->setVisible(offersBaseline);
    m_differential->setEnabled(!bottomUp && !memory); // a caller view has no baseline frame of the same path
    m_legend->setVisible(offersBaseline && m_differential->isChecked() && !bottomUp && !memory);
    m_view->setResults(m_results, m_showPlan, m_differential->isChecked(), bottomUp, memory);
    updateMatches();
}

void FlameGraphPage::updateMatches()
{
    if (m_search->text().trimmed().isEmpty() || m_view->frames().empty()) {
        m_matches->clear(); // no search, or no profile left to search in
        return;
    }
    m_matches->setText((m_view->isMemory() ? tr("%n match(es), %1 % of the bytes", nullptr, m_view->matchCount())
                                           : tr("%n match(es), %1 % of the time", nullptr, m_view->matchCount()))
                           .arg(QLocale().toString(100.0 * m_view->matchedShare(), 'f', 1)));
}

void FlameGraphPage::updateBreadcrumb()
{
    const QStringList names = m_view->breadcrumb();
    QStringList parts;
    for (int i = 0; i < names.size(); ++i) {
        const int up = int(names.size()) - 1 - i;
        parts << (up == 0 ? QStringLiteral("<b>%1</b>").arg(names[i].toHtmlEscaped())
                          : QStringLiteral("<a href=\"%1\">%2</a>").arg(up).arg(names[i].toHtmlEscaped()));
    }
    m_breadcrumb->setText(parts.join(QStringLiteral(" › ")));
}

bool FlameGraphPage::exportImage(const QString& path, QString* error)
{
    return path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive) ? m_view->saveSvg(path, error)
                                                                     : m_view->savePng(path, error);
}

void FlameGraphPage::exportInteractively()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Export Flame Graph"), QStringLiteral("flame.svg"),
                                                      tr("SVG image (*.svg);;PNG image (*.png)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!exportImage(path, &error))
        QMessageBox::warning(this, tr("Export Failed"), tr("Could not export the flame graph: %1").arg(error));
}

} // namespace kforge::ui
