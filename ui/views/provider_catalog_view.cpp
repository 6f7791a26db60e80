// SPDX-License-Identifier: Apache-2.0
#include "provider_catalog_view.h"

#include "item_models/provider_catalog_model.h"

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTreeView>
#include <QVBoxLayout>

namespace kforge::ui {

ProviderCatalogView::ProviderCatalogView(QWidget* parent)
    : QWidget(parent), m_model(new ProviderCatalogModel(this)), m_filter(new QSortFilterProxyModel(this)),
      m_filterEdit(new QLineEdit(this)), m_view(new QTreeView(this))
{
    setObjectName(QStringLiteral("providerCatalogView"));
    m_filter->setSourceModel(m_model);
    m_filter->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_filter->setFilterKeyColumn(-1); // provider, function, devices or description

    m_filterEdit->setObjectName(QStringLiteral("providerFilter"));
    m_filterEdit->setPlaceholderText(tr("Filter providers or functions"));
    m_filterEdit->setClearButtonEnabled(true);
    connect(m_filterEdit, &QLineEdit::textChanged, m_filter, &QSortFilterProxyModel::setFilterFixedString);

    m_view->setObjectName(QStringLiteral("providerCatalog"));
    m_view->setModel(m_filter);
    m_view->setRootIsDecorated(false);
    m_view->setUniformRowHeights(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setDragEnabled(true);
    m_view->setDragDropMode(QAbstractItemView::DragOnly);
    m_view->setDefaultDropAction(Qt::CopyAction);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(ProviderCatalogModel::FunctionColumn, Qt::AscendingOrder);
    m_view->header()->setStretchLastSection(true);
    m_view->setColumnHidden(ProviderCatalogModel::DescriptionColumn, true); // the tooltip has it

    auto* hint = new QLabel(tr("Drag a provider onto a module in the tree."), this);
    hint->setEnabled(false); // a hint, drawn like disabled text
    hint->setWordWrap(true);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_filterEdit);
    layout->addWidget(m_view, 1);
    layout->addWidget(hint);
}

void ProviderCatalogView::setCatalog(std::vector<kforge::ProviderCatalogEntry> catalog)
{
    m_model->setCatalog(std::move(catalog));
    for (int column = 0; column < ProviderCatalogModel::DescriptionColumn; ++column)
        m_view->resizeColumnToContents(column);
}

void ProviderCatalogView::setDevice(const QString& device) { m_model->setDevice(device); }

ProviderCatalogModel* ProviderCatalogView::model() const { return m_model; }

QTreeView* ProviderCatalogView::view() const { return m_view; }

QLineEdit* ProviderCatalogView::filterEdit() const { return m_filterEdit; }

} // namespace kforge::ui
