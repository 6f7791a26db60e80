// SPDX-License-Identifier: Apache-2.0
// Reading a torch.export package's serialized program: its module tree, functions and nodes (exported_program.h).
#include <kforge/error.h>
#include <kforge/exported_program.h>
#include <kforge/functions.h>
#include <kforge/module_path.h>

#include "model/exported_metadata.h"
#include "model/exported_package.h"
#include "model/subtree_sums.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

namespace kforge {
namespace {

using nlohmann::json;

// "torch.nn.modules.linear.Linear" -> "Linear"
std::string shortTypeName(const std::string& qualified)
{
    const auto dot = qualified.rfind('.');
    return dot == std::string::npos ? qualified : qualified.substr(dot + 1);
}

// Bytes per element of torch/_export/serde/schema.py's ScalarType.
std::int64_t elementSize(int scalarType)
{
    switch (scalarType) {
    case 1:  // BYTE
    case 2:  // CHAR
    case 12: // BOOL
        return 1;
    case 3:  // SHORT
    case 6:  // HALF
    case 13: // BFLOAT16
        return 2;
    case 4: // INT
    case 7: // FLOAT
    case 9: // COMPLEX32
        return 4;
    case 5:  // LONG
    case 8:  // DOUBLE
    case 10: // COMPLEX64
        return 8;
    case 11: // COMPLEX128
        return 16;
    default:
        return 1;
    }
}

// The tree: every module a node ran in, the owners of the weights, and the containers between them.
class TreeBuilder {
public:
    ModuleInfo& module(const std::string& path)
    {
        if (const auto it = m_index.find(path); it != m_index.end())
            return m_modules[it->second];
        if (!path.empty()) {
            module(std::string(module_path::parentOf(path)))
                .children.push_back(path); // containers first: a ModuleList has no node of its own
        }
        ModuleInfo info;
        info.path = path;
        info.name = module_path::leafOf(path);
        info.hasForward = false; // until a node ran in it
        info.forwardCalled = false;
        m_index.emplace(path, m_modules.size());
        m_modules.push_back(std::move(info));
        return m_modules.back();
    }

    // A parameter of the module at `path`; `identity` is the weight's file in the package (tied weights share one).
    void hold(const std::string& path, HeldParameter parameter)
    {
        ModuleInfo& owner = module(path);
        owner.parameterCount += parameter.count;
        owner.parameterBytes += parameter.bytes;
        m_held[path].push_back(std::move(parameter));
    }

    // Pre-order from the root, with depths and subtree sums.
    std::vector<ModuleInfo> finish()
    {
        std::vector<ModuleInfo> ordered;
        ordered.reserve(m_modules.size());
        visit(module(""), 0, ordered);
        fillSubtreeSums(ordered, m_held);
        return ordered;
    }

private:
    void visit(ModuleInfo& m, int depth, std::vector<ModuleInfo>& out)
    {
        m.depth = depth;
        out.push_back(m);
        for (const std::string& child : m.children)
            visit(m_modules[m_index.at(child)], depth + 1, out);
    }

