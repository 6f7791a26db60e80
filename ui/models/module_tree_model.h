#pragma once
#include <kforge/module_info.h>

#include <QAbstractItemModel>

#include <string>
#include <unordered_map>
#include <vector>

namespace kforge::ui {

// The module hierarchy of a model as named_modules() has it. The root module is the single top-level row,
// so its own parameters and functions have a place to show.
class ModuleTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { ModuleColumn, TypeColumn, ParametersColumn, FunctionsColumn, ColumnCount };
    enum Role {
        PathRole = Qt::UserRole + 1, // QString: the module path, "" for the root
        SortRole,                    // raw value of the column (qint64 for parameters)
    };
    Q_ENUM(Column)

    explicit ModuleTreeModel(QObject* parent = nullptr);

    // `modules` in pre-order, root first (ModelSession::modules()). `rootName` labels the root row.
    void setModules(std::vector<kforge::ModuleInfo> modules, const QString& rootName = {});
    void clear();

    const kforge::ModuleInfo* moduleAt(const QModelIndex& index) const;
    QModelIndex indexOfPath(const QString& path, int column = ModuleColumn) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Node {
        int parent = -1; // index into m_modules
        int row = 0;     // position among the parent's children
        std::vector<int> children;
    };

    void buildNodes();
    int nodeOf(const QModelIndex& index) const;
    QVariant display(const kforge::ModuleInfo& module, int node, int column) const;
    QString toolTip(const kforge::ModuleInfo& module) const;

    std::vector<kforge::ModuleInfo> m_modules;
    std::vector<Node> m_nodes; // parallel to m_modules
    std::unordered_map<std::string, int> m_nodeByPath;
    QString m_rootName;
};

} // namespace kforge::ui
