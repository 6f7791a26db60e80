// SPDX-License-Identifier: Apache-2.0
#include "comparison_model.h"

#include "duration_format.h"
#include "format.h"
#include "semantic_colors.h"

#include <algorithm>

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QLocale>

namespace kforge::ui {
namespace {

Semantic meaningOf(ComparisonModel::Verdict verdict)
{
    return verdict == ComparisonModel::Faster ? Semantic::Faster : Semantic::Slower;
}

// Tints blend into whatever base colour the palette has; the text colours follow the theme.
QColor tint(ComparisonModel::Verdict verdict) { return semanticTint(meaningOf(verdict)); }
QColor textColour(ComparisonModel::Verdict verdict) { return semanticTextColor(meaningOf(verdict)); }

const std::vector<kforge::ComparisonRow> kNoRows;

} // namespace

ComparisonModel::ComparisonModel(QObject* parent) : QAbstractTableModel(parent) {}

void ComparisonModel::setComparison(std::optional<kforge::Comparison> comparison)
{
    beginResetModel();
    m_comparison = std::move(comparison);
    endResetModel();
}

void ComparisonModel::setGrouping(Grouping grouping)
{
    if (grouping == m_grouping)
        return;
    beginResetModel();
    m_grouping = grouping;
    endResetModel();
    Q_EMIT headerDataChanged(Qt::Horizontal, KeyColumn, KeyColumn);
}

const std::vector<kforge::ComparisonRow>& ComparisonModel::rows() const
{
    if (!m_comparison)
        return kNoRows;
    return m_grouping == Grouping::Function ? m_comparison->byFunction : m_comparison->byModule;
}

TimeUnit ComparisonModel::unit() const
{
    return m_comparison ? timeUnitFor(std::max(m_comparison->baselineTotalUs, m_comparison->planTotalUs)) : TimeUnit{};
}

ComparisonModel::Verdict ComparisonModel::verdict(const kforge::ComparisonRow& row)
{
    if (row.baselineUs <= 0 || row.planUs <= 0)
        return Unchanged;
    switch (row.speed.verdict) {
    case kforge::SpeedVerdict::Faster:
        return Faster;
    case kforge::SpeedVerdict::Slower:
        return Slower;
    case kforge::SpeedVerdict::NoDetectableChange:
    case kforge::SpeedVerdict::TooNoisy:
        break;
    }
    return Unchanged;
}

QString ComparisonModel::outputErrorText() const
{
    if (!m_comparison)
        return {};
    if (!m_comparison->outputsComparable)
        return tr("not comparable");
    const QLocale locale;
    return tr("max |Δ| %1, max rel. %2")
        .arg(locale.toString(m_comparison->maxAbsError, 'g', 3), locale.toString(m_comparison->maxRelError, 'g', 3));
}

int ComparisonModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !m_comparison)
        return 0;
    return int(rows().size()) + 1; // + Total
}

int ComparisonModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ComparisonModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const bool total = size_t(index.row()) == rows().size();
    kforge::ComparisonRow r;
    if (total) {
        r.key = tr("Total").toStdString();
        r.baselineUs = m_comparison->baselineTotalUs;
        r.planUs = m_comparison->planTotalUs;
        r.speedup = m_comparison->speedup;
        r.speed = m_comparison->speed;
    } else {
        r = rows()[size_t(index.row())];
    }
    const Verdict v = verdict(r);
    // The change the speedup says (one estimator behind both columns: the median of the paired ratios), not the
    // ratio of two medians, which can disagree with it in sign.
    const double change = r.speedup > 0 ? 1.0 / r.speedup - 1.0 : 0;
    const int column = index.column();

    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case KeyColumn:
            if (!total && m_grouping == Grouping::Module)
                return formatModulePath(r.key);
            return QString::fromStdString(r.key);
        case BaselineColumn:
            return formatIn(r.baselineUs, unit());
        case PlanColumn:
            return formatIn(r.planUs, unit());
        case SpeedupColumn:
            if (r.speedup > 0)
                return formatSpeedup(r.speedup);
            return r.baselineUs > 0 ? tr("gone") : tr("—");
        case ChangeColumn:
            if (r.baselineUs <= 0)
                return r.planUs > 0 ? tr("new") : QString();
            return QStringLiteral("%1%2 %").arg(change > 0 ? QStringLiteral("+") : QString(),
                                                QLocale().toString(change * 100, 'f', 1));
        case ErrorColumn:
            return total ? outputErrorText() : QString();
        default:
            return {};
        }
    case SortRole:
        switch (column) {
        case KeyColumn:
        case ErrorColumn:
            return data(index, Qt::DisplayRole);
        case BaselineColumn:
            return r.baselineUs;
        case PlanColumn:
            return r.planUs;
        case SpeedupColumn:
            return r.speedup;
        default:
            return change;
        }
    case VerdictRole:
        return int(v);
    case IsTotalRole:
        return total;
    case Qt::BackgroundRole:
        return v == Unchanged ? QVariant() : QVariant(QBrush(tint(v)));
    case Qt::ForegroundRole:
        if (v != Unchanged && (column == SpeedupColumn || column == ChangeColumn))
            return QBrush(textColour(v));
        return {};
    case Qt::FontRole:
        if (total) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    case Qt::TextAlignmentRole:
        return column == KeyColumn || column == ErrorColumn ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                                            : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        if (column == BaselineColumn || column == PlanColumn)
            return tr("%1 per iteration (median)")
                .arg(formatDuration(column == BaselineColumn ? r.baselineUs : r.planUs));
        if (column == KeyColumn || column == SpeedupColumn || column == ChangeColumn)
            return formatRowVerdict(r);
        if (total && column == ErrorColumn)
            return tr("Largest difference between the baseline's and the plan's model outputs");
        return {};
    default:
        return {};
    }
}

QVariant ComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::ToolTipRole && (section == BaselineColumn || section == PlanColumn))
        return tr("Median over the measured iterations of the time per iteration, in %1").arg(unit().name);
    if (role == Qt::ToolTipRole && section == SpeedupColumn)
        return tr("Median of the per-iteration ratios baseline / plan (baseline and plan ran in alternating rounds); "
                  "coloured only when the 95% interval excludes 1.0×");
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case KeyColumn:
        return m_grouping == Grouping::Function ? tr("Function") : tr("Module");
    case BaselineColumn:
        return tr("Baseline (%1, median)").arg(unit().name);
    case PlanColumn:
        return tr("Plan (%1, median)").arg(unit().name);
    case SpeedupColumn:
        return tr("Speedup");
    case ChangeColumn:
        return tr("Change");
    case ErrorColumn:
        return tr("Output error");
    default:
        return {};
    }
}

} // namespace kforge::ui
