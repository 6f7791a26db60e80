// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/runtime_types.h>

#include <QAbstractItemModel>
#include <QSet>

#include <cstdint>
#include <vector>

namespace kforge::ui {

// The runtime's function stacks at one moment (snapshotFunctionStacks()): per thread, per function, the
// callable in effect and the save-and-restore entries, bottom first; then the leftover patches, the ones a
// failed forward left in effect, with the module whose exit never ran and the error.
class FunctionStacksModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column {
        NameColumn,     // thread, function, "#depth", leftover's function
        CallableColumn, // in effect / installed / leftover's provider
        SavedColumn,    // what the push saved
        ModuleColumn,   // who pushed it; for a leftover, the module whose exit never ran
        TimeColumn,     // ms since the time base
        DetailColumn,
        ColumnCount
    };
    enum class RowKind { Thread, Function, Entry, LeftoverGroup, Leftover };
    enum Role {
        KindRole = Qt::UserRole + 1, // int (RowKind)
        FunctionRole,                // QString: the function of a function, entry or leftover row
        ThreadRole,                  // qulonglong
        ModulePathRole,              // QString
        LeftoverRole,                // bool: the row is a leftover patch or a stack entry that is one
        BreakpointRole,              // bool: a breakpoint is set on the row's function
    };
    Q_ENUM(Column)

    explicit FunctionStacksModel(QObject* parent = nullptr);

    // Threads with nothing in effect and outside any forward are left out. Returns whether the rows changed
    // (identical snapshots keep the view's expansion and selection).
    bool setSnapshot(std::vector<kforge::ThreadStacksSnapshot> threads, std::vector<kforge::LeftoverPatch> leftovers);
    void clear();
    // Leftovers from runtime.leftovers() carry no error text: take it from leftoverReports().
    static std::vector<kforge::LeftoverPatch> withReasons(std::vector<kforge::LeftoverPatch> leftovers,
                                                          const std::vector<kforge::LeftoverPatch>& reports);

    void setFunctionBreakpoints(const QSet<QString>& functions);
    QSet<QString> functionBreakpoints() const { return m_breakpoints; }
    void setForwardThread(std::uint64_t thread); // labelled as the forward thread
    void setTimeBase(std::int64_t timeNs);       // 0: the oldest time in the snapshot

    const std::vector<kforge::ThreadStacksSnapshot>& threads() const { return m_threads; }
    const std::vector<kforge::LeftoverPatch>& leftovers() const { return m_leftovers; }
    RowKind kindOf(const QModelIndex& index) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Node {
        RowKind kind = RowKind::Thread;
        int parent = -1;
        int row = 0;
        int thread = -1;   // index into m_threads
        int function = -1; // index into that thread's functions
        int entry = -1;    // index into the function's entries, or into m_leftovers
        std::vector<int> children;
    };

    void rebuild();
    int addNode(Node node);
    int nodeOf(const QModelIndex& index) const;
    bool isLeftoverEntry(const Node& node) const;
    QVariant display(const Node& node, int column) const;
    QString toolTip(const Node& node) const;
    QString formatTime(std::int64_t timeNs) const;
    QString threadLabel(std::uint64_t thread) const;

    std::vector<kforge::ThreadStacksSnapshot> m_threads;
    std::vector<kforge::LeftoverPatch> m_leftovers;
    std::vector<Node> m_nodes;
    std::vector<int> m_topLevel;
    QSet<QString> m_breakpoints;
    std::uint64_t m_forwardThread = 0;
    std::int64_t m_timeBase = 0;
    std::int64_t m_oldest = 0;
};

} // namespace kforge::ui
