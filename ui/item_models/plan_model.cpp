// SPDX-License-Identifier: Apache-2.0
#include "plan_model.h"

#include "semantic_colors.h"
#include "duration_format.h"
#include "format.h"

#include <QBrush>
#include <QColor>

#include <algorithm>

namespace kforge::ui {

PlanModel::PlanModel(QObject* parent) : QAbstractTableModel(parent) {}

void PlanModel::setPlan(kforge::Plan plan)
{
    beginResetModel();
    m_plan = std::move(plan);
    m_problems.clear();
    m_declines.clear();
    m_haveDeclines = false;
    m_verdicts.clear(); // of the plan replaced
    m_revalidation.clear();
    ++m_revision;
    endResetModel();
    Q_EMIT planChanged();
}

void PlanModel::insertEntry(int row, kforge::PlanEntry entry)
{
    row = std::clamp(row, 0, entryCount());
    beginInsertRows({}, row, row);
    m_plan.entries.insert(m_plan.entries.begin() + row, std::move(entry));
    endInsertRows();
    planEdited();
}

kforge::PlanEntry PlanModel::takeEntry(int row)
{
    beginRemoveRows({}, row, row);
    kforge::PlanEntry entry = std::move(m_plan.entries.at(size_t(row)));
    m_plan.entries.erase(m_plan.entries.begin() + row);
    endRemoveRows();
    planEdited();
    return entry;
}

void PlanModel::moveEntry(int from, int to)
{
    if (from == to || from < 0 || to < 0 || from >= entryCount() || to >= entryCount())
        return;
    // beginMoveRows wants the destination as the row the item goes before, in the old numbering.
    beginMoveRows({}, from, from, {}, to > from ? to + 1 : to);
    kforge::PlanEntry entry = std::move(m_plan.entries[size_t(from)]);
    m_plan.entries.erase(m_plan.entries.begin() + from);
    m_plan.entries.insert(m_plan.entries.begin() + to, std::move(entry));
    endMoveRows();
    planEdited();
}

void PlanModel::replaceEntry(int row, kforge::PlanEntry entry)
{
    m_plan.entries.at(size_t(row)) = std::move(entry);
    Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
    planEdited();
}

void PlanModel::setEditHandler(EditHandler handler) { m_editHandler = std::move(handler); }

void PlanModel::planEdited()
{
    ++m_revision;
    clearDeclines();
    if (!m_verdicts.empty()) {
        m_verdicts.clear();
        if (entryCount() > 0)
            Q_EMIT dataChanged(index(0, VerifiedColumn), index(entryCount() - 1, VerifiedColumn));
    }
    if (!m_revalidation.empty()) {
        m_revalidation.clear();
        if (entryCount() > 0)
            Q_EMIT dataChanged(index(0, MeasuredColumn), index(entryCount() - 1, MeasuredColumn));
    }
    Q_EMIT planChanged();
}

void PlanModel::setDeclines(std::vector<kforge::EntryDeclines> declines)
{
    std::erase_if(declines, [this](const kforge::EntryDeclines& d) {
        if (d.entry < 0 || d.entry >= entryCount() || d.calls == 0)
            return true;
        const kforge::PlanEntry& e = entry(d.entry);
        return e.scope != d.scope || e.function != d.function;
    });
    m_declines = std::move(declines);
    m_haveDeclines = true;
    if (entryCount() > 0)
        Q_EMIT dataChanged(index(0, DeclinedColumn), index(entryCount() - 1, DeclinedColumn));
}

void PlanModel::setVerdicts(std::vector<EntryVerdict> verdicts)
{
    std::erase_if(verdicts, [this](const EntryVerdict& v) { return v.entry < 0 || v.entry >= entryCount(); });
    m_verdicts = std::move(verdicts);
    if (entryCount() > 0)
        Q_EMIT dataChanged(index(0, VerifiedColumn), index(entryCount() - 1, VerifiedColumn));
}

void PlanModel::setRevalidation(std::vector<kforge::EntryRevalidation> entries)
{
    std::erase_if(entries,
                  [this](const kforge::EntryRevalidation& e) { return e.entry < 0 || e.entry >= entryCount(); });
    m_revalidation = std::move(entries);
    if (entryCount() > 0)
        Q_EMIT dataChanged(index(0, MeasuredColumn), index(entryCount() - 1, MeasuredColumn));
}

const kforge::EntryRevalidation* PlanModel::revalidationOf(int row) const
{
    for (const kforge::EntryRevalidation& e : m_revalidation)
        if (e.entry == row)
            return &e;
    return nullptr;
}

QString PlanModel::measuredText(int row) const
{
    const kforge::PlanEntry& e = entry(row);
    const bool recorded = e.measured && e.measured->measured();
    const QString there = recorded ? formatSpeedup(e.measured->speedup) : QString();
    const kforge::EntryRevalidation* r = revalidationOf(row);
    if (!r)
        return recorded ? tr("%1 where measured").arg(there) : QString();
    // "1.31× here · 1.50× where measured", "disabled: 0.98× here · 1.50× where measured", "correct here" (checked
    // for correctness only), "disabled here" (incorrect here).
    QString here = r->speedup > 0 ? tr("%1 here").arg(formatSpeedup(r->speedup))
                   : r->kept      ? tr("correct here")
                                  : tr("disabled here");
    if (!r->kept && r->speedup > 0)
        here = tr("disabled: %1").arg(here);
    return recorded ? tr("%1 · %2 where measured").arg(here, there) : here;
}

QString PlanModel::measuredToolTip(int row) const
{
    const kforge::PlanEntry& e = entry(row);
    QStringList lines;
    if (e.measured && e.measured->measured()) {
        QString line = tr("Recorded in the plan: %1 the original's speed").arg(formatSpeedup(e.measured->speedup));
        if (e.measured->speedupLow > 0)
            line += tr(" (95% interval %1 to %2)")
                        .arg(formatSpeedup(e.measured->speedupLow), formatSpeedup(e.measured->speedupHigh));
        if (!e.measured->signatures.empty())
            line += tr(" on %1").arg(QString::fromStdString(e.measured->signatures.front())) +
                    (e.measured->signatures.size() > 1
                         ? tr(" and %n more signature(s)", nullptr, int(e.measured->signatures.size() - 1))
                         : QString());
        lines << line;
    }
    if (const kforge::EntryRevalidation* r = revalidationOf(row)) {
        QStringList why;
        for (const std::string& reason : r->reasons)
            why << QString::fromStdString(reason);
        lines
            << tr("Re-validated here (%1): %2").arg(why.join(QStringLiteral("; ")), QString::fromStdString(r->verdict));
    }
    return lines.join(QLatin1Char('\n'));
}

const EntryVerdict* PlanModel::verdictOf(int row) const
{
    for (const EntryVerdict& v : m_verdicts)
        if (v.entry == row)
            return &v;
    return nullptr;
}

void PlanModel::clearDeclines()
{
    const bool had = m_haveDeclines;
    m_declines.clear();
    m_haveDeclines = false;
    if (had && entryCount() > 0)
        Q_EMIT dataChanged(index(0, DeclinedColumn), index(entryCount() - 1, DeclinedColumn));
}

const kforge::EntryDeclines* PlanModel::declinesOf(int row) const
{
    for (const kforge::EntryDeclines& d : m_declines)
        if (d.entry == row)
            return &d;
    return nullptr;
}

void PlanModel::setProblems(std::vector<kforge::PlanProblem> problems)
{
    m_problems = std::move(problems);
    if (entryCount() > 0)
        Q_EMIT dataChanged(index(0, 0), index(entryCount() - 1, ColumnCount - 1));
}

QStringList PlanModel::problemsOf(int row) const
{
    QStringList out;
    for (const kforge::PlanProblem& problem : m_problems) {
        if (problem.entry != row)
            continue;
        QString line = QString::fromStdString(problem.message);
        if (!problem.fix.empty())
            line += QStringLiteral(" — ") + QString::fromStdString(problem.fix);
        out << line;
    }
    return out;
}

QStringList PlanModel::planProblems() const { return problemsOf(-1); }

QString PlanModel::settingsText(const kforge::PlanEntry& entry)
{
    if (!entry.provider.is_object())
        return entry.provider.is_null() ? QString() : QString::fromStdString(entry.provider.dump());
    nlohmann::json settings = entry.provider;
    settings.erase("type");
    return settings.empty() ? QString() : QString::fromStdString(settings.dump());
}

int PlanModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : entryCount(); }

int PlanModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant PlanModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= entryCount())
        return {};
    const kforge::PlanEntry& e = entry(index.row());
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
    case Qt::EditRole:
        switch (column) {
        case EnabledColumn:
            return {}; // a check box; the entry's number is the vertical header's
        case ScopeColumn:
            return role == Qt::DisplayRole ? formatModulePath(e.scope) : QString::fromStdString(e.scope);
        case FunctionColumn:
            return QString::fromStdString(e.function);
        case ProviderColumn:
            return QString::fromStdString(e.providerType());
        case DeclinedColumn: {
            if (role == Qt::EditRole)
                return {};
            const kforge::EntryDeclines* d = declinesOf(index.row());
            return d ? formatCount(std::int64_t(d->calls)) : QString();
        }
        case SettingsColumn:
            return settingsText(e);
        case NoteColumn:
            return QString::fromStdString(e.note);
        case ProblemsColumn: {
            if (role == Qt::EditRole)
                return {};
            const QStringList problems = problemsOf(index.row());
            if (problems.isEmpty())
                return QString();
            return problems.size() == 1 ? problems.first()
                                        : tr("%1 (+%2 more)").arg(problems.first()).arg(problems.size() - 1);
        }
        case VerifiedColumn: {
            if (role == Qt::EditRole)
                return {};
            const EntryVerdict* v = verdictOf(index.row());
            return v ? v->text : QString();
        }
        case MeasuredColumn:
            return role == Qt::EditRole ? QVariant() : QVariant(measuredText(index.row()));
        default:
            return {};
        }
    case Qt::CheckStateRole:
        if (column == EnabledColumn)
            return e.enabled ? Qt::Checked : Qt::Unchecked;
        return {};
    case Qt::ToolTipRole:
        if (column == DeclinedColumn) {
            if (const kforge::EntryDeclines* d = declinesOf(index.row()))
                return formatEntryDeclines(*d);
            return m_haveDeclines ? tr("The provider declined no call in the last run with this plan.") : QVariant();
        }
        if (column == ProblemsColumn || column == EnabledColumn) {
            const QStringList problems = problemsOf(index.row());
            if (!problems.isEmpty())
                return problems.join(QLatin1Char('\n'));
            if (column == ProblemsColumn)
                return tr("No problem found against the loaded model.");
        }
        if (column == EnabledColumn)
            return e.enabled ? tr("Enabled: the runtime applies this entry") : tr("Disabled: kept in the plan only");
        if (column == MeasuredColumn) {
            const QString tip = measuredToolTip(index.row());
            return tip.isEmpty() ? QVariant() : QVariant(tip);
        }
        if (column == VerifiedColumn && verdictOf(index.row()))
            return verdictOf(index.row())->implicated
                       ? tr("%1.\nThis entry's provider serves calls inside that module: the suspect.")
                             .arg(verdictOf(index.row())->text)
                       : verdictOf(index.row())->text;
        return {};
    case Qt::TextAlignmentRole:
        if (column == DeclinedColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ForegroundRole:
        if (column == ProblemsColumn && !problemsOf(index.row()).isEmpty())
            return QBrush(semanticTextColor(Semantic::Error));
        if (column == DeclinedColumn && declinesOf(index.row()))
            return QBrush(semanticTextColor(Semantic::Leftover)); // as leftovers: the plan did less than it says
        if (column == VerifiedColumn && verdictOf(index.row()) && verdictOf(index.row())->implicated)
            return QBrush(semanticTextColor(Semantic::Error));
        if (column == MeasuredColumn && revalidationOf(index.row()) && !revalidationOf(index.row())->kept)
            return QBrush(semanticTextColor(Semantic::Error));
        if (!e.enabled && column != ProblemsColumn)
            return QBrush(semanticTextColor(Semantic::Muted));
        return {};
    case ProblemCountRole:
        return int(problemsOf(index.row()).size());
    case FunctionRole:
        return QString::fromStdString(e.function);
    case DeclinedCallsRole: {
        const kforge::EntryDeclines* d = declinesOf(index.row());
        return qulonglong(d ? d->calls : 0);
    }
    default:
        return {};
    }
}

