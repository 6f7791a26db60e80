// SPDX-License-Identifier: Apache-2.0
#include "item_models/memory_tables.h"

#include "item_models/duration_format.h"
#include "item_models/format.h"

#include <QLocale>

#include <cmath>
#include <map>
#include <string>

namespace kforge::ui {
namespace {

QString bytesText(double bytes) { return QString::fromStdString(kforge::bytesText(bytes)); }

// "+8.00 MiB", "−16.0 KiB", "0 B"
QString signedBytesText(double bytes)
{
    return bytes > 0   ? QStringLiteral("+") + bytesText(bytes)
           : bytes < 0 ? QStringLiteral("−") + bytesText(-bytes)
                       : bytesText(0);
}

} // namespace

MemoryTableModel::MemoryTableModel(std::vector<std::pair<QString, QString>> headers, QObject* parent)
    : QAbstractTableModel(parent), m_headers(std::move(headers)), m_columns(int(m_headers.size()))
{
}

MemoryTableModel::Cell MemoryTableModel::text(const QString& text, const QString& toolTip)
{
    return {text, text, toolTip};
}

MemoryTableModel::Cell MemoryTableModel::bytes(double bytes, const QString& toolTip)
{
    return {bytesText(bytes), bytes, toolTip};
}

MemoryTableModel::Cell MemoryTableModel::count(double perForward, const QString& toolTip)
{
    // Means over the measured forwards: whole numbers as such, others with a decimal.
    const bool whole = perForward == std::floor(perForward);
    return {QLocale().toString(perForward, 'f', whole ? 0 : 1), perForward, toolTip};
}

void MemoryTableModel::setRows(std::vector<std::vector<Cell>> rows, int columns)
{
    beginResetModel();
    m_rows = std::move(rows);
    m_columns = columns;
    endResetModel();
}

int MemoryTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

int MemoryTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : m_columns; }

QVariant MemoryTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= m_columns)
        return {};
    const Cell& cell = m_rows[size_t(index.row())][size_t(index.column())];
    const bool number = cell.sortValue.typeId() != QMetaType::QString;
    switch (role) {
    case Qt::DisplayRole:
        return cell.text;
    case SortRole:
        return cell.sortValue;
    case Qt::ToolTipRole:
        return cell.toolTip.isEmpty() ? QVariant() : QVariant(cell.toolTip);
    case Qt::TextAlignmentRole:
        return number ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    default:
        return {};
    }
}

QVariant MemoryTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= m_columns)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole)
        return m_headers[size_t(section)].first;
    if (role == Qt::ToolTipRole)
        return m_headers[size_t(section)].second;
    return {};
}

PeakHoldersModel::PeakHoldersModel(QObject* parent)
    : MemoryTableModel({{tr("Module"), tr("Where the bytes were allocated")},
                        {tr("Function call"), tr("The function call open when they were allocated")},
                        {tr("Bytes"), tr("Allocated in the forward and still alive at its peak")},
                        {tr("Allocations"), tr("How many allocations hold those bytes")},
                        {tr("Of the peak"), tr("Their share of the forward's peak")}},
                       parent)
{
}

void PeakHoldersModel::setSummary(const kforge::MemorySummary* memory)
{
    std::vector<std::vector<Cell>> rows;
    if (memory && memory->recorded)
        for (const kforge::PeakHolder& h : memory->aliveAtPeak) {
            const double share = memory->peakBytes > 0 ? double(h.bytes) / double(memory->peakBytes) : 0.0;
            rows.push_back({text(formatModulePath(h.module)),
                            h.function.empty() ? Cell{QStringLiteral("—"), QString(), tr("No function call was open")}
                                               : text(QString::fromStdString(h.function)),
                            bytes(double(h.bytes)), count(h.allocations), Cell{formatShare(share), share, {}}});
        }
    setRows(std::move(rows), ColumnCount);
}

FunctionMemoryModel::FunctionMemoryModel(QObject* parent)
    : MemoryTableModel(
          {{tr("Function"), tr("The function whose calls allocated")},
           {tr("Provider"), tr("What served its calls: the original or a plan's provider")},
           {tr("Calls/forward"), tr("Its calls served by this provider, per forward")},
           {tr("Allocated/forward"), tr("The bytes its calls allocated, per forward (workspaces and outputs)")},
           {tr("Allocations/forward"), tr("How many allocations its calls made, per forward")},
           {tr("Peak in one call"), tr("The most bytes live inside one call above its start: its workspace and "
                                       "outputs at once")},
           {tr("Δ allocated"), tr("Allocated per forward against the baseline's calls of the same function (any "
                                  "provider), for as many calls as this row's")}},
          parent)
{
}

void FunctionMemoryModel::setSummaries(const kforge::MemorySummary* shown, const kforge::MemorySummary* baseline)
{
    const bool recorded = shown && shown->recorded;
    m_hasDelta = recorded && baseline && baseline->recorded;
    // The baseline's bytes per call of each function, over its providers' rows.
    struct Before {
        double bytes = 0, calls = 0;
    };
    std::map<std::string, Before> before;
    if (m_hasDelta)
        for (const kforge::FunctionMemory& f : baseline->functions) {
            before[f.function].bytes += f.allocatedBytes;
            before[f.function].calls += f.calls;
        }
    std::vector<std::vector<Cell>> rows;
    if (recorded)
        for (const kforge::FunctionMemory& f : shown->functions) {
            const QString function = QString::fromStdString(f.function);
            std::vector<Cell> row{text(function),       text(QString::fromStdString(f.provider)),
                                  count(f.calls),       bytes(f.allocatedBytes),
                                  count(f.allocations), bytes(double(f.peakInCallBytes))};
            if (m_hasDelta) {
                const auto it = before.find(f.function);
                const double perCall =
                    it != before.end() && it->second.calls > 0 ? it->second.bytes / it->second.calls : 0.0;
                const double delta = f.allocatedBytes - perCall * f.calls;
                const QString tip = it == before.end()
                                        ? tr("The baseline's calls of %1 allocated nothing").arg(function)
                                        : tr("The baseline's %1 allocated %2 per call; this row's calls (%3 per "
                                             "forward) allocated %4")
                                              .arg(function, bytesText(perCall), QLocale().toString(f.calls, 'g', 4),
                                                   bytesText(f.allocatedBytes));
                row.push_back({signedBytesText(delta), delta, tip});
            }
            rows.push_back(std::move(row));
        }
    setRows(std::move(rows), m_hasDelta ? ColumnCount : DeltaColumn);
}

DriverMemoryModel::DriverMemoryModel(QObject* parent)
    : MemoryTableModel({{tr("Module"), tr("Where the driver allocations were made (the module and below it)")},
                        {tr("Allocated"), tr("Bytes allocated through the driver (cudaMalloc), per forward")},
                        {tr("Freed"), tr("Bytes released through the driver, per forward")},
                        {tr("Allocations"), tr("Driver allocations per forward")},
                        {tr("Peak"), tr("The most driver bytes live while inside the module, above the forward's "
                                        "start")}},
                       parent)
{
}

void DriverMemoryModel::setSummary(const kforge::MemorySummary* memory)
{
    std::vector<std::vector<Cell>> rows;
    if (memory)
        for (const kforge::ModuleMemory& m : memory->driverModules)
            rows.push_back({text(formatModulePath(m.path)), bytes(m.allocatedBytes), bytes(m.freedBytes),
                            count(m.allocations), bytes(double(m.peakBytes))});
    setRows(std::move(rows), ColumnCount);
}

} // namespace kforge::ui
