// SPDX-License-Identifier: Apache-2.0
#include "model/compiled_runner.h"

#include <kforge/error.h>

#include "common/json_text.h"
#include "model/compiled_inputs.h"
#include "model/torch_errors.h"
#include "runtime/hook_ops.h"

#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/csrc/inductor/aoti_runner/model_container_runner.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/api/compilation_unit.h>

#include <algorithm>
#include <filesystem>
#include <tuple>

namespace kforge {
namespace {

// Tensor leaves of a pytree spec node (torch.utils._pytree's JSON: a leaf has type null).
size_t leavesOf(const nlohmann::json& spec)
{
    if (spec.at("type").is_null())
        return 1;
    size_t leaves = 0;
    for (const auto& child : spec.at("children_spec"))
        leaves += leavesOf(child);
    return leaves;
}

void flattenTensors(const c10::IValue& value, std::vector<at::Tensor>& out, const std::string& where, size_t input)
{
    if (value.isTensor()) {
        out.push_back(value.toTensor());
    } else if (value.isTuple()) {
        for (const auto& item : value.toTupleRef().elements())
            flattenTensors(item, out, where, input);
    } else if (value.isList()) {
        for (const auto& item : value.toListRef())
            flattenTensors(item, out, where, input);
    } else {
        throw Error(where, "input " + std::to_string(input + 1) + " is a " + value.tagKind() +
                               ": compiled code takes tensors only (AOTInductor specialised the program's other "
                               "inputs to the values they had when it was exported)");
    }
}

c10::IValue rootObject()
{
    static const auto cu = std::make_shared<torch::jit::CompilationUnit>();
    static const auto type = [] {
        auto t = c10::ClassType::create(c10::QualifiedName("__torch__.kforge.CompiledModel"), cu, true);
        cu->register_type(t);
        return t;
    }();
    return c10::IValue(c10::ivalue::Object::create(c10::StrongTypePtr(cu, type), 0));
}

} // namespace

CompiledRunner::CompiledRunner(const std::string& path, const CompiledModel& model)
    : m_where(path + " (AOTInductor model '" + model.name + "')"), m_cuda(model.cuda)
{
    try {
        m_loader = std::make_unique<torch::inductor::AOTIModelPackageLoader>(path, model.name);
        m_metadata = m_loader->get_metadata();
        // [in_spec, out_spec]; in_spec is [version, (args, kwargs)].
        const std::vector<std::string> spec = m_loader->get_call_spec();
        if (!spec.empty() && !spec[0].empty()) {
            const nlohmann::json in = nlohmann::json::parse(spec[0]).at(1);
            m_positional = leavesOf(in.at("children_spec").at(0));
            const nlohmann::json& kwargs = in.at("children_spec").at(1);
            if (kwargs.at("context").is_string())
                for (const auto& key : nlohmann::json::parse(kwargs.at("context").get<std::string>()))
                    m_keywords.push_back(key.get<std::string>());
        }
    } catch (const c10::Error& e) {
        throw Error(m_where, "LibTorch's AOTInductor loader cannot load it (" + describeTorchError(e) + ")");
    } catch (const nlohmann::json::exception& e) {
        throw Error(m_where, std::string("cannot read its call spec (") + e.what() + ")");
    }
    if (!model.wrapperSource.empty()) {
        try { // what the compiled code takes; a package whose source cannot be read runs unchecked, as before
            caffe2::serialize::PyTorchStreamReader reader(path);
            const auto [data, size] = reader.getRecord(model.wrapperSource);
            m_inputs = compiledInputsOf(std::string(static_cast<const char*>(data.get()), size));
        } catch (const c10::Error&) {
        }
    }
    for (size_t i = 0; i < m_positional; ++i)
        m_inputNames.push_back("arg" + std::to_string(i));
    m_inputNames.insert(m_inputNames.end(), m_keywords.begin(), m_keywords.end());
    m_objects.emplace_back("", rootObject());
}

CompiledRunner::~CompiledRunner() = default;

c10::IValue CompiledRunner::run(const std::vector<c10::IValue>& args,
                                const std::unordered_map<std::string, c10::IValue>& kwargs) const
{
    std::vector<at::Tensor> flat;
    for (size_t i = 0; i < args.size(); ++i)
        flattenTensors(args[i], flat, m_where, i);
    if (flat.size() != m_positional)
        throw Error(m_where,
                    "takes " + std::to_string(m_positional) + " input tensor(s), got " + std::to_string(flat.size()));
    for (size_t k = 0; k < m_keywords.size(); ++k) {
        const auto it = kwargs.find(m_keywords[k]);
        if (it == kwargs.end())
            throw Error(m_where, "keyword input '" + m_keywords[k] + "' is missing");
        flattenTensors(it->second, flat, m_where, args.size() + k); // numbered after the positional inputs
    }
    for (const auto& [name, value] : kwargs)
        if (std::find(m_keywords.begin(), m_keywords.end(), name) == m_keywords.end())
            throw Error(m_where, "takes no keyword input '" + name + "'");
    if (const std::string wrong = compiledInputMismatch(m_inputs, flat); !wrong.empty())
        throw Error(m_where, wrong);
    // The root's hooks, where any hook has something to do: a profile's module range (the compiled forward's whole
    // time, beside the ATen ops it still calls), events and verify see the one module there is.
    const c10::IValue& root = m_objects.front().second;
    const bool hooks = runtime::hookDemand(root) != runtime::HookDemand::None;
    const bool values = hooks && runtime::moduleOutputsWanted();
    std::vector<c10::IValue> boxedInputs;
    if (values)
        boxedInputs.assign(flat.begin(), flat.end());
    if (hooks)
        runtime::callModuleEnter(root, boxedInputs);
    std::vector<at::Tensor> outputs;
    try {
        outputs = m_loader->run(flat);
    } catch (const c10::Error& e) {
        if (hooks)
            runtime::callModuleExit(root);
        throw Error(m_where, "the compiled forward failed (" + describeTorchError(e) + ")");
    }
    std::vector<c10::IValue> boxed(outputs.begin(), outputs.end());
    if (hooks)
        runtime::callModuleExit(root, values ? c10::ArrayRef<c10::IValue>(boxed) : c10::ArrayRef<c10::IValue>());
    if (boxed.size() == 1)
        return boxed.front();
    return c10::ivalue::Tuple::create(std::move(boxed));
}

std::pair<std::int64_t, std::int64_t> CompiledRunner::constantsSize() const
{
    std::int64_t elements = 0, bytes = 0;
    try {
        for (const auto& [name, tensor] : m_loader->get_runner()->extract_constants_map(/*use_inactive=*/false)) {
            elements += tensor.numel();
            bytes += std::int64_t(tensor.nbytes());
        }
    } catch (const c10::Error&) {
        return {0, 0}; // a package built without its constants map: the tree shows none
    }
    return {elements, bytes};
}

void CompiledRunner::to(const c10::Device& device)
{
    if (device.is_cuda() != m_cuda)
        throw Error(m_where, std::string("compiled for ") + (m_cuda ? "CUDA" : "the CPU") + ": it runs there only (" +
                                 "compile the program again with its inputs on the other device)");
}

std::string CompiledRunner::planRefusal() const
{
    return "an AOTInductor package runs generated code: its calls never reach a kernel provider, so no plan can "
           "apply to it. Plan on the exported program it was compiled from (torch.export.save(program, path)); this "
           "package still runs, benches and profiles";
}

void openCompiledPackage(ModelSession::Impl& impl, const std::vector<CompiledModel>& models)
{
    const CompiledModel* chosen = &models.front();
    if (!impl.options.program.empty()) {
        const auto it = std::find_if(models.begin(), models.end(),
                                     [&](const CompiledModel& m) { return m.name == impl.options.program; });
        if (it == models.end()) {
            std::string names;
            for (const CompiledModel& m : models)
                names += (names.empty() ? "" : ", ") + m.name;
            throw Error(impl.source, "has no compiled model '" + impl.options.program + "' (it has: " + names + ")");
        }
        chosen = &*it;
    }
    auto runner = std::make_shared<CompiledRunner>(impl.source, *chosen);
    ModuleInfo root;
    std::tie(root.parameterCount, root.parameterBytes) = runner->constantsSize();
    root.subtreeParameterCount = root.parameterCount;
    root.subtreeParameterBytes = root.parameterBytes;
    impl.program = std::move(runner);
    root.typeName = "AOTInductor compiled model";
    root.qualifiedTypeName = "aotinductor." + chosen->name;
    impl.modules = {root};
    impl.displayName = std::filesystem::path(impl.source).filename().string();
}

std::shared_ptr<CompiledRunner> compiledRunnerFor(const std::string& path, const std::vector<CompiledModel>& models,
                                                  const std::string& name)
{
    const auto same =
        std::find_if(models.begin(), models.end(), [&](const CompiledModel& m) { return m.name == name; });
    return std::make_shared<CompiledRunner>(path, same == models.end() ? models.front() : *same);
}

} // namespace kforge
