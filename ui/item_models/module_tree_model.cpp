// SPDX-License-Identifier: Apache-2.0
#include "module_tree_model.h"

#include "duration_format.h"
#include "format.h"
#include "semantic_colors.h"
#include "provider_mime.h"
#include "verify_verdicts.h"

#include <kforge/module_path.h>
#include <kforge/plan.h>

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QMimeData>

#include <algorithm>

namespace kforge::ui {
namespace {

// Plain colours stand in for icons when none were given (the models library has no resources).
QColor stateColor(ModuleTreeModel::HookState state)
{
    switch (state) {
    case ModuleTreeModel::Hooked:
        return semanticColor(Semantic::Hooked);
    case ModuleTreeModel::InScope:
        return semanticColor(Semantic::InScope);
    case ModuleTreeModel::Inside:
        return semanticColor(Semantic::Inside);
    case ModuleTreeModel::NotHooked:
        break;
    }
    return {};
}

QString stateText(ModuleTreeModel::HookState state)
{
    switch (state) {
    case ModuleTreeModel::Hooked:
        return ModuleTreeModel::tr("hooked");
    case ModuleTreeModel::InScope:
        return ModuleTreeModel::tr("in scope");
    case ModuleTreeModel::Inside:
        return ModuleTreeModel::tr("inside");
    case ModuleTreeModel::NotHooked:
        break;
    }
    return {};
}

} // namespace

ModuleTreeModel::ModuleTreeModel(QObject* parent) : QAbstractItemModel(parent) {}

void ModuleTreeModel::setModules(std::vector<kforge::ModuleInfo> modules, const QString& rootName)
{
    beginResetModel();
    m_modules = std::move(modules);
    m_rootName = rootName;
    buildNodes();
    recomputeHooks();
    recomputeStatistics();
    endResetModel();
}

void ModuleTreeModel::clear() { setModules({}); }

void ModuleTreeModel::buildNodes()
{
    m_nodes.assign(m_modules.size(), Node{});
    m_state.assign(m_modules.size(), NodeState{});
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

void ModuleTreeModel::setPlan(const kforge::Plan& plan)
{
    m_planByScope.clear();
    for (const kforge::PlanEntry& entry : plan.entries) {
        QString text = QStringLiteral("%1 → %2").arg(QString::fromStdString(entry.function),
                                                     QString::fromStdString(entry.providerType()));
        if (!entry.enabled)
            text += tr(" (off)");
        m_planByScope[entry.scope].emplace_back(text, entry.enabled);
    }
    recomputeHooks();
    emitAllChanged(ModuleColumn, ColumnCount - 1);
}

void ModuleTreeModel::setRunStatistics(const std::unordered_map<std::string, ModuleRunStats>& stats)
{
    if (stats == m_stats)
        return;
    m_stats = stats;
    recomputeStatistics();
    emitAllChanged(CallsColumn, CallsColumn);
}

void ModuleTreeModel::setModuleTimes(const std::vector<kforge::ModuleTime>& shown,
                                     const std::vector<kforge::ComparisonRow>& delta)
{
    m_times.clear();
    m_delta.clear();
    for (const kforge::ModuleTime& t : shown)
        m_times.emplace(t.path, t);
    if (!m_times.empty())
        for (const kforge::ComparisonRow& row : delta)
            m_delta.emplace(row.key, row);
    emitAllChanged(TimeColumn, DeltaColumn);
}

void ModuleTreeModel::setModuleMemory(const kforge::MemorySummary* shown, const kforge::MemorySummary* baseline)
{
    m_memory.set(shown, baseline);
    emitAllChanged(AllocatedColumn, PeakDeltaColumn);
}

// The Δ column: the plan's change against the baseline, in the verdict's colour when there is one.
QVariant ModuleTreeModel::deltaData(const std::string& path, int role) const
{
    const auto it = m_delta.find(path);
    if (it == m_delta.end())
        return {};
    const kforge::ComparisonRow& row = it->second;
    const bool measured = row.baselineUs > 0;
    // The change the comparison's speedup says (the median of the paired ratios), as the Comparison tab shows it.
    const double change = measured && row.speedup > 0   ? 1.0 / row.speedup - 1.0
                          : measured && row.planUs <= 0 ? -1.0
                                                        : 0.0;
    switch (role) {
    case Qt::DisplayRole:
        if (!measured)
            return {};
        return QStringLiteral("%1%2 %").arg(change > 0 ? QStringLiteral("+") : QString()).arg(change * 100, 0, 'f', 1);
    case SortRole:
        return change;
    case Qt::ToolTipRole:
        return tr("Δ: the change of this module's median time per forward (with everything below it).\n%1")
            .arg(formatRowVerdict(row));
    case Qt::ForegroundRole:
        if (!measured || row.planUs <= 0 || !kforge::isChange(row.speed.verdict))
            return {};
        return QBrush(
            semanticTextColor(row.speed.verdict == kforge::SpeedVerdict::Faster ? Semantic::Faster : Semantic::Slower));
    default:
        return {};
    }
}

void ModuleTreeModel::setModuleAgreement(const std::vector<kforge::ModuleAgreement>& modules,
                                         const std::string& firstDiverging, bool hasFirst)
{
    m_agreement.clear();
    for (const kforge::ModuleAgreement& m : modules)
        m_agreement.emplace(m.module, m);
    m_firstDiverging = firstDiverging;
    m_hasFirstDiverging = hasFirst;
    emitAllChanged(ErrorColumn, ErrorColumn);
}

// The Error column: text, tooltip, sort value and colour, strongest where the divergence is made.
QVariant ModuleTreeModel::errorData(const std::string& path, int role) const
{
    const auto it = m_agreement.find(path);
    if (it == m_agreement.end())
        return role == Qt::ToolTipRole && !m_agreement.empty()
                   ? QVariant(tr("Not compared by the last verification (no call in the window compared)."))
                   : QVariant();
    const kforge::ModuleAgreement& m = it->second;
    const FirstDivergence position = !m_hasFirstDiverging                            ? FirstDivergence::Elsewhere
                                     : path == m_firstDiverging                      ? FirstDivergence::Here
                                     : module_path::isWithin(m_firstDiverging, path) ? FirstDivergence::Inside
                                                                                     : FirstDivergence::Elsewhere;
    const bool first = position == FirstDivergence::Here;
    switch (role) {
    case Qt::DisplayRole:
        return moduleErrorText(m, position);
    case Qt::ToolTipRole:
        return moduleErrorToolTip(m, position);
    case SortRole:
        return m.maxAbsError;
    case Qt::BackgroundRole:
        switch (moduleErrorKind(m)) {
        case ModuleErrorKind::Agrees:
            return {};
        case ModuleErrorKind::DivergesHere:
            return QBrush(first ? semanticColor(Semantic::Error) : semanticTint(Semantic::Error));
        case ModuleErrorKind::Diverged:
            break;
        }
        return QBrush(semanticTint(Semantic::Leftover));
    case Qt::ForegroundRole:
        if (first)
            return QBrush(textColorOn(semanticColor(Semantic::Error)));
        return {};
    default:
        return {};
    }
}

QVariant ModuleTreeModel::timeDisplay(const std::string& path, int column) const
{
    const auto it = m_times.find(path);
    if (it == m_times.end())
        return {};
    const kforge::ModuleTime& t = it->second;
    switch (column) {
    case TimeColumn:
        return formatDuration(t.totalUs);
    case SelfColumn:
        return t.selfUs > 0 ? formatDuration(t.selfUs) : QString();
    case ShareColumn:
        return QStringLiteral("%1 %").arg(t.share * 100.0, 0, 'f', 1);
    case TopFunctionColumn:
        return t.topFunction.empty() ? QString()
                                     : QStringLiteral("%1 (%2)").arg(QString::fromStdString(t.topFunction),
                                                                     formatDuration(t.topFunctionUs));
    case DeltaColumn:
        return deltaData(path, Qt::DisplayRole);
    default:
        return {};
    }
}

QVariant ModuleTreeModel::timeSortValue(const std::string& path, int column) const
{
    const auto it = m_times.find(path);
    if (it == m_times.end())
        return 0.0;
    switch (column) {
    case SelfColumn:
        return it->second.selfUs;
    case ShareColumn:
        return it->second.share;
    case TopFunctionColumn:
        return it->second.topFunctionUs;
    case DeltaColumn: {
        const QVariant change = deltaData(path, SortRole);
        return change.isValid() ? change : QVariant(0.0);
    }
    default:
        return it->second.totalUs;
    }
}

QString ModuleTreeModel::timeToolTip(const std::string& path) const
{
    const auto it = m_times.find(path);
    if (it == m_times.end())
        return tr("No profile yet: run one (Profile menu) to see where each module's time goes.");
    const kforge::ModuleTime& t = it->second;
    QStringList lines;
    lines << tr("Per forward: %1 in this module and below (%2 of the forward), %3 in its own code")
                 .arg(formatDuration(t.totalUs), QStringLiteral("%1 %").arg(t.share * 100.0, 0, 'f', 1),
                      formatDuration(t.selfUs));
    if (t.calls > 0)
        lines << tr("Entered %1 time(s) per forward").arg(t.calls, 0, 'g', 3);
    if (!t.topFunction.empty())
        lines << tr("Most time below it: %1, %2")
                     .arg(QString::fromStdString(t.topFunction), formatDuration(t.topFunctionUs));
    if (const auto delta = m_delta.find(path); delta != m_delta.end())
        lines << tr("Baseline: %1 per forward (median), with the plan %2; %3")
                     .arg(formatDuration(delta->second.baselineUs), formatDuration(delta->second.planUs),
                          formatRowVerdict(delta->second));
    return lines.join(QLatin1Char('\n'));
}

void ModuleTreeModel::setPausedPath(const QString& path, bool paused)
{
    if (m_paused == paused && m_pausedPath == path)
        return;
    m_pausedPath = paused ? path : QString();
    m_paused = paused;
    recomputeHooks();
    emitAllChanged(ModuleColumn, ColumnCount - 1);
}

void ModuleTreeModel::setBreakpoints(const QSet<QString>& modulePaths)
{
    if (modulePaths == m_breakpoints)
        return;
    m_breakpoints = modulePaths;
    recomputeHooks();
    emitAllChanged(ModuleColumn, ModuleColumn);
}

void ModuleTreeModel::setIcons(const QIcon& hooked, const QIcon& inScope, const QIcon& inside, const QIcon& breakpoint)
{
    m_hookedIcon = hooked;
    m_inScopeIcon = inScope;
    m_insideIcon = inside;
    m_breakpointIcon = breakpoint;
    emitAllChanged(ModuleColumn, HookColumn);
}

void ModuleTreeModel::recomputeHooks()
{
    std::vector<std::string> hookedScopes;
    for (const auto& [scope, entries] : m_planByScope) {
        for (const auto& [text, enabled] : entries) {
            if (enabled) {
                hookedScopes.push_back(scope);
                break;
            }
        }
    }
    const std::string paused = m_pausedPath.toStdString();
    for (int i = 0; i < int(m_modules.size()); ++i) {
        const std::string& path = m_modules[i].path;
        NodeState& state = m_state[i];
        state.planEntries.clear();
        state.enabledEntries = 0;
        if (const auto it = m_planByScope.find(path); it != m_planByScope.end()) {
            for (const auto& [text, enabled] : it->second) {
                state.planEntries << text;
                state.enabledEntries += enabled ? 1 : 0;
            }
        }
        state.onPausedPath = m_paused && (path == paused || path.empty() || module_path::isBelow(paused, path));
        state.breakpoint = m_breakpoints.contains(QString::fromStdString(path));
        if (state.onPausedPath)
            state.hook = Inside;
        else if (state.enabledEntries > 0)
            state.hook = Hooked;
        else if (std::any_of(hookedScopes.begin(), hookedScopes.end(),
                             [&](const std::string& scope) { return module_path::isBelow(path, scope); }))
            state.hook = InScope;
        else
            state.hook = NotHooked;
    }
}

void ModuleTreeModel::recomputeStatistics()
{
    for (int i = 0; i < int(m_modules.size()); ++i) {
        const auto it = m_stats.find(m_modules[i].path);
        m_state[i].own = it == m_stats.end() ? ModuleRunStats{} : it->second;
        m_state[i].subtree = m_state[i].own;
    }
    // Pre-order: every child comes after its parent, so walking backwards sums whole subtrees.
    for (int i = int(m_modules.size()) - 1; i > 0; --i) {
        const int parent = m_nodes[i].parent;
        if (parent < 0)
            continue;
        m_state[parent].subtree.calls += m_state[i].subtree.calls;
        m_state[parent].subtree.providerCalls += m_state[i].subtree.providerCalls;
    }
}

void ModuleTreeModel::emitAllChanged(int firstColumn, int lastColumn)
{
    if (m_modules.empty())
        return;
    Q_EMIT dataChanged(index(0, firstColumn), index(0, lastColumn));
    for (int i = 0; i < int(m_modules.size()); ++i) {
        const auto& children = m_nodes[i].children;
        if (children.empty() || (i != 0 && m_nodes[i].parent < 0))
            continue;
        const QModelIndex parent = createIndex(m_nodes[i].row, 0, quintptr(i));
        Q_EMIT dataChanged(index(0, firstColumn, parent), index(int(children.size()) - 1, lastColumn, parent));
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

ModuleTreeModel::HookState ModuleTreeModel::hookState(const QString& path) const
{
    const auto it = m_nodeByPath.find(path.toStdString());
    return it == m_nodeByPath.end() ? NotHooked : m_state[it->second].hook;
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
    const NodeState& state = m_state[node];
    if (index.column() >= AllocatedColumn && (role == Qt::DisplayRole || role == Qt::ToolTipRole || role == SortRole))
        return memoryData(module.path, index.column(), role);
    if (index.column() == ErrorColumn && (role == Qt::DisplayRole || role == Qt::ToolTipRole || role == SortRole ||
                                          role == Qt::BackgroundRole || role == Qt::ForegroundRole))
        return errorData(module.path, role);
    if (index.column() == DeltaColumn && (role == Qt::ToolTipRole || role == Qt::ForegroundRole) &&
        m_delta.count(module.path))
        return deltaData(module.path, role);
    switch (role) {
    case Qt::DisplayRole:
        return display(module, node, index.column());
    case Qt::DecorationRole:
        return decoration(node, index.column());
    case Qt::ToolTipRole:
        return toolTip(module, node, index.column());
    case Qt::TextAlignmentRole:
        if (index.column() == ParametersColumn || index.column() == CallsColumn ||
            (index.column() >= TimeColumn && index.column() != TopFunctionColumn))
            return int(Qt::AlignRight | Qt::AlignVCenter); // Qt 6.4's delegate reads it with toInt()
        return {};
    case Qt::FontRole:
        if (state.onPausedPath) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    case Qt::BackgroundRole:
        if (m_paused && module.path == m_pausedPath.toStdString()) {
            QColor highlight = stateColor(Inside);
            highlight.setAlpha(60);
            return QBrush(highlight);
        }
        return {};
    case PathRole:
        return QString::fromStdString(module.path);
    case SortRole:
        if (index.column() >= TimeColumn)
            return timeSortValue(module.path, index.column());
        if (index.column() == ParametersColumn)
            return qint64(module.subtreeParameterCount);
        if (index.column() == CallsColumn)
            return qint64(state.subtree.calls);
        if (index.column() == HookColumn)
            return int(state.hook);
        return display(module, node, index.column());
    case HookStateRole:
        return int(state.hook);
    case BreakpointRole:
        return state.breakpoint;
    case OwnFunctionsRole:
        return formatFunctions(module.functions);
    case ShareRole: {
        const auto it = m_times.find(module.path);
        return it == m_times.end() ? QVariant() : QVariant(it->second.share);
    }
    default:
        return {};
    }
}

QStringList ModuleTreeModel::hookStateTexts() { return {stateText(Hooked), stateText(InScope), stateText(Inside)}; }

QVariant ModuleTreeModel::display(const kforge::ModuleInfo& module, int node, int column) const
{
    const NodeState& state = m_state[node];
    switch (column) {
    case ModuleColumn:
        if (node == 0)
            return m_rootName.isEmpty() ? tr("(root)") : m_rootName;
        return QString::fromStdString(module.name);
    case HookColumn:
        return stateText(state.hook);
    case TypeColumn:
        return QString::fromStdString(module.typeName);
    case ParametersColumn:
        return formatCount(module.subtreeParameterCount);
    case FunctionsColumn:
        return formatFunctions(module.subtreeFunctions);
    case PlanColumn:
        return state.planEntries.join(QStringLiteral("; "));
    case CallsColumn:
        return state.subtree.calls > 0 ? formatCount(state.subtree.calls) : QString();
    default:
        return timeDisplay(module.path, column);
    }
}

QVariant ModuleTreeModel::decoration(int node, int column) const
{
    const NodeState& state = m_state[node];
    if (column == ModuleColumn && state.breakpoint) {
        if (!m_breakpointIcon.isNull())
            return m_breakpointIcon;
        return semanticColor(Semantic::Breakpoint);
    }
    if (column != HookColumn || state.hook == NotHooked)
        return {};
    const QIcon& icon = state.hook == Hooked ? m_hookedIcon : state.hook == InScope ? m_inScopeIcon : m_insideIcon;
    if (!icon.isNull())
        return icon;
    return stateColor(state.hook);
}

QString ModuleTreeModel::toolTip(const kforge::ModuleInfo& module, int node, int column) const
{
    const NodeState& state = m_state[node];
    QStringList lines;
    switch (column) {
    case HookColumn:
        switch (state.hook) {
        case Hooked:
            return tr("Hooked: the scope of %n enabled plan entries; its pre-hook installs their providers and its "
                      "post-hook restores what was in effect.",
                      nullptr, state.enabledEntries);
        case InScope:
            return tr("Inside a plan scope: calls here see the providers of the enclosing hooked module.");
        case Inside:
            return tr("The paused forward is inside this module.");
        case NotHooked:
            return tr("Not hooked by the current plan.");
        }
        return {};
    case PlanColumn:
        if (state.planEntries.isEmpty())
            return tr("No plan entry is scoped to this module.");
        return tr("Plan entries scoped here:\n%1").arg(state.planEntries.join(QLatin1Char('\n')));
    case TimeColumn:
    case SelfColumn:
    case ShareColumn:
    case TopFunctionColumn:
    case DeltaColumn:
        return timeToolTip(module.path);
    case CallsColumn:
        lines << tr("Intercepted calls in the last run, in this module and below: %1 (%2 served by a provider)")
                     .arg(formatCount(state.subtree.calls), formatCount(state.subtree.providerCalls));
        if (state.own.entries > 0) {
            lines << tr("Entered %n time(s), %1 ms inside", nullptr, int(state.own.entries))
                         .arg(QString::number(double(state.own.timeNs) / 1e6, 'f', 3));
        }
        lines << tr("Calls are counted for the innermost hooked module around them (a plan scope).");
        return lines.join(QLatin1Char('\n'));
    default:
        break;
    }
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
    if (state.breakpoint)
        lines << tr("Breakpoint on module entry");
    return lines.join(QLatin1Char('\n'));
}

QVariant ModuleTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case ModuleColumn:
        return tr("Module");
    case HookColumn:
        return tr("Hook");
    case TypeColumn:
        return tr("Type");
    case ParametersColumn:
        return tr("Parameters");
    case FunctionsColumn:
        return tr("Functions");
    case PlanColumn:
        return tr("Plan entries");
    case CallsColumn:
        return tr("Calls");
    case TimeColumn:
        return tr("Time");
    case SelfColumn:
        return tr("Self");
    case ShareColumn:
        return tr("Share");
    case TopFunctionColumn:
        return tr("Top function");
    case DeltaColumn:
        return tr("Δ vs baseline");
    case ErrorColumn:
        return tr("Error");
    case AllocatedColumn:
        return tr("Allocated");
    case PeakColumn:
        return tr("Peak memory");
    case LiveAtExitColumn:
        return tr("Live at exit");
    case PeakDeltaColumn:
        return tr("Δ peak");
    default:
        return {};
    }
}

QVariant ModuleTreeModel::memoryData(const std::string& path, int column, int role) const
{
    const auto memoryColumn = ModuleMemoryColumns::Column(column - AllocatedColumn);
    if (role == Qt::ToolTipRole)
        return m_memory.toolTip(path);
    if (role == SortRole)
        return m_memory.sortValue(path, memoryColumn);
    return m_memory.display(path, memoryColumn);
}

} // namespace kforge::ui

namespace kforge::ui {

bool ModuleTreeModel::acceptsProvider(const QString& path, const QString& function) const
{
    const auto it = m_nodeByPath.find(path.toStdString());
    if (it == m_nodeByPath.end())
        return false;
    // A model without any function inventory (nothing interceptable found) cannot tell: let the plan's
    // validation speak instead.
    if (m_modules.front().subtreeFunctions.empty())
        return true;
    const auto& functions = m_modules[it->second].subtreeFunctions;
    const auto called = functions.find(function.toStdString());
    return called != functions.end() && called->second > 0;
}

Qt::ItemFlags ModuleTreeModel::flags(const QModelIndex& index) const
{
    const Qt::ItemFlags flags = QAbstractItemModel::flags(index);
    return index.isValid() ? flags | Qt::ItemIsDropEnabled : flags;
}

QStringList ModuleTreeModel::mimeTypes() const { return {providerMimeType()}; }

Qt::DropActions ModuleTreeModel::supportedDropActions() const { return Qt::CopyAction; }

bool ModuleTreeModel::canDropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                                      const QModelIndex& parent) const
{
    // Only onto a module row (row and column -1), never between rows: the row is the entry's scope.
    if (action != Qt::CopyAction || row != -1 || column != -1 || !parent.isValid())
        return false;
    const std::optional<ProviderDrag> provider = providerFromMimeData(data);
    return provider && acceptsProvider(parent.data(PathRole).toString(), provider->function);
}

bool ModuleTreeModel::dropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                                   const QModelIndex& parent)
{
    if (!canDropMimeData(data, action, row, column, parent))
        return false;
    const std::optional<ProviderDrag> provider = providerFromMimeData(data);
    Q_EMIT providerDropped(parent.data(PathRole).toString(), provider->function, provider->type);
    return true;
}

} // namespace kforge::ui
