// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/provider_catalog.h>

#include <QAbstractTableModel>

#include <vector>

namespace kforge::ui {

// The registered provider types (kforge::providerCatalog()), one row each: a drag source for the module tree
// (application/x-kforge-provider). Providers that do not run on the session's device are greyed out and
// cannot be dragged.
class ProviderCatalogModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { FunctionColumn, ProviderColumn, DevicesColumn, DescriptionColumn, ColumnCount };
    enum Role { FunctionRole = Qt::UserRole + 1, TypeRole };

    explicit ProviderCatalogModel(QObject* parent = nullptr);

    void setCatalog(std::vector<kforge::ProviderCatalogEntry> catalog);
    // "cpu", "cuda", "cuda:1": rows whose provider lists no such device are disabled.
    void setDevice(const QString& device);
    bool runsOnDevice(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QStringList mimeTypes() const override;
    QMimeData* mimeData(const QModelIndexList& indexes) const override;
    Qt::DropActions supportedDragActions() const override;

private:
    std::vector<kforge::ProviderCatalogEntry> m_catalog;
    QString m_device = QStringLiteral("cpu"); // without the ":N" index
};

} // namespace kforge::ui
