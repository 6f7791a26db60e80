#include "module_tree_model.h"

#include "format.h"

#include <QStringList>

namespace kforge::ui {

ModuleTreeModel::ModuleTreeModel(QObject* parent) : QAbstractItemModel(parent) {}

void ModuleTreeModel::setModules(std::vector<kforge::ModuleInfo> modules, const QString& rootName)
{
    beginResetModel();
    m_modules = std::move(modules);
    m_rootName = rootName;
    buildNodes();
    endResetModel();
}

void ModuleTreeModel::clear() { setModules({}); }

void ModuleTreeModel::buildNodes()
{
    m_nodes.assign(m_modules.size(), Node{});
    m_nodeByPath.clear();
    for (int i = 0; i < int(m_modules.size()); ++i)
        m_nodeByPath.emplace(m_modules[i].path, i);

    // Children come from each module's own list (declaration order), not from the pre-order sequence, so
    // a module listed twice or out of order cannot corrupt the tree; whatever the root cannot reach is
    // left out.
    std::vector<bool> attached(m_modules.size(), false);
    if (!m_modules.empty())
        attached[0] = true;
    for (int i = 0; i < int(m_modules.size()); ++i) {
        for (const std::string& childPath : m_modules[i].children) {
            const auto it = m_nodeByPath.find(childPath);
            if (it == m_nodeByPath.end() || it->second == 0 || attached[it->second])
                continue;
            Node& child = m_nodes[it->second];
            child.parent = i;
            child.row = int(m_nodes[i].children.size());
            m_nodes[i].children.push_back(it->second);
            attached[it->second] = true;
        }
    }
}

const kforge::ModuleInfo* ModuleTreeModel::moduleAt(const QModelIndex& index) const
{
    const int node = nodeOf(index);
    return node < 0 ? nullptr : &m_modules[node];
}

QModelIndex ModuleTreeModel::indexOfPath(const QString& path, int column) const
{
    const auto it = m_nodeByPath.find(path.toStdString());
    if (it == m_nodeByPath.end() || (it->second != 0 && m_nodes[it->second].parent < 0))
        return {};
    return createIndex(m_nodes[it->second].row, column, quintptr(it->second));
}

int ModuleTreeModel::nodeOf(const QModelIndex& index) const
{
    if (!index.isValid() || index.model() != this)
        return -1;
    return int(index.internalId());
}

QModelIndex ModuleTreeModel::index(int row, int column, const QModelIndex& parent) const
{
    if (row < 0 || column < 0 || column >= ColumnCount || parent.column() > 0)
        return {};
    if (!parent.isValid())
        return (row == 0 && !m_modules.empty()) ? createIndex(0, column, quintptr(0)) : QModelIndex();
    const std::vector<int>& children = m_nodes[nodeOf(parent)].children;
    if (row >= int(children.size()))
        return {};
    return createIndex(row, column, quintptr(children[row]));
}

QModelIndex ModuleTreeModel::parent(const QModelIndex& child) const
{
    const int node = nodeOf(child);
    if (node <= 0)
        return {};
    const int parentNode = m_nodes[node].parent;
    return createIndex(m_nodes[parentNode].row, 0, quintptr(parentNode));
}

int ModuleTreeModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return m_modules.empty() ? 0 : 1;
    if (parent.column() > 0)
        return 0;
    return int(m_nodes[nodeOf(parent)].children.size());
}

int ModuleTreeModel::columnCount(const QModelIndex& /*parent*/) const { return ColumnCount; }

QVariant ModuleTreeModel::data(const QModelIndex& index, int role) const
{
    const int node = nodeOf(index);
    if (node < 0)
        return {};
    const kforge::ModuleInfo& module = m_modules[node];
    switch (role) {
    case Qt::DisplayRole:
        return display(module, node, index.column());
    case Qt::ToolTipRole:
        return toolTip(module);
    case Qt::TextAlignmentRole:
        if (index.column() == ParametersColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter); // Qt 6.4's delegate reads it with toInt()
        return {};
    case PathRole:
        return QString::fromStdString(module.path);
    case SortRole:
        if (index.column() == ParametersColumn)
            return qint64(module.subtreeParameterCount);
        return display(module, node, index.column());
    default:
        return {};
    }
}

QVariant ModuleTreeModel::display(const kforge::ModuleInfo& module, int node, int column) const
{
    switch (column) {
    case ModuleColumn:
        if (node == 0)
            return m_rootName.isEmpty() ? tr("(root)") : m_rootName;
        return QString::fromStdString(module.name);
    case TypeColumn:
        return QString::fromStdString(module.typeName);
    case ParametersColumn:
        return formatCount(module.subtreeParameterCount);
    case FunctionsColumn:
        return formatFunctions(module.subtreeFunctions);
    default:
        return {};
    }
}

QString ModuleTreeModel::toolTip(const kforge::ModuleInfo& module) const
{
    QStringList lines;
    lines << (module.path.empty() ? tr("Root module") : QString::fromStdString(module.path));
    lines << tr("Type: %1").arg(QString::fromStdString(module.qualifiedTypeName));
    lines << tr("Parameters: %1 (%2)")
                 .arg(formatCount(module.subtreeParameterCount), formatBytes(module.subtreeParameterBytes));
    if (!module.children.empty()) {
        lines << tr("Own parameters: %1 (%2)")
                     .arg(formatCount(module.parameterCount), formatBytes(module.parameterBytes));
    }
    const QString own = formatFunctions(module.functions);
    if (!own.isEmpty())
        lines << tr("Functions in its own forward: %1").arg(own);
    return lines.join(QLatin1Char('\n'));
}

QVariant ModuleTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case ModuleColumn:
        return tr("Module");
    case TypeColumn:
        return tr("Type");
    case ParametersColumn:
        return tr("Parameters");
    case FunctionsColumn:
        return tr("Functions");
    default:
        return {};
    }
}

} // namespace kforge::ui
