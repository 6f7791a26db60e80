// SPDX-License-Identifier: Apache-2.0
#include "provider_catalog_model.h"

#include "provider_mime.h"

#include <QMimeData>

#include <algorithm>

namespace kforge::ui {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

} // namespace

ProviderCatalogModel::ProviderCatalogModel(QObject* parent) : QAbstractTableModel(parent) {}

void ProviderCatalogModel::setCatalog(std::vector<kforge::ProviderCatalogEntry> catalog)
{
    beginResetModel();
    m_catalog = std::move(catalog);
    endResetModel();
}

void ProviderCatalogModel::setDevice(const QString& device)
{
    const QString kind = device.section(QLatin1Char(':'), 0, 0).toLower();
    if (kind == m_device)
        return;
    m_device = kind;
    if (!m_catalog.empty())
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

bool ProviderCatalogModel::runsOnDevice(int row) const
{
    if (row < 0 || row >= int(m_catalog.size()))
        return false;
    const auto& devices = m_catalog[row].devices;
    return std::find(devices.begin(), devices.end(), m_device.toStdString()) != devices.end();
}

int ProviderCatalogModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_catalog.size());
}

int ProviderCatalogModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ProviderCatalogModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const kforge::ProviderCatalogEntry& entry = m_catalog[index.row()];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case ProviderColumn:
            return qs(entry.typeName);
        case FunctionColumn:
            return qs(entry.function);
        case DevicesColumn: {
            QStringList devices;
            for (const std::string& device : entry.devices)
                devices << qs(device);
            return devices.join(QStringLiteral(", "));
        }
        case DescriptionColumn:
            return qs(entry.description);
        default:
            return {};
        }
    case Qt::ToolTipRole: {
        QString tip = qs(entry.description);
        if (!entry.plugin.empty())
            tip += tr("\nFrom plugin %1").arg(qs(entry.plugin));
        tip += runsOnDevice(index.row()) ? tr("\nDrag it onto a module of the tree to add a plan entry there.")
                                         : tr("\nDoes not run on %1.").arg(m_device);
        return tip;
    }
    case FunctionRole:
        return qs(entry.function);
    case TypeRole:
        return qs(entry.typeName);
    default:
        return {};
    }
}

QVariant ProviderCatalogModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case ProviderColumn:
        return tr("Provider");
    case FunctionColumn:
        return tr("Function");
    case DevicesColumn:
        return tr("Devices");
    case DescriptionColumn:
        return tr("Description");
    default:
        return {};
    }
}

Qt::ItemFlags ProviderCatalogModel::flags(const QModelIndex& index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    if (!runsOnDevice(index.row()))
        return Qt::NoItemFlags; // greyed out: a plan entry with it would not validate on this device
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDragEnabled;
}

QStringList ProviderCatalogModel::mimeTypes() const { return {providerMimeType()}; }

QMimeData* ProviderCatalogModel::mimeData(const QModelIndexList& indexes) const
{
    for (const QModelIndex& index : indexes) {
        if (index.isValid() && runsOnDevice(index.row())) {
            const kforge::ProviderCatalogEntry& entry = m_catalog[index.row()];
            return createProviderMimeData({qs(entry.typeName), qs(entry.function)});
        }
    }
    return nullptr;
}

Qt::DropActions ProviderCatalogModel::supportedDragActions() const { return Qt::CopyAction; }

} // namespace kforge::ui
