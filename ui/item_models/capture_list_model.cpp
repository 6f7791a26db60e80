// SPDX-License-Identifier: Apache-2.0
#include "capture_list_model.h"

#include "format.h"
#include "semantic_colors.h"

#include <QBrush>
#include <QColor>

#include <exception>

namespace kforge::ui {
namespace {

// The stacks view's leftover colour: one warning colour for patches left behind, wherever they show.
QColor warningColor() { return semanticTextColor(Semantic::Leftover); }
QColor staleColor() { return semanticTextColor(Semantic::Stale); }
QColor failedColor() { return semanticTextColor(Semantic::Error); }

QString qs(const std::string& s) { return QString::fromStdString(s); }

// Child rows point at their capture: internal id = capture row + 1; capture rows have id 0.
constexpr quintptr kTopLevel = 0;

} // namespace

CaptureListModel::CaptureListModel(QObject* parent) : QAbstractItemModel(parent) {}

void CaptureListModel::setCaptures(std::vector<kforge::CaptureRecord> captures)
{
    beginResetModel();
    m_captures = std::move(captures);
    m_marks.assign(m_captures.size(), {});
    recomputeStale();
    endResetModel();
}

void CaptureListModel::setPlan(const kforge::Plan& plan)
{
    m_plan = plan;
    recomputeStale();
    if (!m_captures.empty())
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

void CaptureListModel::setLiveLeftovers(std::vector<kforge::LeftoverPatch> live)
{
    m_live = std::move(live);
    for (int row = 0; row < rowCount(); ++row) {
        const QModelIndex parent = index(row, 0);
        if (const int children = rowCount(parent); children > 0)
            Q_EMIT dataChanged(index(0, 0, parent), index(children - 1, ColumnCount - 1, parent));
    }
}

void CaptureListModel::recomputeStale()
{
    for (size_t i = 0; i < m_captures.size(); ++i) {
        Mark& mark = m_marks[i];
        mark = {};
        if (!m_captures[i].ok)
            continue; // nothing was captured: nothing to replay, nothing to go stale
        try {
            mark.stale = kforge::captureIsStale(m_captures[i], m_plan);
        } catch (const std::exception& e) {
            // The plan names a provider type that is not registered: it cannot be what was captured.
            mark.stale = true;
            mark.staleReason = QString::fromUtf8(e.what());
        }
    }
}

bool CaptureListModel::inEffect(const kforge::LeftoverPatch& patch) const
{
    for (const kforge::LeftoverPatch& live : m_live) {
        if (live.function == patch.function && live.modulePath == patch.modulePath && live.thread == patch.thread &&
            live.runtimeId == patch.runtimeId)
            return true;
    }
    return false;
}

bool CaptureListModel::isStale(int captureRow) const
{
    return captureRow >= 0 && captureRow < int(m_marks.size()) && m_marks[captureRow].stale;
}

int CaptureListModel::leftoversInEffect() const
{
    int count = 0;
    for (const kforge::CaptureRecord& record : m_captures)
        for (const kforge::LeftoverPatch& patch : record.leftovers)
            count += inEffect(patch) ? 1 : 0;
    return count;
}

CaptureListModel::RowKind CaptureListModel::kindOf(const QModelIndex& index) const
{
    if (!index.isValid() || index.internalId() == kTopLevel)
        return RowKind::Capture;
    const auto& record = m_captures[index.internalId() - 1];
    return index.row() < int(record.providers.size()) ? RowKind::Provider : RowKind::Leftover;
}

QModelIndex CaptureListModel::index(int row, int column, const QModelIndex& parent) const
{
    if (!hasIndex(row, column, parent))
        return {};
    if (!parent.isValid())
        return createIndex(row, column, kTopLevel);
    return createIndex(row, column, quintptr(parent.row()) + 1);
}

QModelIndex CaptureListModel::parent(const QModelIndex& child) const
{
    if (!child.isValid() || child.internalId() == kTopLevel)
        return {};
    return createIndex(int(child.internalId() - 1), 0, kTopLevel);
}

int CaptureListModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return int(m_captures.size());
    if (parent.internalId() != kTopLevel || parent.column() != 0)
        return 0;
    const kforge::CaptureRecord& record = m_captures[parent.row()];
    return int(record.providers.size() + record.leftovers.size());
}

int CaptureListModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant CaptureListModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    if (index.internalId() == kTopLevel)
        return captureData(index.row(), index.column(), role);
    return childData(int(index.internalId() - 1), index.row(), index.column(), role);
}