    std::unordered_map<std::string, std::vector<HeldParameter>> m_held;
    std::vector<ModuleInfo> m_modules;
    std::map<std::string, size_t> m_index;
};

} // namespace

bool isExportedProgramPath(const std::string& path)
{
    return path.size() > 4 && path.compare(path.size() - 4, 4, ".pt2") == 0;
}

namespace {

// The programs of an open package: the names of its models/<name>.json records, in archive order.
std::vector<std::string> programsOf(caffe2::serialize::PyTorchStreamReader& reader)
{
    std::vector<std::string> programs;
    for (const std::string& record : reader.getAllRecords())
        if (record.rfind("models/", 0) == 0 && record.size() > 12 &&
            record.compare(record.size() - 5, 5, ".json") == 0 && record.find('/', 7) == std::string::npos)
            programs.push_back(record.substr(7, record.size() - 12));
    return programs;
}

// The models an AOTInductor package (torch._inductor.aoti_compile_and_package) holds compiled. Empty for any other
// package.
std::vector<CompiledModel> compiledModelsOf(caffe2::serialize::PyTorchStreamReader& reader)
{
    constexpr std::string_view prefix = "data/aotinductor/";
    std::vector<CompiledModel> models;
    for (const std::string& record : reader.getAllRecords()) {
        if (record.rfind(prefix, 0) != 0)
            continue;
        const size_t slash = record.find('/', prefix.size());
        if (slash == std::string::npos)
            continue;
        const std::string name = record.substr(prefix.size(), slash - prefix.size());
        auto it = std::find_if(models.begin(), models.end(), [&](const CompiledModel& m) { return m.name == name; });
        if (it == models.end())
            it = models.insert(models.end(), CompiledModel{name, false, {}});
        if (record.size() > 6 && record.compare(record.size() - 6, 6, ".cubin") == 0)
            it->cuda = true;
        constexpr std::string_view wrapper = ".wrapper.cpp";
        if (record.size() > wrapper.size() &&
            record.compare(record.size() - wrapper.size(), wrapper.size(), wrapper) == 0)
            it->wrapperSource = record;
    }
    return models;
}

std::string joined(const std::vector<std::string>& names)
{
    std::string text;
    for (const std::string& n : names)
        text += (text.empty() ? "" : ", ") + n;
    return text.empty() ? std::string("none") : text;
}

std::shared_ptr<caffe2::serialize::PyTorchStreamReader> openPt2(const std::string& path)
{
    if (!std::filesystem::exists(path))
        throw Error(path, "file not found");
    try {
        auto reader = std::make_shared<caffe2::serialize::PyTorchStreamReader>(path);
        const auto isPt2 = [&] {
            if (!reader->hasRecord("archive_format"))
                return false;
            auto [data, size] = reader->getRecord("archive_format");
            return std::string(static_cast<const char*>(data.get()), size) == "pt2";
        };
        if (!isPt2())
            throw Error(path, "not a torch.export package (no archive_format \"pt2\"; write one with "
                              "torch.export.save)");
        if (programsOf(*reader).empty())
            if (const auto compiled = compiledModelsOf(*reader); !compiled.empty()) {
                std::vector<std::string> names;
                for (const CompiledModel& model : compiled)
                    names.push_back(model.name + (model.cuda ? " (CUDA)" : " (CPU)"));
                throw Error(path, "an AOTInductor package (torch._inductor.aoti_compile_and_package) of compiled "
                                  "code: " +
                                      joined(names) +
                                      ", with no exported program in it. Its nodes cannot be read: save the exported "
                                      "program itself, torch.export.save(program, path), to see its modules and "
                                      "plan providers for it (AOTInductor compiles that same program)");
            }
        return reader;
    } catch (const c10::Error& e) {
        throw Error(path, std::string("not a readable .pt2 package (") + e.what_without_backtrace() + ")");
    }
}

} // namespace

std::vector<std::string> exportedProgramNames(const std::string& path) { return programsOf(*openPt2(path)); }

std::vector<std::string> compiledModelNamesBeside(const std::string& path)
{
    std::vector<std::string> names;
    for (const CompiledModel& model : compiledModelsOf(*openPt2(path))) // openPt2 refuses a package without programs
        names.push_back(model.name);
    return names;
}

std::vector<CompiledModel> compiledModelsIn(const std::string& path)
{
    if (!std::filesystem::exists(path))
        throw Error(path, "file not found");
    try {
        caffe2::serialize::PyTorchStreamReader reader(path);
        return programsOf(reader).empty() ? compiledModelsOf(reader) : std::vector<CompiledModel>{};
    } catch (const c10::Error& e) {
        throw Error(path, std::string("not a readable .pt2 package (") + e.what_without_backtrace() + ")");
    }
}

std::vector<CompiledModel> compiledModelsBeside(const ExportedPackage& package)
{
    return compiledModelsOf(*package.reader);
}

std::string chooseExportedProgram(const std::string& path, const std::vector<std::string>& programs,
                                  const std::string& requested)
{
    const auto has = [&](const std::string& name) {
        return std::find(programs.begin(), programs.end(), name) != programs.end();
    };
    if (!requested.empty()) {
        if (!has(requested))
            throw Error(path, "has no exported program '" + requested + "' (it has: " + joined(programs) + ")");
        return requested;
    }
    if (programs.size() == 1)
        return programs.front();
    for (const char* usual : {"model", "forward"}) // torch.export.save's name, then package_pt2's usual one
        if (has(usual))
            return usual;
    throw Error(path, programs.empty() ? std::string("holds no exported program (no models/NAME.json)")
                                       : "holds several exported programs (" + joined(programs) +
                                             "): choose one with --program NAME");
}

ExportedPackage openExportedPackage(const std::string& path, const std::string& program)
{
    ExportedPackage package;
    package.path = path;
    package.reader = openPt2(path);
    package.program = chooseExportedProgram(path, programsOf(*package.reader), program);
    try {
        const std::string model = "models/" + package.program + ".json";
        package.model = parseJsonText(package.text(model), path + ": " + model);
        for (const auto& [config, kind] :
             {std::pair{&package.weightsConfig, "weights"}, {&package.constantsConfig, "constants"}}) {
            const std::string record =
                std::string("data/") + kind + "/" + package.program + "_" + kind + "_config.json";
            if (package.has(record))
                *config = parseJsonText(package.text(record), path + ": " + record);
        }
    } catch (const c10::Error& e) {
        throw Error(path, std::string("not a readable .pt2 package (") + e.what_without_backtrace() + ")");
    }
    return package;
}

std::string ExportedPackage::text(const std::string& record) const
{
    auto [data, size] = reader->getRecord(record);
    return std::string(static_cast<const char*>(data.get()), size);
}

bool ExportedPackage::has(const std::string& record) const { return reader->hasRecord(record); }

ExportedProgramInfo readExportedProgram(const std::string& path, const std::string& program)
{
    return describeExportedProgram(openExportedPackage(path, program));
}

ExportedProgramInfo describeExportedProgram(const ExportedPackage& package)
{
    const std::string& path = package.path;
    const std::string& program = package.program;
    ExportedProgramInfo info;
    info.path = path;
    info.program = program;
    const json& root = package.model;
    const json& weights = package.weightsConfig;
    try {
        info.torchVersion = root.value("torch_version", "");
        const json& graph = root.at("graph_module").at("graph");
        TreeBuilder tree;
        // Every module, in declaration order (named_modules()), whether it runs or not; types come from the nodes'
        // module stacks, so a container that never runs (a ModuleList) has none.
        for (const json& entry : root.at("graph_module").value("module_call_graph", json::array()))
            tree.module(entry.value("fqn", ""));
        std::map<std::string, std::set<std::string>> callsSeen; // module -> torch_fn call ids counted
        // The nodes of the graph and, in order, of the subgraphs its higher-order ops run (autocast and grad-mode
        // blocks, both branches of cond: a static inventory counts a branch that is not taken). Export records no
        // module stack inside cond's branches: their nodes belong to the module that calls cond. `scope` keeps the
        // torch_fn call ids of a subgraph apart from the graph's.
        const std::function<void(const json&, const std::string&, const std::string&)> visitNodes =
            [&](const json& nodes, const std::string& inheritedPath, const std::string& scope) {
                for (const json& node : nodes) {
                    ExportedNode n;
                    n.name = node.value("name", "");
                    const std::string target = node.value("target", ""); // "torch.ops.aten.linear.default"
                    if (const auto parsed = exportedTarget(target)) {
                        n.op = parsed->op;
                        n.overload = parsed->overload.empty() ? "default" : parsed->overload;
                    } else {
                        n.op = target;
                    }
                    const json metadata = node.value("metadata", json::object());
                    const auto stack = exportedModuleStack(metadata.value("nn_module_stack", ""));
                    for (const ExportedFrame& entry : stack) {
                        ModuleInfo& m = tree.module(entry.path);
                        m.qualifiedTypeName = entry.type;
                        m.typeName = shortTypeName(entry.type);
                        m.hasForward = m.forwardCalled = true;
                    }
                    n.modulePath = !stack.empty()                         ? stack.back().path
                                   : metadata.contains("nn_module_stack") ? std::string()
                                                                          : inheritedPath;
                    // A node's function: the torch.nn.functional call it came from when that is a catalog function
                    // (its nodes are one call of it), else its own op's (the node is a call by itself: ops inside a
                    // function outside the catalog, such as multi_head_attention_forward's linear and attention
                    // ops).
                    const auto [call, fn] = exportedTorchFn(metadata.value("torch_fn", ""));
                    std::optional<Function> function = fn.empty() ? std::nullopt : functionFromName(fn);
                    n.functionCall = scope + call;
                    if (!function) {
                        function = functionOfOp(n.op, n.overload == "default" ? "" : n.overload);
                        n.functionCall = scope + n.name;
                    }
                    if (function) {
                        n.function = std::string(functionName(*function));
                        if (callsSeen[n.modulePath].insert(n.function + "/" + n.functionCall).second)
                            ++tree.module(n.modulePath).functions[n.function];
                    } else {
                        n.functionCall.clear();
                    }
                    const std::string modulePath = n.modulePath;
                    info.nodes.push_back(std::move(n));
                    for (const json& input : node.value("inputs", json::array()))
                        if (input.contains("arg") && input.at("arg").contains("as_graph")) {
                            const json& subgraph = input.at("arg").at("as_graph");
                            visitNodes(subgraph.at("graph").at("nodes"), modulePath,
                                       scope + subgraph.value("name", "subgraph") + "/");
                        }
                }
            };
        visitNodes(graph.at("nodes"), "", "");
        if (weights.is_object() && weights.contains("config"))
            for (const auto& [name, entry] : weights.at("config").items()) {
                if (!entry.value("is_param", false))
                    continue;
                std::int64_t count = 1;
                const json meta = entry.value("tensor_meta", json::object());
                for (const json& size : meta.value("sizes", json::array()))
                    count *= size.value("as_int", std::int64_t(1));
                tree.hold(std::string(module_path::parentOf(name)),
                          {entry.value("path_name", name), count, count * elementSize(meta.value("dtype", 7))});
            }
        ModuleInfo& top = tree.module("");
        top.hasForward = top.forwardCalled = true;
        const json& signature = root.at("graph_module").at("signature");
        for (const json& spec : signature.value("input_specs", json::array()))
            if (spec.contains("user_input")) {
                const json& arg = spec.at("user_input").value("arg", json::object());
                info.inputNames.push_back(arg.contains("as_tensor") ? arg.at("as_tensor").value("name", "")
                                                                    : std::string("(not a tensor)"));
            }
        info.modules = tree.finish();
    } catch (const json::exception& e) {
        throw Error(path, std::string("unexpected content in models/") + program + ".json: " + e.what());
    }
    return info;
}

} // namespace kforge
