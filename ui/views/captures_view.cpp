// SPDX-License-Identifier: Apache-2.0
#include "captures_view.h"

#include "views/semantic_text.h"
#include "item_models/capture_list_model.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTreeView>
#include <QVBoxLayout>

namespace kforge::ui {

CapturesView::CapturesView(CaptureListModel* model, QWidget* parent)
    : QWidget(parent), m_model(model), m_view(new QTreeView(this)), m_caption(new QLabel(this)),
      m_capture(new QPushButton(QIcon(QStringLiteral(":/icons/capture.svg")), tr("Capture"), this)),
      m_unwind(new QPushButton(QIcon(QStringLiteral(":/icons/unwind.svg")), tr("Unwind"), this))
{
    setObjectName(QStringLiteral("capturesView"));
    m_view->setObjectName(QStringLiteral("capturesTree"));
    m_view->setModel(model);
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setAllColumnsShowFocus(true);
    m_view->header()->setStretchLastSection(true);
    const int em = m_view->fontMetrics().horizontalAdvance(QLatin1Char('m'));
    m_view->setColumnWidth(CaptureListModel::CaptureColumn, 9 * em);
    m_view->setColumnWidth(CaptureListModel::StateColumn, 6 * em);
    m_view->setColumnWidth(CaptureListModel::ScopeColumn, 10 * em);
    m_view->setColumnWidth(CaptureListModel::FunctionColumn, 14 * em);
    m_view->setColumnWidth(CaptureListModel::ProviderColumn, 18 * em);

    m_caption->setObjectName(QStringLiteral("capturesCaption"));
    m_caption->setWordWrap(true);
    m_capture->setObjectName(QStringLiteral("captureButton"));
    m_capture->setToolTip(tr("Warm up, then capture one forward into a CUDA graph with the plan in effect"));
    m_unwind->setObjectName(QStringLiteral("unwindCaptureButton"));
    m_unwind->setToolTip(tr("Deactivate the runtime: restores every function a failed capture left replaced"));

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_caption, 1);
    buttons->addWidget(m_capture);
    buttons->addWidget(m_unwind);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(buttons);
    layout->addWidget(m_view, 1);

    connect(m_capture, &QPushButton::clicked, this, &CapturesView::captureRequested);
    connect(m_unwind, &QPushButton::clicked, this, &CapturesView::unwindRequested);
    connect(model, &QAbstractItemModel::modelReset, this, [this] {
        m_view->expandAll(); // a handful of captures with a few rows each: show everything
        update();
    });
    connect(model, &QAbstractItemModel::dataChanged, this, &CapturesView::update);
    update();
}

QTreeView* CapturesView::view() const { return m_view; }

QPushButton* CapturesView::captureButton() const { return m_capture; }

QPushButton* CapturesView::unwindButton() const { return m_unwind; }

QString CapturesView::explanation() const { return m_caption->text(); }

void CapturesView::setCaptureAvailable(bool available, const QString& explanation)
{
    m_available = available;
    m_unavailableText = explanation;
    update();
}

void CapturesView::setBusy(bool busy, const QString& reason)
{
    m_busy = busy;
    m_busyReason = reason;
    update();
}

void CapturesView::update()
{
    // The explanation stays readable; what it explains is what is disabled.
    m_view->setEnabled(m_available);
    m_capture->setEnabled(m_available && !m_busy);
    m_unwind->setEnabled(m_available && !m_busy && m_model->leftoversInEffect() > 0);
    setSemanticText(m_caption, m_available ? std::nullopt : std::optional(Semantic::Leftover));
    if (!m_available)
        m_caption->setText(m_unavailableText);
    else if (m_busy)
        m_caption->setText(m_busyReason);
    else if (m_model->rowCount() == 0)
        m_caption->setText(
            tr("No capture yet: Capture records one forward with the plan in effect into a CUDA graph."));
    else
        m_caption->setText(tr("Replays run the providers baked in at capture time; a stale capture no longer "
                              "matches the plan."));
}

} // namespace kforge::ui
