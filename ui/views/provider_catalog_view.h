// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/provider_catalog.h>

#include <QWidget>

#include <vector>

class QLineEdit;
class QSortFilterProxyModel;
class QTreeView;

namespace kforge::ui {

class ProviderCatalogModel;

// The provider catalog beside the plan: a filter box (provider type or function) and the list of provider
// types, greyed out where they do not run on the model's device. Rows drag onto the module tree.
class ProviderCatalogView : public QWidget {
    Q_OBJECT
public:
    explicit ProviderCatalogView(QWidget* parent = nullptr);

    void setCatalog(std::vector<kforge::ProviderCatalogEntry> catalog);
    void setDevice(const QString& device);

    ProviderCatalogModel* model() const;
    QTreeView* view() const;
    QLineEdit* filterEdit() const;

private:
    ProviderCatalogModel* m_model;
    QSortFilterProxyModel* m_filter;
    QLineEdit* m_filterEdit;
    QTreeView* m_view;
};

} // namespace kforge::ui
