// SPDX-License-Identifier: Apache-2.0
#include "views/provenance_banner.h"

#include "views/semantic_text.h"

#include <kforge/plan.h>

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

namespace kforge::ui {

ProvenanceBanner::ProvenanceBanner(QWidget* parent)
    : QFrame(parent), m_label(new QLabel(this)), m_revalidate(new QPushButton(tr("Re-va&lidate"), this)),
      m_accept(new QPushButton(tr("&Accept"), this))
{
    setObjectName(QStringLiteral("provenanceBanner"));
    setFrameShape(QFrame::StyledPanel);
    m_label->setWordWrap(true);
    m_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    setSemanticText(m_label, Semantic::Stale);
    m_revalidate->setToolTip(tr("Check the flagged entries on this model here: correctness, then a short benchmark; "
                                "those that fail are disabled (undoable)"));
    m_accept->setToolTip(tr("Keep the entries as they are, without re-validating them here"));
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(m_label, 1);
    layout->addWidget(m_revalidate);
    layout->addWidget(m_accept);
    connect(m_revalidate, &QPushButton::clicked, this, &ProvenanceBanner::revalidateRequested);
    connect(m_accept, &QPushButton::clicked, this, &ProvenanceBanner::acceptRequested);
    hide();
}

void ProvenanceBanner::setChanges(const kforge::Plan& plan, const std::vector<kforge::ProvenanceChange>& changes,
                                  const QString& otherModel)
{
    if (changes.empty() && otherModel.isEmpty()) {
        hide();
        return;
    }
    QString text;
    if (!otherModel.isEmpty()) // "the plan was made for model 'resnet18' (SHA-256 ...), this is ..."
        text = otherModel.left(1).toUpper() + otherModel.mid(1) + QLatin1Char('.');
    if (!changes.empty() && plan.provenance) {
        const kforge::Provenance& p = *plan.provenance;
        text += (text.isEmpty() ? QString() : QStringLiteral("\n")) +
                tr("This plan was measured elsewhere (%1, %2): %n entries need re-validating here.", nullptr,
                   int(changes.size()))
                    .arg(QString::fromStdString(p.writtenBy.empty() ? std::string("unknown writer") : p.writtenBy),
                         QString::fromStdString(p.createdUtc));
    }
    bool pluginChanged = false;
    for (const kforge::ProvenanceChange& c : changes) {
        const kforge::PlanEntry& e = plan.entries[size_t(c.entry)];
        QString reasons;
        for (const std::string& r : c.reasons)
            reasons += (reasons.isEmpty() ? QString() : QStringLiteral("; ")) + QString::fromStdString(r);
        text += QStringLiteral("\n") +
                tr("Entry %1 (%2 -> %3): %4")
                    .arg(c.entry)
                    .arg(QString::fromStdString(e.function), QString::fromStdString(e.providerType()), reasons);
        pluginChanged |= c.pluginChanged;
    }
    if (pluginChanged)
        text += QStringLiteral("\n") + tr("A provider plugin differs from the one measured: Re-validate accepts it.");
    m_label->setText(text);
    show();
}

void ProvenanceBanner::setBusy(bool busy)
{
    m_revalidate->setEnabled(!busy);
    m_accept->setEnabled(!busy);
}

QString ProvenanceBanner::text() const { return m_label->text(); }

} // namespace kforge::ui
