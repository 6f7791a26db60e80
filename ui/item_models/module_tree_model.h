// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "module_memory_columns.h"
#include "run_statistics.h"

#include <kforge/module_info.h>
#include <kforge/profiling.h>
#include <kforge/verify.h>

#include <QAbstractItemModel>
#include <QIcon>
#include <QSet>
#include <QStringList>

#include <string>
#include <unordered_map>
#include <vector>

namespace kforge {
struct Plan;
}

namespace kforge::ui {

// The module hierarchy of a model as named_modules() has it, with what the runtime does to each module: hook
// state, the plan entries scoped to it and the calls of the last run. The root module is the single top-level
// row, so its own parameters and functions have a place to show.
class ModuleTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column {
        ModuleColumn,
        HookColumn,
        TypeColumn,
        ParametersColumn,
        CallsColumn,
        FunctionsColumn,
        PlanColumn,
        TimeColumn,        // of a profile, per forward: the module and everything below it
        SelfColumn,        // records whose innermost module is this one
        ShareColumn,       // of the forward, drawn as a bar (ShareRole)
        TopFunctionColumn, // the function with the most time below the module
        DeltaColumn,       // the plan's time against the baseline's, when both were profiled
        ErrorColumn,       // the last Verify Plan: how the module's outputs compare with the baseline's
        AllocatedColumn,   // of a profile with memory, per forward: bytes allocated in the module and below it
        PeakColumn,        // the most bytes live while inside it, above the forward's start
        LiveAtExitColumn,  // the bytes live when it returned, above the forward's start
        PeakDeltaColumn,   // the plan's peak against the baseline's, when both recorded memory
        ColumnCount
    };
    enum Role {
        PathRole = Qt::UserRole + 1, // QString: the module path, "" for the root
        SortRole,                    // raw value of the column (qint64 for parameters and calls)
        HookStateRole,               // int (HookState)
        BreakpointRole,              // bool: a module-entry breakpoint is set here
        OwnFunctionsRole,            // QString: the functions of the module's own forward, for filtering
        ShareRole,                   // double in [0, 1]: the module's share of the forward (ShareColumn)
    };
    // What the runtime does with a module, the strongest first.
    enum HookState {
        NotHooked,
        InScope, // below the scope of an enabled plan entry: its calls see that provider
        Hooked,  // the scope of an enabled plan entry: pre- and post-hooks run on it
        Inside,  // on the path of the module a paused forward is in
    };
    Q_ENUM(Column)
    Q_ENUM(HookState)

    explicit ModuleTreeModel(QObject* parent = nullptr);

    // `modules` in pre-order, root first (ModelSession::modules()). `rootName` labels the root row. Plan,
    // statistics, paused path and breakpoints are kept: they are keyed by module path.
    void setModules(std::vector<kforge::ModuleInfo> modules, const QString& rootName = {});
    void clear();

    // The plan's entries by scope; enabled entries hook their scope module.
    void setPlan(const kforge::Plan& plan);
    // Calls and time of the last run, by module path (RunStatistics).
    void setRunStatistics(const std::unordered_map<std::string, ModuleRunStats>& stats);
    // Time by module of the profile run shown (kforge::moduleTimes); `delta`, when not empty, the comparison of the
    // baseline with the plan by module subtree (kforge::Comparison::bySubtree) for the Δ column (the shown run is
    // then the plan's): the change of the medians, coloured only where the speed verdict is faster or slower. Empty
    // `shown` clears the time columns.
    void setModuleTimes(const std::vector<kforge::ModuleTime>& shown, const std::vector<kforge::ComparisonRow>& delta);
    bool hasModuleTimes() const { return !m_times.empty(); }
    // Memory of the profile run shown (null or not recorded: the memory columns empty) and, when it is the plan of a
    // comparison, of its baseline (for the peak's Δ).
    void setModuleMemory(const kforge::MemorySummary* shown, const kforge::MemorySummary* baseline);
    bool hasModuleMemory() const { return m_memory.any(); }
    bool hasMemoryDelta() const { return m_memory.hasDelta(); }
    bool hasDelta() const { return !m_delta.empty(); }
    // Per module, the last verification's comparison of its outputs (VerifyReport::modules) and the first diverging
    // module ("" the root; ignored when `hasFirst` is false). Empty `modules` clears the Error column.
    void setModuleAgreement(const std::vector<kforge::ModuleAgreement>& modules, const std::string& firstDiverging,
                            bool hasFirst);
    bool hasModuleAgreement() const { return !m_agreement.empty(); }
    // The module a paused forward is in; empty `path` with `paused` false clears it.
    void setPausedPath(const QString& path, bool paused = true);
    void setBreakpoints(const QSet<QString>& modulePaths);
    // Icons for HookStateRole values and breakpoints; without them the model paints plain colours.
    void setIcons(const QIcon& hooked, const QIcon& inScope, const QIcon& inside, const QIcon& breakpoint);

