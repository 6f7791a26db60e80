// SPDX-License-Identifier: Apache-2.0
// The JSON shapes of the engine's value types (kforge/json_shapes.h).
#include <kforge/json_shapes.h>

#include "common/json_shapes_read.h"

#include <cmath>

namespace kforge {

using ordered_json = nlohmann::ordered_json;

ordered_json jsonNumber(double value)
{
    if (std::isnan(value))
        return "NaN";
    if (std::isinf(value))
        return value > 0 ? "Infinity" : "-Infinity";
    return value;
}

void to_json(ordered_json& out, const ModuleInfo& m)
{
    out = {{"path", m.path},
           {"name", m.name},
           {"type", m.typeName},
           {"qualified_type", m.qualifiedTypeName},
           {"parameters", m.parameterCount},
           {"parameter_bytes", m.parameterBytes},
           {"subtree_parameters", m.subtreeParameterCount},
           {"subtree_parameter_bytes", m.subtreeParameterBytes},
           {"children", m.children},
           {"functions", m.functions},
           {"subtree_functions", m.subtreeFunctions},
           {"has_forward", m.hasForward},
           {"forward_called", m.forwardCalled},
           {"depth", m.depth}};
}

void to_json(ordered_json& out, const TensorDigest& d)
{
    out = {{"path", d.path},   {"dtype", d.dtype},         {"device", d.device},
           {"shape", d.shape}, {"sum", jsonNumber(d.sum)}, {"max_abs", jsonNumber(d.maxAbs)}};
}

void to_json(ordered_json& out, const LeftoverPatch& p)
{
    out = {{"function", p.function}, {"provider", p.provider},        {"module", p.modulePath},
           {"thread", p.thread},     {"runtime", p.runtimeId},        {"error", p.error},
           {"unwound", p.unwound},   {"thread_ended", p.threadEnded}, {"capture", p.capture}};
}

void to_json(ordered_json& out, const EntryDeclines& d)
{
    out = {{"entry", d.entry},       {"scope", d.scope}, {"function", d.function},
           {"provider", d.provider}, {"calls", d.calls}, {"last_reason", d.lastReason}};
}

void to_json(ordered_json& out, const StatRow& r)
{
    out = {{"name", r.key},         {"function", r.function}, {"module", r.modulePath}, {"calls", r.calls},
           {"total_us", r.totalUs}, {"mean_us", r.meanUs},    {"min_us", r.minUs},      {"median_us", r.medianUs},
           {"p95_us", r.p95Us},     {"max_us", r.maxUs},      {"share", r.share}};
}

void to_json(ordered_json& out, const StallReport& s)
{
    out = {{"iterations", s.iterations},
           {"stalled_iterations", s.stalledIterations},
           {"stalled_calls", s.stalledCalls},
           {"excess_us", s.excessUs},
           {"smallest_us", s.smallestUs},
           {"largest_us", s.largestUs},
           {"remains", s.remains()},
           {"cores", s.machine.cores},
           {"load_average", s.machine.loadAverage},
           {"intra_op_threads", s.machine.intraOpThreads},
           {"message", describe(s)}};
}

void to_json(ordered_json& out, const PlanWarning& w)
{
    out = {{"entry", w.entry}, {"scope", w.scope},   {"function", w.function}, {"provider", w.providerType},
           {"kind", w.kind},   {"reason", w.reason}, {"fix", w.fix},           {"message", w.text()}};
}

ordered_json runDescription(const ProfileRun& run)
{
    return {{"model", run.model},
            {"inputs", run.inputs},
            {"device", run.device},
            {"device_name", run.deviceName},
            {"graph_executor", run.graphExecutor},
            {"intra_op_threads", run.intraOpThreads},
            {"cores", run.cores},
            {"load_average", run.loadAverage},
            {"versions", {{"torch", run.torchVersion}, {"cupti", run.cuptiVersion}, {"kforge", run.kforgeVersion}}},
            {"warmup_iterations", run.warmupIterations},
            {"iterations", run.iterations},
            {"cancelled", run.cancelled},
            {"dropped_records", run.droppedRecords},
            {"wall_ns", run.wallNs},
            {"used_plan", run.usedPlan},
            {"plan", run.plan},
            {"declines", run.declines}};
}

// ---- readers ---------------------------------------------------------------------------------------------------

EntryDeclines readEntryDeclines(const JsonReader& rd, const nlohmann::json& d, const std::string& p)
{
    return {rd.integer<int>(d, p, "entry", -1),
            rd.string(d, p, "scope"),
            rd.string(d, p, "function"),
            rd.string(d, p, "provider"),
            rd.integer<std::uint64_t>(d, p, "calls", 0),
            rd.string(d, p, "last_reason")};
}

ModuleInfo readModuleInfo(const JsonReader& rd, const nlohmann::json& m, const std::string& p)
{
    ModuleInfo info;
    info.path = rd.string(m, p, "path", true);
    info.name = rd.string(m, p, "name");
    info.typeName = rd.string(m, p, "type");
    info.qualifiedTypeName = rd.string(m, p, "qualified_type");
    info.parameterCount = rd.integer<std::int64_t>(m, p, "parameters", 0);
    info.parameterBytes = rd.integer<std::int64_t>(m, p, "parameter_bytes", 0);
    info.subtreeParameterCount = rd.integer<std::int64_t>(m, p, "subtree_parameters", 0);
    info.subtreeParameterBytes = rd.integer<std::int64_t>(m, p, "subtree_parameter_bytes", 0);
    info.children = rd.strings(m, p, "children");
    info.functions = rd.counts(m, p, "functions");
    info.subtreeFunctions = rd.counts(m, p, "subtree_functions");
    info.depth = rd.integer<int>(m, p, "depth", 0);
    info.hasForward = rd.boolean(m, p, "has_forward", true); // files before these were written: unknown
    info.forwardCalled = rd.boolean(m, p, "forward_called", true);
    return info;
}

TensorDigest readTensorDigest(const JsonReader& rd, const nlohmann::json& o, const std::string& p)
{
    TensorDigest d;
    d.path = rd.string(o, p, "path");
    d.dtype = rd.string(o, p, "dtype");
    d.device = rd.string(o, p, "device");
    const nlohmann::json& shape = rd.array(o, p, "shape");
    for (size_t k = 0; k < shape.size(); ++k)
        d.shape.push_back(rd.integer<std::int64_t>(shape[k], p + "/shape/" + std::to_string(k)));
    if (const nlohmann::json* v = rd.find(o, p, "sum", false))
        d.sum = rd.real(*v, p + "/sum");
    if (const nlohmann::json* v = rd.find(o, p, "max_abs", false))
        d.maxAbs = rd.real(*v, p + "/max_abs");
    return d;
}

} // namespace kforge
