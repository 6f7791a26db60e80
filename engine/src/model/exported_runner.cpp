// SPDX-License-Identifier: Apache-2.0
// The .pt2 interpreter (exported_runner.h): serialized arguments (torch/_export/serde/schema.py) become value
// sources once, at load; a forward is then a loop of boxed dispatcher calls with module hooks between them.
#include "model/exported_runner.h"

#include <kforge/error.h>
#include <kforge/functions.h>

#include "model/exported_metadata.h"
#include "model/exported_sym_ops.h"
#include "model/exported_values.h"
#include "model/python_defined_ops.h"
#include "model/torch_errors.h"
#include "runtime/event_sink.h"
#include "runtime/hook_ops.h"
#include "runtime/mode_key.h"
#include "runtime/observer.h"
#include "runtime/thread_state.h"

#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>
#include <ATen/autocast_mode.h>
#include <c10/core/GradMode.h>
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
    enum class Kind { Op, Autocast, SetGradEnabled, Cond, Sym };
    Kind kind = Kind::Op;
    std::optional<c10::OperatorHandle> op; // Kind::Op: set at load
    SymOp symOp = SymOp::Add;              // Kind::Sym: arithmetic on symbolic sizes, its operands in `args`
    // Kind::Op: per argument, whether a symbolic number goes to a Tensor parameter (aten.mul.Tensor(x, sym_size)):
    // wrapped into a tensor per forward, as Python wraps numbers.
    std::vector<bool> wrapNumber;
    std::string name;       // the node's name, for errors
    std::string modulePath; // the innermost module it ran in, for errors
    // Kind::Op: one per schema argument. A higher-order op: its arguments before its subgraphs (autocast's device,
    // dtype and flags, set_grad_enabled's flag, cond's predicate).
    std::vector<ExportedSource> args;
    std::vector<std::shared_ptr<const Graph>> subgraphs; // autocast, set_grad_enabled: one; cond: true, false
    std::vector<ExportedSource> operands;                // the values the subgraph takes, in its inputs' order
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
    // An op that is no catalog function's call and names none (the _assert_tensor_metadata checks export puts between
    // the ops of a call torchao's unwrapped weights decompose): part of the decomposed call around it, if any.
    bool partOfAnyCall = false;
    std::vector<int> frames; // the module call frames it runs in (ExportedRunner::frameId), outermost first, no root
};