    const kforge::ModuleInfo* moduleAt(const QModelIndex& index) const;
    QModelIndex indexOfPath(const QString& path, int column = ModuleColumn) const;
    HookState hookState(const QString& path) const;
    // The Hook column's text of each state but NotHooked: the column is sized for all of them before a plan exists.
    static QStringList hookStateTexts();

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Dropping a provider from the catalog (application/x-kforge-provider) on a module row asks for a plan
    // entry there (providerDropped). Refused where the module's subtree never calls the provider's function,
    // when the model has a function inventory to tell.
    bool acceptsProvider(const QString& path, const QString& function) const;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QStringList mimeTypes() const override;
    Qt::DropActions supportedDropActions() const override;
    bool canDropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                         const QModelIndex& parent) const override;
    bool dropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                      const QModelIndex& parent) override;

Q_SIGNALS:
    void providerDropped(const QString& scope, const QString& function, const QString& providerType);

private:
    struct Node {
        int parent = -1; // index into m_modules
        int row = 0;     // position among the parent's children
        std::vector<int> children;
    };
    struct NodeState {
        QStringList planEntries; // "gelu → AtenGeluProvider", disabled ones marked
        int enabledEntries = 0;
        HookState hook = NotHooked;
        bool onPausedPath = false;
        bool breakpoint = false;
        ModuleRunStats own;
        ModuleRunStats subtree;
    };

    void buildNodes();
    void recomputeHooks();
    void recomputeStatistics();
    void emitAllChanged(int firstColumn, int lastColumn);
    int nodeOf(const QModelIndex& index) const;
    QVariant display(const kforge::ModuleInfo& module, int node, int column) const;
    QVariant memoryData(const std::string& path, int column, int role) const;
    QVariant decoration(int node, int column) const;
    QVariant timeDisplay(const std::string& path, int column) const;
    QVariant timeSortValue(const std::string& path, int column) const;
    QString timeToolTip(const std::string& path) const;
    QString toolTip(const kforge::ModuleInfo& module, int node, int column) const;
    QVariant errorData(const std::string& path, int role) const;
    QVariant deltaData(const std::string& path, int role) const;

    std::vector<kforge::ModuleInfo> m_modules;
    std::vector<Node> m_nodes;      // parallel to m_modules
    std::vector<NodeState> m_state; // parallel to m_modules
    std::unordered_map<std::string, int> m_nodeByPath;
    QString m_rootName;

    // Kept across setModules(): keyed by path.
    std::unordered_map<std::string, std::vector<std::pair<QString, bool>>> m_planByScope; // text, enabled
    std::unordered_map<std::string, ModuleRunStats> m_stats;
    std::unordered_map<std::string, kforge::ModuleTime> m_times;    // of the run shown
    std::unordered_map<std::string, kforge::ComparisonRow> m_delta; // for Δ; empty without a baseline
    ModuleMemoryColumns m_memory;
    std::unordered_map<std::string, kforge::ModuleAgreement> m_agreement; // of the last verification
    std::string m_firstDiverging;
    bool m_hasFirstDiverging = false;
    QString m_pausedPath;
    bool m_paused = false;
    QSet<QString> m_breakpoints;
    QIcon m_hookedIcon, m_inScopeIcon, m_insideIcon, m_breakpointIcon;
};

} // namespace kforge::ui
