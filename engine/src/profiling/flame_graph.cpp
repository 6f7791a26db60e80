// SPDX-License-Identifier: Apache-2.0
#include <kforge/profiling.h>

#include "profiling/function_call_records.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_set>

namespace kforge {
namespace {

// Built as a tree of owned nodes, then flattened parent-first: child modules in the order the forward entered them,
// then the node's own functions (or ops) by decreasing time.
struct Node {
    FlameFrame frame;
    std::int64_t firstEntryNs = INT64_MAX;                 // a module's first entry (its ranges), when the run has them
    int treeIndex = INT_MAX;                               // a module's place in the module tree (declaration order)
    std::map<std::string, std::unique_ptr<Node>> children; // by name
    Node* child(FlameFrame::Kind kind, const std::string& name)
    {
        auto& slot = children[std::to_string(int(kind)) + name];
        if (!slot) {
            slot = std::make_unique<Node>();
            slot->frame.kind = kind;
            slot->frame.name = name;
            const char* separator = kind == FlameFrame::Kind::Module ? "." : "/";
            slot->frame.path =
                frame.path.empty() && kind == FlameFrame::Kind::Module ? name : frame.path + separator + name;
        }
        return slot.get();
    }
};

void flatten(Node& node, int parent, int depth, double offsetUs, std::vector<FlameFrame>& out)
{
    node.frame.parent = parent;
    node.frame.depth = depth;
    node.frame.offsetUs = offsetUs;
    const int self = int(out.size());
    out.push_back(node.frame);
    std::vector<Node*> order;
    for (auto& [key, child] : node.children)
        order.push_back(child.get());
    // By time, identical layers would swap places from run to run (layer4 before layer2, "1" before "0").
    std::stable_sort(order.begin(), order.end(), [](const Node* a, const Node* b) {
        const bool aModule = a->frame.kind == FlameFrame::Kind::Module;
        const bool bModule = b->frame.kind == FlameFrame::Kind::Module;
        if (aModule != bModule)
            return aModule;
        if (aModule && a->firstEntryNs != b->firstEntryNs)
            return a->firstEntryNs < b->firstEntryNs;
        if (aModule && a->treeIndex != b->treeIndex)
            return a->treeIndex < b->treeIndex;
        return a->frame.us > b->frame.us;
    });
    double offset = offsetUs;
    for (Node* child : order) {
        flatten(*child, self, depth + 1, offset, out);
        offset += child->frame.us;
    }
}

// The node of module `path` when the run has one (no time recorded in it: none).
Node* existingModuleNode(Node& root, const std::string& path)
{
    Node* node = &root;
    size_t start = 0;
    while (node && start < path.size()) {
        const size_t dot = path.find('.', start);
        const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        const auto it = node->children.find(std::to_string(int(FlameFrame::Kind::Module)) + part);
        node = it == node->children.end() ? nullptr : it->second.get();
        start = dot == std::string::npos ? path.size() : dot + 1;
    }
    return node;
}

} // namespace

std::vector<FlameFrame> flameGraph(const ProfileRun& run)
{
    Node root;
    // Modules by path: "blocks.0.attn" hangs under "blocks.0", which hangs under "blocks", under the root; `us`
    // is added to every module on the way.
    const auto moduleNode = [&](const std::string& path, double us) {
        Node* node = &root;
        node->frame.us += us;
        size_t start = 0;
        while (start < path.size()) {
            const size_t dot = path.find('.', start);
            const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
            node = node->child(FlameFrame::Kind::Module, part);
            node->frame.us += us;
            start = dot == std::string::npos ? path.size() : dot + 1;
        }
        return node;
    };
    const double forwards = std::max(1, run.iterations);
    std::unordered_set<std::uint64_t> callsCounted; // a call of several ops counts once (function_call_records.h)
    for (const KernelRecord& r : run.records) {
        const double us = double(r.durationNs) / 1000.0 / forwards;
        Node* module = moduleNode(r.modulePath, us);
        Node* function = module->child(FlameFrame::Kind::Function, r.function.empty() ? "(no function)" : r.function);
        Node* op = function->child(FlameFrame::Kind::Op, r.name);
        function->frame.us += us;
        if (const auto call = profiling::functionCallOf(r); !call || callsCounted.insert(*call).second)
            function->frame.calls += 1.0 / forwards;
        op->frame.us += us;
        op->frame.calls += 1.0 / forwards;
    }
    for (const RangeRecord& range : run.ranges)
        if (range.kind == "module") {
            Node* module = moduleNode(range.name, 0.0);
            module->frame.calls += 1.0 / forwards;
            module->firstEntryNs = std::min(module->firstEntryNs, range.startNs);
        }
    for (size_t i = 0; i < run.modules.size(); ++i)
        if (Node* module = existingModuleNode(root, run.modules[i].path)) {
            module->treeIndex = int(i);
            module->frame.typeName = run.modules[i].typeName;
        }
    std::vector<FlameFrame> frames;
    flatten(root, -1, 0, 0.0, frames);
    return frames;
}

namespace {

// Each frame path's time in each measured iteration of `run`: the flame graph of every iteration alone.
std::map<std::string, std::vector<double>> frameTimesPerIteration(const ProfileRun& run)
{
    const int iterations = std::max(1, run.iterations);
    std::vector<ProfileRun> single(static_cast<size_t>(iterations));
    for (ProfileRun& one : single) {
        one.iterations = 1;
        one.modules = run.modules;
    }
    const StallFreeRun stallFree = removeStalls(run); // judged on the times compare() judges
    for (size_t i = 0; i < run.records.size(); ++i) {
        KernelRecord r = run.records[i];
        r.durationNs = std::int64_t(stallFree.durationUs[i] * 1000.0);
        single[size_t(std::clamp(r.iteration, 0, iterations - 1))].records.push_back(std::move(r));
    }
    for (const RangeRecord& r : run.ranges)
        single[size_t(std::clamp(r.iteration, 0, iterations - 1))].ranges.push_back(r);
    std::map<std::string, std::vector<double>> times;
    for (size_t i = 0; i < single.size(); ++i)
        for (const FlameFrame& f : flameGraph(single[i])) {
            std::vector<double>& perIteration = times[f.path];
            perIteration.resize(single.size(), 0.0);
            perIteration[i] = f.us;
        }
    return times;
}

} // namespace

std::map<std::string, SpeedComparison> flameGraphSpeeds(const ProfileRun& baseline, const ProfileRun& plan)
{
    const auto before = frameTimesPerIteration(baseline);
    std::map<std::string, SpeedComparison> speeds;
    for (const auto& [path, after] : frameTimesPerIteration(plan)) {
        const auto base = before.find(path);
        if (base != before.end())
            speeds.emplace(path, compareSpeed(base->second, after));
    }
    return speeds;
}

namespace {

// A bottom-up node: callers by kind and name.
struct CallerNode {
    FlameFrame frame;
    std::map<std::pair<int, std::string>, std::unique_ptr<CallerNode>> callers;
};

void flattenByTime(CallerNode& node, int parent, int depth, double offsetUs, std::vector<FlameFrame>& out)
{
    node.frame.parent = parent;
    node.frame.depth = depth;
    node.frame.offsetUs = offsetUs;
    const int self = int(out.size());
    out.push_back(node.frame);
    std::vector<CallerNode*> order;
    for (auto& [key, child] : node.callers)
        order.push_back(child.get());
    std::stable_sort(order.begin(), order.end(),
                     [](const CallerNode* a, const CallerNode* b) { return a->frame.us > b->frame.us; });
    double offset = offsetUs;
    for (CallerNode* child : order) {
        flattenByTime(*child, self, depth + 1, offset, out);
        offset += child->frame.us;
    }
}

} // namespace

std::vector<FlameFrame> bottomUp(const std::vector<FlameFrame>& topDown)
{
    if (topDown.empty())
        return {};
    std::vector<double> selfUs(topDown.size());
    for (size_t i = 0; i < topDown.size(); ++i)
        selfUs[i] = topDown[i].us;
    for (const FlameFrame& f : topDown)
        if (f.parent >= 0)
            selfUs[size_t(f.parent)] -= f.us;
    CallerNode root;
    root.frame = topDown.front();
    root.frame.name.clear();
    root.frame.path.clear();
    for (size_t i = 0; i < topDown.size(); ++i) {
        const double us = selfUs[i];
        if (us <= 1e-9 || i == 0)
            continue; // the root's own time stays in the root frame
        CallerNode* node = &root;
        std::string path;
        for (int at = int(i); at > 0; at = topDown[size_t(at)].parent) { // the frame, then its callers up to the root
            const FlameFrame& f = topDown[size_t(at)];
            const std::string name = f.kind == FlameFrame::Kind::Module ? f.path : f.name;
            auto& slot = node->callers[{int(f.kind), name}];
            path += (path.empty() ? "" : "/") + name;
            if (!slot) {
                slot = std::make_unique<CallerNode>();
                slot->frame.kind = f.kind;
                slot->frame.name = name;
                slot->frame.typeName = f.typeName;
                slot->frame.path = path;
            }
            node = slot.get();
            node->frame.us += us;
            if (at == int(i))
                node->frame.calls += f.calls;
        }
    }
    std::vector<FlameFrame> frames;
    flattenByTime(root, -1, 0, 0.0, frames);
    return frames;
}

} // namespace kforge