struct ExportedRunner::Graph {
    std::vector<Step> steps;
    std::vector<int> inputSlots;  // a subgraph's: where the operands of its higher-order op go
    std::vector<int> outputSlots; // what it returns
    size_t slotCount = 0;
    // Per module frame of its steps, what the module call takes and returns (planFrameBoundaries), for observers that
    // want them (ForwardObserver::moduleInputs, moduleOutputs).
    std::unordered_map<int, std::vector<int>> frameInputs, frameOutputs;
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

// Whether an argument is a value of the program's symbolic-size arithmetic (a SymInt, SymFloat or SymBool by name).
bool isSymbolicNumber(const json& arg)
{
    for (const char* kind : {"as_sym_int", "as_sym_float", "as_sym_bool"})
        if (arg.contains(kind) && arg.at(kind).contains("as_name"))
            return true;
    return false;
}

// The name a node output gives a symbolic number; nullopt for other outputs.
std::optional<std::string> symbolicName(const json& output)
{
    for (const char* kind : {"as_sym_int", "as_sym_float", "as_sym_bool"})
        if (output.contains(kind) && output.at(kind).contains("as_name"))
            return output.at(kind).at("as_name").get<std::string>();
    return std::nullopt;
}

// Why an op the program calls is not registered here, and what to do: ops that libraries define in Python
// (torch.library.custom_op) have no library to load outside Python, and kforge implements only some of them
// (python_defined_ops.h). The op's namespace names the library where kforge knows it.
std::string unregisteredOpAdvice(const std::string& op)
{
    const std::string space = op.substr(0, op.find("::"));
    if (const std::string library = pythonLibraryOf(op); !library.empty())
        return ", an op " + library +
               " defines in Python (torch.library.custom_op), which kforge does not implement "
               "and which cannot run outside Python: export the model with an implementation made of ATen ops "
               "instead" +
               (op.find("grouped_mm") != std::string::npos
                    ? std::string(" (for mixture-of-experts models, model.set_experts_implementation(\"batched_mm\"), "
                                  "or experts_implementation=\"batched_mm\" when loading it, before "
                                  "torch.export.export)")
                    : std::string());
    return ", an op of the '" + space +
           "' namespace, which is not registered in this process: load the TORCH_LIBRARY library that defines it "
           "(--ops-library LIB.so, or a folder in KFORGE_OPS_PATH); if a Python library defines it "
           "(torch.library.custom_op(\"" +
           op +
           "\", ...) in its sources), it cannot run outside Python: export the model with an implementation "
           "made of ATen ops instead";
}

bool takesTensor(const c10::Argument& argument)
{
    c10::TypePtr type = argument.type();
    if (const auto optional = type->cast<c10::OptionalType>())
        type = optional->getElementType();
    return type->kind() == c10::TypeKind::TensorType;
}

// One call of a function export decomposed into several ops: counted and timed as that function's call by the
// original (events, profiles), its ops kept from the interposer like the ops inside any original. Not replaceable:
// no provider sees the function's arguments.
class DecomposedCall {
public:
    DecomposedCall(Function function, const char* op)
        : m_call(&runtime::observersOnThisThread(), function, "original", op)
    {
        if (runtime::events::recording() && runtime::ThreadState::current().observe)
            runtime::events::emit(EventKind::OriginalCall, nullptr, functionName(function).data(), "original", 0);
    }

private:
    runtime::ObservedCall m_call;
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

namespace {

using SlotMap = std::unordered_map<std::string, int>;

int slotIn(SlotMap& slots, const std::string& name) { return slots.emplace(name, int(slots.size())).first->second; }

// Where each value is read for the last time (or made, when never read): freed there. `kept` stay alive (outputs).
// Values a subgraph reads are its higher-order op's operands, so they are read at that op's step.
void planReleases(ExportedRunner::Graph& graph, const std::vector<int>& kept)
{
    std::vector<int> lastUse(graph.slotCount, -1);
    const auto use = [&](int slot, int step) {
        if (slot >= 0)
            lastUse[size_t(slot)] = step;
    };
    for (size_t i = 0; i < graph.steps.size(); ++i) {
        const ExportedRunner::Step& step = graph.steps[i];
        for (const int out : step.outputs)
            use(out, int(i));
        for (const int out : step.listOutputs)
            use(out, int(i));
        for (const auto* sources : {&step.args, &step.operands})
            for (const ExportedSource& source : *sources) {
                use(source.slot, int(i));
                for (const int slot : source.slots)
                    use(slot, int(i));
            }
    }
    for (const int slot : kept)
        lastUse[size_t(slot)] = -1;
    for (size_t slot = 0; slot < graph.slotCount; ++slot)
        if (lastUse[slot] >= 0)
            graph.steps[size_t(lastUse[slot])].release.push_back(int(slot));
}

// What each module frame of the graph takes and returns (Graph::frameInputs, frameOutputs). It takes a value made
// outside it (by another step, or a per-forward input: the forward's or a subgraph's operands) that one of its steps
// reads; weights and constants are left out, as they are the same in every forward. It returns a value made inside it
// and read by a step outside it, or by the graph's caller.
void planFrameBoundaries(ExportedRunner::Graph& graph, const std::vector<int>& perForwardInputs)
{
    std::vector<const std::vector<int>*> madeIn(graph.slotCount, nullptr); // the frames of the step that makes it
    std::vector<bool> perForward(graph.slotCount, false);
    for (const int slot : perForwardInputs)
        if (slot >= 0)
            perForward[size_t(slot)] = true;
    std::unordered_map<int, std::vector<bool>> listedIn, listedOut;
    const auto list = [&](std::unordered_map<int, std::vector<bool>>& listed,
                          std::unordered_map<int, std::vector<int>>& into, int frame, int slot) {
        auto& seen = listed[frame];
        seen.resize(graph.slotCount);
        if (!seen[size_t(slot)]) {
            seen[size_t(slot)] = true;
            into[frame].push_back(slot);
        }
    };
    const auto contains = [](const std::vector<int>* frames, int frame) {
        return frames && std::find(frames->begin(), frames->end(), frame) != frames->end();
    };
    const auto read = [&](int slot, const std::vector<int>* readerFrames) {
        if (slot < 0)
            return;
        const std::vector<int>* maker = madeIn[size_t(slot)];
        if (maker)
            for (const int frame : *maker)
                if (!contains(readerFrames, frame))
                    list(listedOut, graph.frameOutputs, frame, slot);
        if (readerFrames && (maker || perForward[size_t(slot)]))
            for (const int frame : *readerFrames)
                if (!contains(maker, frame))
                    list(listedIn, graph.frameInputs, frame, slot);
    };
    for (const ExportedRunner::Step& step : graph.steps) {
        for (const auto* sources : {&step.args, &step.operands})
            for (const ExportedSource& source : *sources) {
                read(source.slot, &step.frames);
                for (const int slot : source.slots)
                    read(slot, &step.frames);
            }
        for (const auto* made : {&step.outputs, &step.listOutputs})
            for (const int slot : *made)
                if (slot >= 0)
                    madeIn[size_t(slot)] = &step.frames;
    }
    for (const int slot : graph.outputSlots)
        read(slot, nullptr);
}

// Where each decomposed function call opens and closes: nodes of one call, consecutive but for the ops of no call
// between them, which run inside it (one call, as `kforge modules` counts it).
void markDecomposedCalls(ExportedRunner::Graph& graph)
{
    auto& steps = graph.steps;
    const auto sameCall = [](const ExportedRunner::Step& a, const ExportedRunner::Step& b) {
        return a.decomposedOf && b.decomposedOf && *a.decomposedOf == *b.decomposedOf &&
               a.decomposedCall == b.decomposedCall;
    };
    const auto bridged = [&](size_t from, int direction) -> const ExportedRunner::Step* {
        for (long i = long(from) + direction; i >= 0 && i < long(steps.size()); i += direction)
            if (!steps[size_t(i)].partOfAnyCall)
                return &steps[size_t(i)];
        return nullptr;
    };
    for (size_t i = 0; i < steps.size(); ++i) {
        if (!steps[i].decomposedOf)
            continue;
        const ExportedRunner::Step* before = bridged(i, -1);
        const ExportedRunner::Step* after = bridged(i, +1);
        steps[i].opensCall = !before || !sameCall(*before, steps[i]);
        steps[i].closesCall = !after || !sameCall(steps[i], *after);
    }
}

std::optional<ExportedRunner::Step::Kind> higherOrderKind(const std::string& target)
{
    static const std::string prefix = "torch.ops.higher_order.";
    if (target.rfind(prefix, 0) != 0)
        return std::nullopt;
    const std::string name = target.substr(prefix.size());
    using Kind = ExportedRunner::Step::Kind;
    if (name == "wrap_with_autocast")
        return Kind::Autocast;
    if (name == "wrap_with_set_grad_enabled")
        return Kind::SetGradEnabled;
    if (name == "cond")
        return Kind::Cond;
    return std::nullopt;
}

// autocast state of one device type for a scope, as `with torch.autocast(device_type, dtype, enabled, cache)`.
class AutocastScope {
public:
    AutocastScope(c10::DeviceType device, at::ScalarType dtype, bool enabled, bool cache)
        : m_device(device), m_enabled(at::autocast::is_autocast_enabled(device)),
          m_dtype(at::autocast::get_autocast_dtype(device)), m_cache(at::autocast::is_autocast_cache_enabled())
    {
        at::autocast::set_autocast_enabled(device, enabled);
        at::autocast::set_autocast_dtype(device, dtype);
        at::autocast::set_autocast_cache_enabled(cache);
    }
    ~AutocastScope()
    {
        at::autocast::set_autocast_enabled(m_device, m_enabled);
        at::autocast::set_autocast_dtype(m_device, m_dtype);
        at::autocast::set_autocast_cache_enabled(m_cache);
    }
    AutocastScope(const AutocastScope&) = delete;
    AutocastScope& operator=(const AutocastScope&) = delete;

private:
    c10::DeviceType m_device;
    bool m_enabled;
    at::ScalarType m_dtype;
    bool m_cache;
};

} // namespace

// Turns serialized graphs into steps: the program's, and recursively the subgraphs of its higher-order ops.
class ExportedRunner::Compiler {
public:
    explicit Compiler(ExportedRunner& runner) : m_runner(runner) {}