QVariant CaptureListModel::captureData(int row, int column, int role) const
{
    const kforge::CaptureRecord& record = m_captures[row];
    const Mark& mark = m_marks[row];
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case CaptureColumn:
            return qs(record.id);
        case StateColumn:
            return !record.ok ? tr("failed") : mark.stale ? tr("stale") : tr("current");
        case ProviderColumn:
            return tr("%n provider(s)", nullptr, int(record.providers.size()));
        case DetailColumn:
            if (!record.ok)
                return tr("%1 (%n leftover patch(es))", nullptr, int(record.leftovers.size())).arg(qs(record.error));
            if (mark.stale)
                return tr("the plan now installs other providers: replays still run these; capture again");
            return tr("replayed %n time(s)", nullptr, record.replays);
        default:
            return {};
        }
    case Qt::ToolTipRole:
        if (!mark.staleReason.isEmpty())
            return mark.staleReason;
        if (column == DetailColumn && !record.ok)
            return qs(record.error);
        return {};
    case Qt::ForegroundRole:
        if (column == StateColumn || column == DetailColumn) {
            if (!record.ok)
                return QBrush(failedColor());
            if (mark.stale)
                return QBrush(staleColor());
        }
        return {};
    case KindRole:
        return int(RowKind::Capture);
    case CaptureIdRole:
        return qs(record.id);
    case StaleRole:
        return mark.stale;
    default:
        return {};
    }
}

QVariant CaptureListModel::childData(int captureRow, int row, int column, int role) const
{
    const kforge::CaptureRecord& record = m_captures[captureRow];
    const bool isProvider = row < int(record.providers.size());
    if (role == KindRole)
        return int(isProvider ? RowKind::Provider : RowKind::Leftover);
    if (role == CaptureIdRole)
        return qs(record.id);
    if (isProvider) {
        const kforge::CapturedProvider& provider = record.providers[row];
        if (role != Qt::DisplayRole)
            return {};
        switch (column) {
        case CaptureColumn:
            return tr("provider");
        case ScopeColumn:
            return formatModulePath(provider.scope);
        case FunctionColumn:
            return qs(provider.function);
        case ProviderColumn:
            return qs(provider.provider);
        default:
            return {};
        }
    }

    const kforge::LeftoverPatch& patch = record.leftovers[row - record.providers.size()];
    const bool live = inEffect(patch);
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case CaptureColumn:
            return tr("leftover");
        case StateColumn:
            return live ? tr("in effect") : tr("unwound");
        case ScopeColumn:
            return formatModulePath(patch.modulePath);
        case FunctionColumn:
            return qs(patch.function);
        case ProviderColumn:
            return qs(patch.provider);
        case DetailColumn: {
            QString reason = tr("exit of %1 never ran").arg(formatModulePath(patch.modulePath));
            const std::string& error = patch.error.empty() ? record.error : patch.error;
            if (!error.empty())
                reason += QStringLiteral(": ") + qs(error);
            return reason;
        }
        default:
            return {};
        }
    case Qt::ForegroundRole:
        return QBrush(warningColor());
    case Qt::BackgroundRole:
        if (live) {
            QColor tint = warningColor();
            tint.setAlpha(40);
            return QBrush(tint);
        }
        return {};
    case Qt::ToolTipRole:
        return live ? tr("%1 still runs %2 on thread %3. Unwind (deactivate) restores the original.")
                          .arg(qs(patch.function), qs(patch.provider))
                          .arg(patch.thread)
                    : tr("Unwound: the original %1 is back.").arg(qs(patch.function));
    case InEffectRole:
        return live;
    default:
        return {};
    }
}

QVariant CaptureListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case CaptureColumn:
        return tr("Capture");
    case StateColumn:
        return tr("State");
    case ScopeColumn:
        return tr("Scope");
    case FunctionColumn:
        return tr("Function");
    case ProviderColumn:
        return tr("Provider");
    case DetailColumn:
        return tr("Detail");
    default:
        return {};
    }
}

} // namespace kforge::ui
