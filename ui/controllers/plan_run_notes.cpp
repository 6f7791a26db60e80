// SPDX-License-Identifier: Apache-2.0
#include "controllers/plan_run_notes.h"

#include "controllers/session_owner.h"
#include "item_models/plan_document.h"
#include "item_models/plan_model.h"

#include <kforge/model_session.h>
#include <kforge/plan_landing.h>

#include <utility>

namespace kforge::ui {

PlanRunNotes::PlanRunNotes(SessionOwner* owner, PlanDocument* document, QObject* parent)
    : QObject(parent), m_owner(owner), m_document(document)
{
}

void PlanRunNotes::noteWarnings(const QString& device)
{
    QStringList lines;
    if (const auto& session = m_owner->session())
        for (const std::string& line : kforge::planNotes(m_document->plan(), *session, device.toStdString()).lines())
            lines << QString::fromStdString(line);
    m_warnings = lines;
    Q_EMIT warningsChanged(lines);
}

void PlanRunNotes::clearWarnings()
{
    m_warnings.clear();
    Q_EMIT warningsChanged({});
}

QString PlanRunNotes::withWarnings(const QString& message) const
{
    if (m_warnings.isEmpty())
        return message;
    QString warning = tr("Warning: %1").arg(m_warnings.first());
    if (m_warnings.size() > 1)
        warning += tr(" (and %n more; see the plan's Problems column)", nullptr, int(m_warnings.size() - 1));
    return message.isEmpty() ? warning : message + QStringLiteral(" — ") + warning;
}

void PlanRunNotes::runStarted()
{
    m_revision = m_document->model()->revision();
    m_document->model()->clearDeclines();
}

void PlanRunNotes::declinesArrived(const std::vector<kforge::EntryDeclines>& declines)
{
    const std::optional<std::uint64_t> revision = std::exchange(m_revision, std::nullopt);
    if (revision && *revision == m_document->model()->revision())
        m_document->model()->setDeclines(declines);
}

void PlanRunNotes::runMeasuredNothing() { m_revision.reset(); }

void PlanRunNotes::sessionChanged()
{
    m_revision.reset();
    m_document->model()->clearDeclines();
}

} // namespace kforge::ui