    // `slots` names the graph's values (the program's graph: with its inputs bound already). Nodes that record no
    // module stack (export leaves it out inside cond's branches) run in `inherited`, the frames of the higher-order
    // op that runs the graph.
    // `userInputs`: the program graph's, whose placeholders are bound apart.
    std::shared_ptr<Graph> compile(const json& graph, SlotMap& slots, const std::vector<int>& inherited,
                                   const std::string& inheritedPath, const std::vector<int>& userInputs = {})
    {
        auto compiled = std::make_shared<Graph>();
        for (const json& input : graph.value("inputs", json::array()))
            if (input.contains("as_tensor"))
                compiled->inputSlots.push_back(slotIn(slots, input.at("as_tensor").at("name")));
        for (const json& node : graph.at("nodes"))
            compiled->steps.push_back(step(node, graph, slots, inherited, inheritedPath));
        for (const json& output : graph.at("outputs")) {
            if (output.contains("as_tensor"))
                compiled->outputSlots.push_back(slotIn(slots, output.at("as_tensor").at("name")));
            else if (const auto symbolic = symbolicName(output)) // a size the forward computed (k.shape[2] * 2)
                compiled->outputSlots.push_back(slotIn(slots, *symbolic));
            else
                fail("an output is neither a tensor nor a computed size (" + output.dump() +
                     "), which kforge cannot return yet");
        }
        compiled->slotCount = slots.size();
        markDecomposedCalls(*compiled);
        planReleases(*compiled, compiled->outputSlots);
        std::vector<int> perForwardInputs = compiled->inputSlots;
        perForwardInputs.insert(perForwardInputs.end(), userInputs.begin(), userInputs.end());
        planFrameBoundaries(*compiled, perForwardInputs);
        return compiled;
    }

