// SPDX-License-Identifier: Apache-2.0
#include "module_tree_filter_model.h"

#include "module_tree_model.h"

#include <functional>

namespace kforge::ui {

ModuleTreeFilterModel::ModuleTreeFilterModel(QObject* parent) : QSortFilterProxyModel(parent)
{
    setRecursiveFilteringEnabled(true);
    setSortRole(ModuleTreeModel::SortRole);
}

void ModuleTreeFilterModel::setFilter(const QString& text, bool regex)
{
    if (text == m_text && regex == m_regex)
        return;
    m_text = text;
    m_regex = regex;
    m_expression = QRegularExpression(regex ? text : QString(), QRegularExpression::CaseInsensitiveOption);
    invalidateRowsFilter();
    Q_EMIT filterChanged();
}

QString ModuleTreeFilterModel::filterText() const { return m_text; }

QString ModuleTreeFilterModel::filterError() const
{
    if (!m_regex || m_expression.isValid())
        return {};
    return m_expression.errorString();
}

bool ModuleTreeFilterModel::matches(const QString& value) const
{
    if (m_regex)
        return m_expression.match(value).hasMatch();
    return value.contains(m_text, Qt::CaseInsensitive);
}

bool ModuleTreeFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    if (m_text.isEmpty() || (m_regex && !m_expression.isValid()))
        return true;
    const QAbstractItemModel* model = sourceModel();
    const QModelIndex name = model->index(sourceRow, ModuleTreeModel::ModuleColumn, sourceParent);
    const QString path = name.data(ModuleTreeModel::PathRole).toString();
    return matches(path.isEmpty() ? name.data().toString() : path) ||
           matches(model->index(sourceRow, ModuleTreeModel::TypeColumn, sourceParent).data().toString()) ||
           matches(name.data(ModuleTreeModel::OwnFunctionsRole).toString());
}

QModelIndex ModuleTreeFilterModel::firstMatch() const
{
    const std::function<QModelIndex(const QModelIndex&)> visit = [&](const QModelIndex& parent) -> QModelIndex {
        for (int row = 0; row < rowCount(parent); ++row) {
            const QModelIndex index = this->index(row, ModuleTreeModel::ModuleColumn, parent);
            const QModelIndex source = mapToSource(index);
            if (m_text.isEmpty() || filterAcceptsRow(source.row(), source.parent()))
                return index;
            if (const QModelIndex below = visit(index); below.isValid())
                return below;
        }
        return {};
    };
    return visit({});
}

} // namespace kforge::ui