bool PlanModel::submitEdit(int row, const kforge::PlanEntry& entry, const QString& what)
{
    if (m_editHandler)
        return m_editHandler(row, entry, what);
    replaceEntry(row, entry);
    return true;
}

bool PlanModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (!index.isValid() || index.row() >= entryCount())
        return false;
    kforge::PlanEntry e = entry(index.row());
    const int column = index.column();
    if (column == EnabledColumn && role == Qt::CheckStateRole) {
        const bool enabled = value.toInt() == Qt::Checked;
        if (enabled == e.enabled)
            return false;
        e.enabled = enabled;
        return submitEdit(index.row(), e, enabled ? tr("Enable entry") : tr("Disable entry"));
    }
    if (role != Qt::EditRole)
        return false;
    const std::string text = value.toString().trimmed().toStdString();
    switch (column) {
    case ScopeColumn:
        if (text == e.scope)
            return false;
        e.scope = text;
        return submitEdit(index.row(), e, tr("Edit scope"));
    case FunctionColumn:
        if (text == e.function || text.empty())
            return false;
        e.function = text;
        return submitEdit(index.row(), e, tr("Edit function"));
    case ProviderColumn: {
        if (text == e.providerType() || text.empty())
            return false;
        // Settings belong to a provider type: a new type starts from its defaults.
        e.provider = nlohmann::json{{"type", text}};
        return submitEdit(index.row(), e, tr("Change provider"));
    }
    case SettingsColumn: {
        nlohmann::json settings = nlohmann::json::object();
        if (!text.empty()) {
            settings = nlohmann::json::parse(text, nullptr, false);
            if (settings.is_discarded() || !settings.is_object()) {
                Q_EMIT editRejected(tr("Settings must be a JSON object, like {\"backend\": \"MATH\"}"));
                return false;
            }
        }
        settings["type"] = e.providerType();
        if (settings == e.provider)
            return false;
        e.provider = std::move(settings);
        return submitEdit(index.row(), e, tr("Edit provider settings"));
    }
    case NoteColumn:
        if (value.toString().toStdString() == e.note)
            return false;
        e.note = value.toString().toStdString();
        return submitEdit(index.row(), e, tr("Edit note"));
    default:
        return false;
    }
}