    [[noreturn]] void fail(const std::string& what) const { throw Error(m_runner.m_where, what); }

private:
    Step step(const json& node, const json& graph, SlotMap& slots, const std::vector<int>& inherited,
              const std::string& inheritedPath)
    {
        Step step;
        step.name = node.value("name", "");
        const std::function<int(const std::string&)> slot = [&](const std::string& name) {
            return slotIn(slots, name);
        };
        const std::string where = m_runner.m_where + ": node '" + step.name + "'";
        const json metadata = node.value("metadata", json::object());
        // Module frames: a key per call, so a module called twice is entered twice. The root is entered once per
        // forward, not here.
        for (const ExportedFrame& frame : exportedModuleStack(metadata.value("nn_module_stack", "")))
            if (!frame.path.empty()) {
                step.frames.push_back(m_runner.frameId(frame.key, frame.path));
                step.modulePath = frame.path;
            }
        if (!metadata.contains("nn_module_stack") && !inherited.empty()) {
            step.frames = inherited;
            step.modulePath = inheritedPath;
        }
        const std::string target = node.value("target", "");
        if (const auto kind = higherOrderKind(target)) {
            step.kind = *kind;
            for (const json& input : node.at("inputs")) {
                const json& arg = input.at("arg");
                if (arg.contains("as_graph")) {
                    SlotMap own; // a subgraph's names are its own
                    step.subgraphs.push_back(
                        compile(arg.at("as_graph").at("graph"), own, step.frames, step.modulePath));
                } else if (step.subgraphs.empty()) {
                    step.args.push_back(exportedSource(arg, where, slot));
                } else {
                    ExportedSource operands = exportedSource(arg, where, slot);
                    if (operands.kind == ExportedSource::Kind::TensorList) // cond: (operand, ...)
                        for (const int s : operands.slots)
                            step.operands.push_back(ExportedSource::ofSlot(s));
                    else
                        step.operands.push_back(std::move(operands));
                }
            }
            const size_t wantGraphs = step.kind == Step::Kind::Cond ? 2 : 1;
            const size_t wantArgs = step.kind == Step::Kind::Autocast ? 4 : 1;
            if (step.subgraphs.size() != wantGraphs || step.args.size() != wantArgs)
                fail("node '" + step.name + "' (" + target + ") has " + std::to_string(step.args.size()) +
                     " argument(s) and " + std::to_string(step.subgraphs.size()) + " subgraph(s), not the " +
                     std::to_string(wantArgs) + " and " + std::to_string(wantGraphs) + " kforge runs");
            for (const auto& subgraph : step.subgraphs)
                if (subgraph->inputSlots.size() != step.operands.size())
                    fail("node '" + step.name + "' (" + target + ") passes " + std::to_string(step.operands.size()) +
                         " operand(s) to a subgraph that takes " + std::to_string(subgraph->inputSlots.size()));
        } else if (const auto sym = symOpOf(target)) {
            step.kind = Step::Kind::Sym;
            step.symOp = *sym;
            for (const json& input : node.at("inputs"))
                step.args.push_back(exportedSource(input.at("arg"), where, slot));
            if (int(step.args.size()) != symOpArity(*sym))
                fail("node '" + step.name + "' gives " + std::to_string(step.args.size()) + " argument(s) to " +
                     target + ", which takes " + std::to_string(symOpArity(*sym)));
        } else {
            const auto parsedTarget = exportedTarget(target);
            const std::string opName = parsedTarget ? parsedTarget->op : std::string();
            const std::string overload = parsedTarget ? parsedTarget->overload : std::string();
            // An op a library defines in Python gets kforge's C++ implementation where it has one.
            const auto handle = opName.empty() || !(c10::Dispatcher::singleton().findSchema({opName, overload}) ||
                                                    registerPythonDefinedOp(opName))
                                    ? std::nullopt
                                    : c10::Dispatcher::singleton().findSchema({opName, overload});
            if (!handle)
                fail("node '" + step.name + "' calls " + target +
                     (target.rfind("torch.ops.higher_order.", 0) == 0
                          ? ", a higher-order op kforge cannot run (it runs wrap_with_autocast, "
                            "wrap_with_set_grad_enabled and cond)"
                      : opName.empty()
                          ? ", a Python function export left in the graph; kforge runs the arithmetic on symbolic "
                            "sizes (operator.add, mul, floordiv, ..., torch.sym_max, ...) but no other Python code"
                          : unregisteredOpAdvice(opName)));
            step.op = *handle;
            std::unordered_map<std::string, const json*> given;
            for (const json& input : node.at("inputs"))
                given[input.value("name", "")] = &input.at("arg");
            for (const c10::Argument& argument : step.op->schema().arguments()) {
                const auto it = given.find(argument.name());
                if (it != given.end()) {
                    step.args.push_back(asSchemaType(exportedSource(*it->second, where, slot), argument));
                    step.wrapNumber.resize(step.args.size());
                    step.wrapNumber.back() = step.args.back().kind == ExportedSource::Kind::Slot &&
                                             isSymbolicNumber(*it->second) && takesTensor(argument);
                } else if (argument.default_value())
                    step.args.push_back(ExportedSource::ofConstant(*argument.default_value()));
                else
                    fail("node '" + step.name + "' gives no '" + argument.name() + "' to " + opName);
            }
            if (isCatalogFormOf(opName, overload))
                for (const json& output : node.at("outputs"))
                    step.recordedLayouts.push_back(output.contains("as_tensor")
                                                       ? staticLayout(graph, output.at("as_tensor").at("name"))
                                                       : ExportedLayout{});
            const auto [call, fn] = exportedTorchFn(metadata.value("torch_fn", ""));
            const auto function = fn.empty() ? std::nullopt : functionFromName(fn);
            if (function && !isCatalogFormOf(opName, overload, *function)) {
                step.decomposedOf = function;
                step.decomposedCall = call;
            }
            step.partOfAnyCall = !function && !isCatalogFormOf(opName, overload);
        }
        for (const json& output : node.at("outputs")) {
            if (output.contains("as_tensors")) {
                step.outputs.push_back(-2); // a list: its elements go to listOutputs
                for (const json& t : output.at("as_tensors"))
                    step.listOutputs.push_back(slot(t.at("name")));
            } else if (output.contains("as_tensor")) {
                step.outputs.push_back(slot(output.at("as_tensor").at("name")));
            } else if (const auto symbolic = symbolicName(output)) {
                step.outputs.push_back(slot(*symbolic));
            } else {
                step.outputs.push_back(-1);
            }
        }
        return step;
    }

