// SPDX-License-Identifier: Apache-2.0
// The .pt2 interpreter (exported_runner.h): serialized arguments (torch/_export/serde/schema.py) become value
// sources once, at load; a forward is then a loop of boxed dispatcher calls with module hooks between them.
#include "model/exported_runner.h"

#include <kforge/error.h>
#include <kforge/functions.h>

#include "model/exported_metadata.h"
#include "model/exported_values.h"
#include "model/model_loader.h"
#include "profiling/host_recorder.h"
#include "runtime/event_sink.h"
#include "runtime/hook_ops.h"
#include "runtime/mode_key.h"
#include "runtime/thread_state.h"

#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/script.h>

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace kforge {

using nlohmann::json;

// The sizes and strides export recorded for a value.
struct ExportedLayout {
    std::vector<int64_t> sizes, strides;
};

struct ExportedRunner::Step {
    std::optional<c10::OperatorHandle> op; // set at load
    std::string name;                      // the node's name, for errors
    std::string modulePath;                // the innermost module it ran in, for errors
    std::vector<ExportedSource> args;      // one per schema argument
    std::vector<int> outputs; // slot per returned value (-1: not used); a list return spreads over listOutputs
    std::vector<int> listOutputs;
    // For a catalog op, whose call a provider may serve: the sizes and strides export recorded for each tensor output
    // (empty where unknown or symbolic). Later nodes may rely on them: export turns reshape into view where they allow
    // it.
    std::vector<ExportedLayout> recordedLayouts;
    std::vector<int> release; // slots read for the last time here (or never read): freed after the call, as the
                              // TorchScript interpreter and NativeRT free values, so a forward's peak stays low
    // A node of a function export decomposed (torch_fn names a catalog function its op is not a form of, such as
    // linear's permute + addmm): the first node of each such call opens it, the last closes it.
    std::optional<Function> decomposedOf;
    std::string decomposedCall; // torch_fn's call id ("linear_3")
    bool opensCall = false, closesCall = false;
    size_t keepModules = 0;                // open modules below the root that stay open for this node
    std::vector<c10::IValue> enterModules; // then entered, outermost first
};

namespace {

// FX graphs may pass a Python number where the schema takes a Tensor (mul.Tensor(x, 0.125)): Python's argument
// parser wraps it in a 0-dim tensor marked as a wrapped number, so type promotion treats it as a scalar. So do we.
ExportedSource asSchemaType(ExportedSource source, const c10::Argument& argument)
{
    const c10::IValue& value = source.constant;
    const bool number = value.isDouble() || value.isInt() || value.isBool();
    if (source.kind != ExportedSource::Kind::Constant || !number)
        return source;
    c10::TypePtr type = argument.type();
    if (const auto optional = type->cast<c10::OptionalType>())
        type = optional->getElementType();
    if (type->kind() != c10::TypeKind::TensorType)
        return source;
    at::Tensor wrapped = c10::scalar_to_tensor(value.toScalar());
    wrapped.unsafeGetTensorImpl()->set_wrapped_number(true);
    source.constant = wrapped;
    return source;
}

// Whether the op is one of `function`'s forms (or a shared form, such as _convolution, that can be it); with no
// function, whether it is any catalog form: a call a provider may serve.
bool isFormOf(const std::string& op, const std::string& overload, std::optional<Function> function = std::nullopt)
{
    for (const OpForm& form : allOpForms())
        if (form.op.name == op && form.op.overload == overload &&
            (!function || !form.function || *form.function == *function))
            return true;
    return false;
}

// One call of a function export decomposed into several ops: counted and timed as that function's call by the
// original (events, profiles), its ops kept from the interposer like the ops inside any original. Not replaceable:
// no provider sees the function's arguments.
class DecomposedCall {
public:
    DecomposedCall(Function function, const char* op)
        : m_call(profiling::HostRecorder::onThisThread(), function, "original", op)
    {
        if (runtime::events::recording() && runtime::ThreadState::current().observe)
            runtime::events::emit(EventKind::OriginalCall, nullptr, functionName(function).data(), "original", 0);
    }

private:
    profiling::FunctionCallScope m_call;
    c10::impl::ExcludeDispatchKeyGuard m_noInterposer{runtime::kModeKey};
};

// The sizes and strides graph.tensor_values records for `name`; empty when any of them is symbolic.
ExportedLayout staticLayout(const json& graph, const std::string& name)
{
    const json values = graph.value("tensor_values", json::object());
    if (!values.contains(name))
        return {};
    ExportedLayout layout;
    for (const auto& [key, out] : {std::pair{"sizes", &layout.sizes}, {"strides", &layout.strides}})
        for (const json& v : values.at(name).value(key, json::array())) {
            if (!v.contains("as_int"))
                return {};
            out->push_back(v.at("as_int").get<int64_t>());
        }
    return layout.sizes.size() == layout.strides.size() ? layout : ExportedLayout{};
}

// A provider may return another layout than the op it replaces (a contiguous attention output where ATen's is a
// transpose). Copy into the recorded layout when the sizes are the recorded ones and a dimension longer than 1 has
// another stride (with other sizes, as when the inputs differ from the export's, the recorded strides do not apply).
void conformToRecordedLayout(c10::IValue& value, const ExportedLayout& layout)
{
    const at::Tensor& tensor = value.toTensor();
    if (!tensor.sizes().equals(layout.sizes))
        return;
    bool same = true;
    for (int64_t d = 0; d < tensor.dim() && same; ++d)
        same = tensor.size(d) <= 1 || tensor.stride(d) == layout.strides[size_t(d)];
    if (same)
        return;
    value = at::empty_strided(tensor.sizes(), layout.strides, tensor.options()).copy_(tensor);
}

} // namespace

ExportedRunner::~ExportedRunner() = default;

c10::IValue ExportedRunner::moduleObject(const std::string& path)
{
    if (const auto it = m_objectIndex.find(path); it != m_objectIndex.end())
        return m_moduleObjects[it->second].second;
    // A placeholder object per module: the hook table knows modules by object identity (R2).
    static const auto cu = std::make_shared<torch::jit::CompilationUnit>();
    static const auto type = [] {
        auto t = c10::ClassType::create(c10::QualifiedName("__torch__.kforge.ExportedModule"), cu, true);
        cu->register_type(t);
        return t;
    }();
    c10::IValue object(c10::ivalue::Object::create(c10::StrongTypePtr(cu, type), 0));
    m_objectIndex.emplace(path, m_moduleObjects.size());
    m_moduleObjects.emplace_back(path, object);
    return object;
}

ExportedRunner::ExportedRunner(const ExportedPackage& package) : m_where(package.path)
{
    std::unordered_map<std::string, int> slotOf;
    const auto slot = [&](const std::string& name) {
        const auto [it, added] = slotOf.emplace(name, int(m_initialSlots.size()));
        if (added)
            m_initialSlots.emplace_back();
        return it->second;
    };
    const auto fail = [&](const std::string& what) { throw Error(m_where, what); };
    moduleObject(""); // the root first, as named_modules() lists it

    try {
        const json& graphModule = package.model.at("graph_module");
        const json& graph = graphModule.at("graph");
        // Inputs: weights and constants are bound now; user inputs per forward.
        const auto stored = exportedStoredTensors(package);
        for (const json& spec : graphModule.at("signature").value("input_specs", json::array())) {
            const auto& [kind, body] = *spec.items().begin();
            if (kind == "user_input") {
                const json& arg = body.at("arg");
                const bool tensor = arg.contains("as_tensor");
                m_inputSlots.push_back(tensor ? slot(arg.at("as_tensor").at("name")) : -1);
                m_inputNames.push_back(tensor ? arg.at("as_tensor").value("name", "") : arg.begin().key());
                continue;
            }
            const std::string name = body.at("arg").value("name", "");
            std::string stored_name;
            for (const char* key : {"parameter_name", "buffer_name", "tensor_constant_name"})
                if (body.contains(key))
                    stored_name = body.at(key);
            if (stored_name.empty())
                fail("input '" + name + "' is a " + kind + " input, which kforge cannot run yet");
            const auto it = stored.find(stored_name);
            if (it == stored.end())
                fail("the weights and constants lack '" + stored_name + "', which input '" + name + "' needs");
            m_initialSlots[slot(name)] = it->second;
        }
        // Nodes.
        const std::function<int(const std::string&)> slotFn = slot;
        std::vector<std::pair<std::string, std::string>> open; // frames entered, below the root
        for (const json& node : graph.at("nodes")) {
            Step step;
            step.name = node.value("name", "");
            const std::string target = node.value("target", "");
            const auto parsedTarget = exportedTarget(target);
            const std::string opName = parsedTarget ? parsedTarget->op : std::string();
            const std::string overload = parsedTarget ? parsedTarget->overload : std::string();
            const auto handle =
                opName.empty() ? std::nullopt : c10::Dispatcher::singleton().findSchema({opName, overload});
            if (!handle)
                fail("node '" + step.name + "' calls " + target +
                     (opName.empty()
                          ? ", which is not an operator kforge can run (higher-order and Python ops are not supported)"
                          : ", which is not registered in this process (load the library that defines it)"));
            step.op = *handle;
            const auto& schema = step.op->schema();
            std::unordered_map<std::string, const json*> given;
            for (const json& input : node.at("inputs"))
                given[input.value("name", "")] = &input.at("arg");
            for (const c10::Argument& argument : schema.arguments()) {
                const auto it = given.find(argument.name());
                if (it != given.end())
                    step.args.push_back(asSchemaType(
                        exportedSource(*it->second, m_where + ": node '" + step.name + "'", slotFn), argument));
                else if (argument.default_value())
                    step.args.push_back({ExportedSource::Kind::Constant, *argument.default_value()});
                else
                    fail("node '" + step.name + "' gives no '" + argument.name() + "' to " + opName);
            }
            for (const json& output : node.at("outputs")) {
                if (output.contains("as_tensors")) {
                    step.outputs.push_back(-2); // a list: its elements go to listOutputs
                    for (const json& t : output.at("as_tensors"))
                        step.listOutputs.push_back(slot(t.at("name")));
                } else if (output.contains("as_tensor")) {
                    step.outputs.push_back(slot(output.at("as_tensor").at("name")));
                } else if (output.contains("as_sym_int") && output.at("as_sym_int").contains("as_name")) {
                    step.outputs.push_back(slot(output.at("as_sym_int").at("as_name")));
                } else {
                    step.outputs.push_back(-1);
                }
            }
            if (isFormOf(opName, overload))
                for (const json& output : node.at("outputs"))
                    step.recordedLayouts.push_back(output.contains("as_tensor")
                                                       ? staticLayout(graph, output.at("as_tensor").at("name"))
                                                       : ExportedLayout{});
            const json metadata = node.value("metadata", json::object());
            const auto [call, fn] = exportedTorchFn(metadata.value("torch_fn", ""));
            if (const auto function = fn.empty() ? std::nullopt : functionFromName(fn);
                function && !isFormOf(opName, overload, *function)) {
                step.decomposedOf = function;
                step.decomposedCall = call;
            }
            // Module boundaries: keep the frames (key and path: a key per call) this node shares with the open ones,
            // enter the rest. The root is entered once per forward, not here.
            std::vector<std::pair<std::string, std::string>> frames;
            for (const ExportedFrame& frame : exportedModuleStack(metadata.value("nn_module_stack", "")))
                if (!frame.path.empty())
                    frames.emplace_back(frame.key, frame.path);
            size_t keep = 0;
            while (keep < open.size() && keep < frames.size() && open[keep] == frames[keep])
                ++keep;
            step.keepModules = keep;
            for (size_t i = keep; i < frames.size(); ++i)
                step.enterModules.push_back(moduleObject(frames[i].second));
            step.modulePath = frames.empty() ? "" : frames.back().second;
            open = std::move(frames);
            m_steps.push_back(std::move(step));
        }
        for (const json& output : graph.at("outputs")) {
            if (!output.contains("as_tensor"))
                fail("an output is not a tensor (" + output.dump() + "), which kforge cannot return yet");
            m_outputSlots.push_back(slot(output.at("as_tensor").at("name")));
        }
        // Only the user outputs: buffer mutations (training-mode batch norm) are not written back.
        std::vector<int> userOutputs;
        const json specs = graphModule.at("signature").value("output_specs", json::array());
        for (size_t i = 0; i < specs.size() && i < m_outputSlots.size(); ++i)
            if (specs[i].contains("user_output"))
                userOutputs.push_back(m_outputSlots[i]);
        if (!specs.empty())
            m_outputSlots = userOutputs;
        planReleases(slotOf.size());
        markDecomposedCalls();
        // The pytree specs of the root call: output nesting and keyword order.
        for (const json& call : graphModule.value("module_call_graph", json::array())) {
            if (call.value("fqn", "") != "" || !call.contains("signature") || call.at("signature").is_null())
                continue;
            const json& signature = call.at("signature");
            if (signature.value("out_spec", "") != "")
                m_outSpec = parseTreeSpec(signature.at("out_spec"), m_where + ": out_spec");
            if (signature.value("in_spec", "") != "")
                m_keywords = treeSpecKeywords(parseTreeSpec(signature.at("in_spec"), m_where + ": in_spec"));
        }
    } catch (const json::exception& e) {
        fail("unexpected content in models/" + package.program + ".json: " + e.what());
    }
}

c10::IValue ExportedRunner::run(const std::vector<c10::IValue>& args,
                                const std::unordered_map<std::string, c10::IValue>& kwargs) const
{
    std::vector<c10::IValue> slots = m_initialSlots;
    std::vector<c10::IValue> flat;
    const std::function<void(const c10::IValue&)> flatten = [&](const c10::IValue& v) {
        if (v.isTuple())
            for (const auto& e : v.toTupleRef().elements())
                flatten(e);
        else if (v.isList())
            for (const auto& e : v.toListRef())
                flatten(e);
        else
            flat.push_back(v);
    };
    for (const auto& a : args)
        flatten(a);
    // Keyword inputs follow, in the order export flattened them; any other name must be one of the inputs.
    std::unordered_map<std::string, c10::IValue> byName;
    for (const auto& [name, value] : kwargs) {
        if (std::find(m_keywords.begin(), m_keywords.end(), name) != m_keywords.end())
            continue;
        byName.emplace(name, value);
    }
    for (const std::string& name : m_keywords)
        if (const auto it = kwargs.find(name); it != kwargs.end())
            flatten(it->second);
    size_t next = 0;
    for (size_t i = 0; i < m_inputSlots.size(); ++i) {
        const auto named = byName.find(m_inputNames[i]);
        const c10::IValue* value = named != byName.end() ? &named->second
                                   : next < flat.size()  ? &flat[next++]
                                                         : nullptr;
        if (!value) {
            std::string names;
            for (const auto& n : m_inputNames)
                names += (names.empty() ? "" : ", ") + n;
            throw std::runtime_error("the exported program takes " + std::to_string(m_inputSlots.size()) +
                                     " input(s) (" + names + "), " + std::to_string(flat.size() + byName.size()) +
                                     " given");
        }
        if (m_inputSlots[i] >= 0)
            slots[m_inputSlots[i]] = *value;
    }

    // Module hooks only when some hook has something to do (runtime::hooksIdle), decided per forward as for
    // TorchScript's plain forward copies (R2).
    const bool hooks = !runtime::hooksIdle();
    std::vector<c10::IValue> open; // module objects entered below the root, outermost first
    std::optional<DecomposedCall> decomposed;
    if (hooks)
        runtime::callModuleEnter(m_moduleObjects.front().second);
    torch::jit::Stack stack;
    for (const Step& step : m_steps) {
        while (hooks && open.size() > step.keepModules) {
            runtime::callModuleExit(open.back());
            open.pop_back();
        }
        if (hooks)
            for (const c10::IValue& module : step.enterModules) {
                runtime::callModuleEnter(module);
                open.push_back(module);
            }
        if (step.opensCall)
            decomposed.emplace(*step.decomposedOf, step.op->schema().name().c_str());
        stack.clear();
        for (const ExportedSource& source : step.args)
            stack.push_back(exportedValue(source, slots));
        try {
            step.op->callBoxed(stack);
        } catch (const c10::Error& e) {
            // The interposer already named a failing provider (lastEngineError); this names the node otherwise.
            throw std::runtime_error("node '" + step.name + "' (" + step.op->schema().name() + " in module '" +
                                     step.modulePath + "'): " + describeTorchError(e));
        }
        for (size_t i = 0; i < step.outputs.size() && i < stack.size(); ++i) {
            if (step.outputs[i] == -2) {
                const auto list = stack[i].toTensorVector();
                for (size_t k = 0; k < list.size() && k < step.listOutputs.size(); ++k)
                    slots[step.listOutputs[k]] = list[k];
            } else if (step.outputs[i] >= 0) {
                if (i < step.recordedLayouts.size() && !step.recordedLayouts[i].sizes.empty() && stack[i].isTensor())
                    conformToRecordedLayout(stack[i], step.recordedLayouts[i]);
                slots[step.outputs[i]] = std::move(stack[i]);
            }
        }
        for (const int slot : step.release)
            slots[slot] = c10::IValue();
        if (step.closesCall)
            decomposed.reset();
    }
    while (!open.empty()) {
        runtime::callModuleExit(open.back());
        open.pop_back();
    }
    if (hooks)
        runtime::callModuleExit(m_moduleObjects.front().second);
    std::vector<c10::IValue> outputs;
    for (int s : m_outputSlots)
        outputs.push_back(slots[s]);
    if (!m_outSpec.is_null())
        return unflattenTreeSpec(m_outSpec, outputs);
    return outputs.size() == 1 ? outputs.front() : c10::ivalue::Tuple::create(std::move(outputs));
}

void ExportedRunner::markDecomposedCalls()
{
    const auto sameCall = [](const Step& a, const Step& b) {
        return a.decomposedOf && b.decomposedOf && *a.decomposedOf == *b.decomposedOf &&
               a.decomposedCall == b.decomposedCall;
    };
    for (size_t i = 0; i < m_steps.size(); ++i) {
        if (!m_steps[i].decomposedOf)
            continue;
        m_steps[i].opensCall = i == 0 || !sameCall(m_steps[i - 1], m_steps[i]);
        m_steps[i].closesCall = i + 1 == m_steps.size() || !sameCall(m_steps[i], m_steps[i + 1]);
    }
}

void ExportedRunner::planReleases(size_t slotCount)
{
    std::vector<int> lastUse(slotCount, -1);
    const auto use = [&](int slot, int step) {
        if (slot >= 0)
            lastUse[size_t(slot)] = step;
    };
    for (size_t i = 0; i < m_steps.size(); ++i) {
        const Step& step = m_steps[i];
        for (const int out : step.outputs)
            use(out, int(i)); // a value never read is freed where it is made
        for (const int out : step.listOutputs)
            use(out, int(i));
        for (const ExportedSource& source : step.args) {
            use(source.slot, int(i));
            for (const int slot : source.slots)
                use(slot, int(i));
        }
    }
    for (const int output : m_outputSlots)
        lastUse[size_t(output)] = -1;
    for (size_t slot = 0; slot < slotCount; ++slot)
        if (lastUse[slot] >= 0)
            m_steps[size_t(lastUse[slot])].release.push_back(int(slot));
}

void ExportedRunner::to(const c10::Device& device)
{
    for (c10::IValue& value : m_initialSlots)
        if (value.isTensor())
            value = value.toTensor().to(device);
}

} // namespace kforge