Qt::ItemFlags PlanModel::flags(const QModelIndex& index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    Qt::ItemFlags flags = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == EnabledColumn)
        flags |= Qt::ItemIsUserCheckable;
    else if (index.column() != ProblemsColumn && index.column() != DeclinedColumn && index.column() != VerifiedColumn &&
             index.column() != MeasuredColumn)
        flags |= Qt::ItemIsEditable;
    return flags;
}

QVariant PlanModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role == Qt::ToolTipRole && orientation == Qt::Horizontal && section == VerifiedColumn)
        return tr("What the last Verify Plan (F7) found for each enabled entry: whether the model's outputs agree, and "
                  "which entries are in effect where they diverge first. Cleared when the plan changes.");
    if (role == Qt::ToolTipRole && orientation == Qt::Horizontal && section == MeasuredColumn)
        return tr("The speedup the plan records for the entry (optimize measured it where the plan was made), and "
                  "what Re-validate measured on this machine. Re-validation results are cleared when the plan "
                  "changes.");
    if (role == Qt::ToolTipRole && orientation == Qt::Horizontal && section == DeclinedColumn)
        return tr("Calls the entry's provider declined (a dtype, shape or device its kernel does not handle) in the "
                  "last forward, capture or profile with this plan: the original served them and is credited with "
                  "them. Cleared when the plan changes.");
    if (role != Qt::DisplayRole)
        return {};
    if (orientation == Qt::Vertical)
        return section + 1; // plan order, as the runtime applies it

    switch (section) {
    case EnabledColumn:
        return tr("On");
    case ScopeColumn:
        return tr("Scope");
    case FunctionColumn:
        return tr("Function");
    case ProviderColumn:
        return tr("Provider");
    case DeclinedColumn:
        return tr("Declined");
    case SettingsColumn:
        return tr("Settings");
    case NoteColumn:
        return tr("Note");
    case ProblemsColumn:
        return tr("Problems");
    case VerifiedColumn:
        return tr("Verified");
    case MeasuredColumn:
        return tr("Measured");
    default:
        return {};
    }
}

} // namespace kforge::ui