    ExportedRunner& m_runner;
};

ExportedRunner::ExportedRunner(const ExportedPackage& package) : m_where(package.path)
{
    SlotMap slots;
    moduleObject(""); // the root first, as named_modules() lists it
    Compiler compiler(*this);
    try {
        const json& graphModule = package.model.at("graph_module");
        const json& graph = graphModule.at("graph");
        // Inputs: weights and constants are bound now; user inputs per forward.
        const auto stored = exportedStoredTensors(package);
        std::vector<std::pair<int, at::Tensor>> bound;
        for (const json& spec : graphModule.at("signature").value("input_specs", json::array())) {
            const auto& [kind, body] = *spec.items().begin();
            if (kind == "user_input") {
                const json& arg = body.at("arg");
                const bool tensor = arg.contains("as_tensor");
                m_inputSlots.push_back(tensor ? slotIn(slots, arg.at("as_tensor").at("name")) : -1);
                m_inputNames.push_back(tensor ? arg.at("as_tensor").value("name", "") : arg.begin().key());
                if (tensor)
                    addInputShape(int(m_inputNames.size() - 1), graph, package.model);
                continue;
            }
            const std::string name = body.at("arg").value("name", "");
            std::string storedName;
            for (const char* key : {"parameter_name", "buffer_name", "tensor_constant_name"})
                if (body.contains(key))
                    storedName = body.at(key);
            if (storedName.empty())
                compiler.fail("input '" + name + "' is a " + kind + " input, which kforge cannot run yet");
            const auto it = stored.find(storedName);
            if (it == stored.end())
                compiler.fail("the weights and constants lack '" + storedName + "', which input '" + name + "' needs");
            bound.emplace_back(slotIn(slots, name), it->second);
            if (kind == "buffer")
                m_bufferSlots.emplace_back(storedName, bound.back().first);
        }
        // The graph's placeholders are the inputs bound above, not operands of a higher-order op.
        json program = graph;
        program["inputs"] = json::array();
        auto compiled = compiler.compile(program, slots, {}, "", m_inputSlots);
        m_initialSlots.assign(compiled->slotCount, c10::IValue());
        for (auto& [slot, tensor] : bound)
            m_initialSlots[size_t(slot)] = std::move(tensor);
        // Only the user outputs: buffer mutations (training-mode batch norm) are not written back (nor freed
        // before the forward ends).
        m_outputSlots = compiled->outputSlots;
        std::vector<int> userOutputs;
        const json specs = graphModule.at("signature").value("output_specs", json::array());
        for (size_t i = 0; i < specs.size() && i < m_outputSlots.size(); ++i)
            if (specs[i].contains("user_output"))
                userOutputs.push_back(m_outputSlots[i]);
        if (!specs.empty())
            m_outputSlots = userOutputs;
        m_graph = std::move(compiled);
        // Every module is a scope a plan may name, also those no node runs in (a container, a module inside a cond
        // branch): its entries are accepted and never fire, as validation warns.
        for (const json& call : graphModule.value("module_call_graph", json::array()))
            moduleObject(call.value("fqn", ""));
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
        compiler.fail("unexpected content in models/" + package.program + ".json: " + e.what());
    }
}

int ExportedRunner::frameId(const std::string& key, const std::string& path)
{
    const auto [it, added] = m_frameIds.emplace(key + '\0' + path, int(m_frameObjects.size()));
    if (added)
        m_frameObjects.push_back(moduleObject(path));
    return it->second;
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
    checkInputShapes(slots);

    // Module hooks only where some hook has something to do (runtime::hookDemand): the root's alone, or every frame's
    // too; decided per forward as for TorchScript's plain forward copies (R2).
    const c10::IValue& root = m_moduleObjects.front().second;
    const runtime::HookDemand demand = runtime::hookDemand(root);
    const bool frames = demand == runtime::HookDemand::EveryModule;
    std::vector<int> open; // module frames entered below the root, outermost first
    if (demand != runtime::HookDemand::None)
        runtime::callModuleEnter(root, runtime::moduleOutputsWanted() ? c10::ArrayRef<c10::IValue>(flat)
                                                                      : c10::ArrayRef<c10::IValue>());
    runGraph(*m_graph, slots, open, frames);
    std::vector<c10::IValue> outputs;
    for (int s : m_outputSlots)
        outputs.push_back(slots[s]);
    if (demand != runtime::HookDemand::None) {
        enterFrames({}, open, *m_graph, slots);
        runtime::callModuleExit(root, runtime::moduleOutputsWanted() ? c10::ArrayRef<c10::IValue>(outputs)
                                                                     : c10::ArrayRef<c10::IValue>());
    }
    if (!m_outSpec.is_null())
        return unflattenTreeSpec(m_outSpec, outputs);
    return outputs.size() == 1 ? outputs.front() : c10::ivalue::Tuple::create(std::move(outputs));
}

// What export recorded of a user input's sizes: a static size, or a symbol ("s27") whose range the program's
// range_constraints give (null bounds: unbounded). Sizes given by expressions of symbols are not checked.
namespace {

// A size expression as torch.export serialises it (sympy's srepr): "Symbol('s7', ...)", "Integer(2)",
// "Mul(Integer(2), Symbol('s7', ...))", "Add(Mul(...), Integer(1))". Read as coef * symbol + offset when it is linear
// in one symbol; nullopt otherwise (left unchecked, as before).
struct LinearSize {
    int64_t coef = 0, offset = 0;
    std::string symbol;
};

std::optional<LinearSize> parseLinearSize(std::string_view text, size_t& at)
{
    const auto starts = [&](std::string_view word) { return text.substr(at, word.size()) == word; };
    const auto skipSpaces = [&] {
        while (at < text.size() && text[at] == ' ')
            ++at;
    };
    skipSpaces();
    if (starts("Integer(")) {
        at += 8;
        const size_t end = text.find(')', at);
        if (end == std::string_view::npos)
            return std::nullopt;
        LinearSize out;
        try {
            out.offset = std::stoll(std::string(text.substr(at, end - at)));
        } catch (const std::exception&) {
            return std::nullopt;
        }
        at = end + 1;
        return out;
    }
    if (starts("Symbol('")) {
        at += 8;
        const size_t quote = text.find('\'', at);
        const size_t close = text.find(')', quote == std::string_view::npos ? at : quote);
        if (quote == std::string_view::npos || close == std::string_view::npos)
            return std::nullopt;
        LinearSize out{1, 0, std::string(text.substr(at, quote - at))};
        at = close + 1;
        return out;
    }
    const bool mul = starts("Mul("), add = starts("Add(");
    if (!mul && !add)
        return std::nullopt;
    at += 4;
    std::optional<LinearSize> result;
    for (;;) {
        auto term = parseLinearSize(text, at);
        if (!term)
            return std::nullopt;
        if (!result) {
            result = term;
        } else if (add) {
            if (!term->symbol.empty() && !result->symbol.empty() && term->symbol != result->symbol)
                return std::nullopt;
            if (result->symbol.empty())
                result->symbol = term->symbol;
            result->coef += term->coef;
            result->offset += term->offset;
        } else { // a product: linear only while one side is a number
            if (!term->symbol.empty() && !result->symbol.empty())
                return std::nullopt;
            const LinearSize& number = term->symbol.empty() ? *term : *result;
            LinearSize linear = term->symbol.empty() ? *result : *term;
            linear.coef *= number.offset;
            linear.offset *= number.offset;
            result = linear;
        }
        skipSpaces();
        if (at < text.size() && text[at] == ',') {
            ++at;
            continue;
        }
        if (at < text.size() && text[at] == ')') {
            ++at;
            return result;
        }
        return std::nullopt;
    }
}

} // namespace

void ExportedRunner::addInputShape(int input, const json& graph, const json& model)
{
    const json& values = graph.value("tensor_values", json::object());
    const auto found = values.find(m_inputNames[size_t(input)]);
    if (found == values.end() || !found->contains("sizes"))
        return;
    InputShape shape{input, {}};
    for (const json& size : found->at("sizes")) {
        InputShape::Dim dim;
        if (size.contains("as_int")) {
            dim.fixed = size.at("as_int").get<int64_t>();
        } else if (size.contains("as_expr")) {
            const std::string expr = size.at("as_expr").value("expr_str", "");
            size_t at = 0;
            const auto linear = parseLinearSize(expr, at);
            if (linear && !linear->symbol.empty() && linear->coef > 0) {
                dim.symbol = linear->symbol;
                dim.coef = linear->coef;
                dim.offset = linear->offset;
                const json& ranges = model.value("range_constraints", json::object());
                if (const auto range = ranges.find(dim.symbol); range != ranges.end()) {
                    if (range->contains("min_val") && range->at("min_val").is_number_integer())
                        dim.min = range->at("min_val").get<int64_t>();
                    if (range->contains("max_val") && range->at("max_val").is_number_integer())
                        dim.max = range->at("max_val").get<int64_t>();
                }
            }
        }
        shape.dims.push_back(std::move(dim));
    }
    m_inputShapes.push_back(std::move(shape));
}

// As the exported module's own call checks them in Python: the rank and static sizes, each symbol within its range
// and the same wherever it appears.
void ExportedRunner::checkInputShapes(const std::vector<c10::IValue>& slots) const
{
    // Every forward runs this: nothing is allocated unless an input is refused.
    struct Seen {
        const std::string* symbol;
        int64_t size;
        const std::string* input;
        size_t dim;
    };
    std::vector<Seen> seen; // a symbol's first size; few symbols, so a scan
    const auto where = [](const std::string& input, size_t dim) {
        return "input '" + input + "' dimension " + std::to_string(dim);
    };
    for (const InputShape& shape : m_inputShapes) {
        const c10::IValue& value = slots[size_t(m_inputSlots[size_t(shape.input)])];
        if (!value.isTensor())
            continue;
        const std::string& name = m_inputNames[size_t(shape.input)];
        const at::Tensor& tensor = value.toTensor();
        if (tensor.dim() != int64_t(shape.dims.size()))
            throw std::runtime_error("input '" + name + "' has " + std::to_string(tensor.dim()) +
                                     " dimension(s); the program was exported for " +
                                     std::to_string(shape.dims.size()));
        for (size_t d = 0; d < shape.dims.size(); ++d) {
            const InputShape::Dim& dim = shape.dims[d];
            const int64_t size = tensor.size(int64_t(d));
            if (dim.fixed && size != *dim.fixed)
                throw std::runtime_error(where(name, d) + " is " + std::to_string(size) +
                                         "; the program was exported with it static at " + std::to_string(*dim.fixed) +
                                         " (export it with a dynamic dimension, torch.export.Dim, to vary it)");
            if (dim.symbol.empty())
                continue;
            if (dim.derived()) {        // coef * symbol + offset: the symbol's value, then checked as a bare one is
                const auto form = [&] { // only when refused: every forward runs this
                    return std::to_string(dim.coef) + "*" + dim.symbol +
                           (dim.offset ? " + " + std::to_string(dim.offset) : std::string());
                };
                if (size < dim.offset || (size - dim.offset) % dim.coef != 0)
                    throw std::runtime_error(where(name, d) + " is " + std::to_string(size) + ", which is not " +
                                             form() + " for any whole " + dim.symbol +
                                             ": the program was exported with that size");
                const int64_t value = (size - dim.offset) / dim.coef;
                if ((dim.min && *dim.min > 2 && value < *dim.min) || (dim.max && value > *dim.max))
                    throw std::runtime_error(where(name, d) + " is " + std::to_string(size) + " = " + form() +
                                             " with " + dim.symbol + " = " + std::to_string(value) +
                                             ", outside the range the program was exported for: " + dim.symbol +
                                             " in [" + (dim.min ? std::to_string(*dim.min) : std::string("0")) + ", " +
                                             (dim.max ? std::to_string(*dim.max) : std::string("inf")) + "]");
                const auto first =
                    std::find_if(seen.begin(), seen.end(), [&](const Seen& s) { return *s.symbol == dim.symbol; });
                if (first == seen.end())
                    seen.push_back({&dim.symbol, value, &name, d});
                else if (first->size != value)
                    throw std::runtime_error(where(name, d) + " is " + std::to_string(size) + " but must be " + form() +
                                             " = " + std::to_string(dim.coef * first->size + dim.offset) + " (" +
                                             dim.symbol + " is " + std::to_string(first->size) + " from " +
                                             where(*first->input, first->dim) + ")");
                continue;
            }
            // As Python: a lower bound of 2 is export's own (it specialises 0 and 1), and sizes 0 and 1 still run.
            if ((dim.min && *dim.min > 2 && size < *dim.min) || (dim.max && size > *dim.max))
                throw std::runtime_error(where(name, d) + " is " + std::to_string(size) +
                                         ", outside the range the program was exported for: " + dim.symbol + " in [" +
                                         (dim.min ? std::to_string(*dim.min) : std::string("0")) + ", " +
                                         (dim.max ? std::to_string(*dim.max) : std::string("inf")) + "]");
            const auto first =
                std::find_if(seen.begin(), seen.end(), [&](const Seen& s) { return *s.symbol == dim.symbol; });
            if (first == seen.end())
                seen.push_back({&dim.symbol, size, &name, d});
            else if (first->size != size)
                throw std::runtime_error(where(name, d) + " is " + std::to_string(size) + " but " +
                                         where(*first->input, first->dim) + " is " + std::to_string(first->size) +
                                         ": the program was exported with both the same size (" + dim.symbol + ")");
        }
    }
}

void ExportedRunner::enterFrames(const std::vector<int>& frames, std::vector<int>& open, const Graph& graph,
                                 const std::vector<c10::IValue>& slots) const
{
    size_t keep = 0;
    while (keep < open.size() && keep < frames.size() && open[keep] == frames[keep])
        ++keep;
    while (open.size() > keep) {
        std::vector<c10::IValue> outputs; // gathered only for an observer that wants them
        if (runtime::moduleOutputsWanted())
            if (const auto it = graph.frameOutputs.find(open.back()); it != graph.frameOutputs.end())
                for (const int slot : it->second)
                    outputs.push_back(slots[size_t(slot)]);
        runtime::callModuleExit(m_frameObjects[size_t(open.back())], outputs);
        open.pop_back();
    }
    for (size_t i = keep; i < frames.size(); ++i) {
        std::vector<c10::IValue> inputs; // gathered only for an observer that wants them
        if (runtime::moduleOutputsWanted())
            if (const auto it = graph.frameInputs.find(frames[i]); it != graph.frameInputs.end())
                for (const int slot : it->second)
                    inputs.push_back(slots[size_t(slot)]);
        runtime::callModuleEnter(m_frameObjects[size_t(frames[i])], inputs);
        open.push_back(frames[i]);
    }
}

void ExportedRunner::runGraph(const Graph& graph, std::vector<c10::IValue>& slots, std::vector<int>& open,
                              bool frameHooks) const
{
    std::optional<DecomposedCall> decomposed;
    torch::jit::Stack stack;
    for (const Step& step : graph.steps) {
        if (frameHooks)
            enterFrames(step.frames, open, graph, slots);
        if (step.kind == Step::Kind::Sym) {
            std::vector<c10::IValue> operands;
            for (const ExportedSource& source : step.args)
                operands.push_back(exportedValue(source, slots));
            try {
                slots[size_t(step.outputs.front())] = runSymOp(step.symOp, operands);
            } catch (const std::exception& e) {
                throw std::runtime_error("node '" + step.name + "' (symbolic size arithmetic in module '" +
                                         step.modulePath + "'): " + e.what());
            }
        } else if (step.kind != Step::Kind::Op) {
            runHigherOrder(step, slots, open, frameHooks);
        } else {
            if (step.opensCall)
                decomposed.emplace(*step.decomposedOf, step.op->schema().name().c_str());
            stack.clear();
            for (size_t i = 0; i < step.args.size(); ++i) {
                stack.push_back(exportedValue(step.args[i], slots));
                if (i < step.wrapNumber.size() && step.wrapNumber[i] && !stack.back().isTensor()) {
                    at::Tensor wrapped = c10::scalar_to_tensor(stack.back().toScalar());
                    wrapped.unsafeGetTensorImpl()->set_wrapped_number(true);
                    stack.back() = std::move(wrapped);
                }
            }
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
                    if (i < step.recordedLayouts.size() && !step.recordedLayouts[i].sizes.empty() &&
                        stack[i].isTensor())
                        conformToRecordedLayout(stack[i], step.recordedLayouts[i]);
                    slots[step.outputs[i]] = std::move(stack[i]);
                }
            }
            if (step.closesCall)
                decomposed.reset();
        }
        for (const int slot : step.release)
            slots[slot] = c10::IValue();
    }
}

void ExportedRunner::runHigherOrder(const Step& step, std::vector<c10::IValue>& slots, std::vector<int>& open,
                                    bool frameHooks) const
{
    const auto arg = [&](size_t i) { return exportedValue(step.args[i], slots); };
    const Graph* body = step.subgraphs.front().get();
    std::optional<AutocastScope> autocast;
    std::optional<c10::AutoGradMode> grad;
    switch (step.kind) {
    case Step::Kind::Autocast:
        autocast.emplace(c10::Device(arg(0).toStringRef()).type(), arg(1).toScalarType(), arg(2).toBool(),
                         arg(3).toBool());
        break;
    case Step::Kind::SetGradEnabled:
        grad.emplace(arg(0).toBool());
        break;
    case Step::Kind::Cond: {
        const c10::IValue predicate = arg(0);
        const bool taken = predicate.isTensor() ? predicate.toTensor().item<bool>() : predicate.toBool();
        body = step.subgraphs[taken ? 0 : 1].get();
        break;
    }
    case Step::Kind::Op:
    case Step::Kind::Sym:
        break;
    }
    std::vector<c10::IValue> own(body->slotCount);
    for (size_t i = 0; i < step.operands.size(); ++i)
        own[size_t(body->inputSlots[i])] = exportedValue(step.operands[i], slots);
    runGraph(*body, own, open, frameHooks);
    for (size_t i = 0; i < step.outputs.size() && i < body->outputSlots.size(); ++i)
        if (step.outputs[i] >= 0)
            slots[size_t(step.outputs[i])] = std::move(own[size_t(body->outputSlots[i])]);
}

std::vector<std::pair<std::string, at::Tensor>> ExportedRunner::stateTensors() const
{
    std::vector<std::pair<std::string, at::Tensor>> out;
    for (const auto& [name, slot] : m_bufferSlots)
        if (m_initialSlots[size_t(slot)].isTensor())
            out.emplace_back(name, m_initialSlots[size_t(slot)].toTensor());
    return out;
}

void ExportedRunner::to(const c10::Device& device)
{
    for (c10::IValue& value : m_initialSlots)
        if (value.isTensor())
            value = value.toTensor().to(device);
}

} // namespace kforge
