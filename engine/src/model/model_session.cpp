// SPDX-License-Identifier: Apache-2.0
#include <kforge/error.h>
#include <kforge/exported_program.h>
#include <kforge/file_hash.h>
#include <kforge/model_session.h>

#include "model/builtin_models.h"
#include "model/exported_runner.h"
#include "model/compiled_runner.h"
#include "model/exported_session.h"
#include "model/forward_calls.h"
#include "model/graph_instrumentation.h"
#include "runtime/hook_ops.h"
#include "model/model_inputs.h"
#include "model/torch_errors.h"
#include "model/output_digest.h"
#include "model/module_tree.h"
#include "model/session_impl.h"
#include "runtime/call_guard.h"
#include "runtime/hook_table.h"
#include "runtime/interposer.h"

#include <ATen/Parallel.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <filesystem>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

namespace kforge {
namespace {

constexpr std::string_view kBuiltinPrefix = "builtin:";

std::vector<runtime::ObjectKey> objectsOf(const ModelSession::Impl& impl)
{
    std::vector<runtime::ObjectKey> out;
    for (const auto& [object, _] : impl.indexByObject)
        out.push_back(object);
    return out;
}

// The forward's arguments without a default: a forward with none runs without any input.
size_t requiredArguments(const ModelSession::Impl& impl)
{
    if (impl.program)
        return impl.program->inputNames().size();
    size_t required = 0;
    const auto& args = impl.module.get_method("forward").function().getSchema().arguments();
    for (size_t i = 1; i < args.size(); ++i)
        required += args[i].default_value() ? 0 : 1;
    return required;
}

// The direct executor's inlined forwards (addInlinedForwards); without them the forwards run as they are, a frame per
// module call.
bool inlinedForwardsOf(const torch::jit::Module& module)
{
    try {
        return addInlinedForwards(module);
    } catch (const std::exception&) {
        return false;
    }
}

} // namespace

const c10::ivalue::Object* ModelSession::Impl::objectOf(const std::string& path) const
{
    const auto it = objectByPath.find(path);
    return it == objectByPath.end() ? nullptr : it->second;
}

const runtime::ModuleDirectory& ModelSession::moduleDirectory() const { return *m_impl; }

std::vector<std::string> ModelSession::builtinModels()
{
    std::vector<std::string> out;
    for (const auto& name : builtin::names())
        out.push_back(std::string(kBuiltinPrefix) + name);
    return out;
}

int intraOpThreadCount() { return at::get_num_threads(); }

std::unique_ptr<ModelSession> ModelSession::open(const std::string& source, OpenOptions options)
{
    runtime::ensureInterposer();
    if (options.intraOpThreads < 0)
        throw Error("model '" + source + "'", "intra-op threads must be 0 (LibTorch's default) or more");
    if (options.intraOpThreads > 0)
        at::set_num_threads(options.intraOpThreads);
    auto impl = std::make_unique<Impl>();
    impl->source = source;
    impl->options = options;
    if (source.rfind(kBuiltinPrefix, 0) == 0) {
        const std::string name = source.substr(kBuiltinPrefix.size());
        auto model = builtin::create(name);
        if (!model) {
            std::string known;
            for (const auto& n : builtinModels())
                known += (known.empty() ? "" : ", ") + n;
            throw Error("model '" + source + "'", "no such built-in model (available: " + known + ")");
        }
        impl->module = std::move(model->module);
        impl->inputs = std::move(model->exampleInputs);
        impl->inputDescriptions = std::move(model->inputDescriptions);
        impl->builtin = true;
        impl->displayName = name;
    } else if (isExportedProgramPath(source)) {
        if (const auto compiled = compiledModelsIn(source); !compiled.empty())
            openCompiledPackage(*impl, compiled);
        else
            openExportedProgram(*impl);
    } else {
        impl->module = loadTorchScriptFile(source);
        impl->module.eval();
        impl->displayName = std::filesystem::path(source).filename().string();
    }

    // Module identities (R2): each TorchScript module object, or the exported program's placeholder objects.
    std::vector<std::pair<c10::IValue, std::string>> identities;
    if (impl->program) {
        for (const auto& [path, object] : impl->program->moduleObjects())
            identities.emplace_back(object, path);
    } else {
        try {
            instrumentModuleClasses(impl->module);
            impl->inlined = inlinedForwardsOf(impl->module);
            impl->forksTasks = forksTasks(impl->module);
            impl->modules = buildModuleTree(impl->module);
            markForwardCalls(impl->module, impl->modules);
        } catch (const c10::Error& e) {
            throw Error("model '" + source + "'",
                        "cannot instrument the module graphs (" + describeTorchError(e) + ")");
        }
        for (const auto& item : impl->module.named_modules())
            identities.emplace_back(item.value._ivalue(), item.name);
    }
    for (size_t i = 0; i < impl->modules.size(); ++i)
        impl->indexByPath[impl->modules[i].path] = i;
    std::vector<std::pair<runtime::ObjectKey, std::string>> objects;
    for (const auto& [identity, path] : identities) {
        const auto* object = &identity.toObjectRef();
        impl->objectByPath[path] = object;
        // One object under two names (a submodule scripted before it was assigned to two attributes): its hooks
        // see one `self`, so its calls run in the scope of its first name, and an entry for either name covers both.
        const auto [first, added] = impl->indexByObject.emplace(object, impl->indexByPath.at(path));
        if (added)
            objects.emplace_back(object, path);
        else
            impl->warnings.push_back(
                "module '" + path + "' is module '" + impl->modules[first->second].path +
                "' under a second name (one module object, assigned to two attributes after it was scripted): the "
                "calls made through either name run in scope '" +
                impl->modules[first->second].path + "', and a plan entry for either name covers both");
    }
    runtime::Hooks::registerModules(objects);

    impl->frozen = !impl->program && looksFrozen(impl->module);
    if (impl->frozen)
        impl->warnings.emplace_back("the model looks frozen (torch.jit.freeze): its submodules were inlined, so "
                                    "module scoping is unavailable; plan entries can only target the root \"\"");
    return std::unique_ptr<ModelSession>(new ModelSession(std::move(impl)));
}

ModelSession::ModelSession(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

ModelSession::~ModelSession() { runtime::Hooks::unregisterModules(objectsOf(*m_impl)); }

const std::string& ModelSession::source() const { return m_impl->source; }
std::string ModelSession::displayName() const { return m_impl->displayName; }
bool ModelSession::isBuiltin() const { return m_impl->builtin; }
bool ModelSession::isFrozen() const { return m_impl->frozen; }
std::string ModelSession::planRefusal() const { return m_impl->program ? m_impl->program->planRefusal() : ""; }
std::string ModelSession::forwardProgram() const
{
    return m_impl->program ? std::string(m_impl->program->kind())
                           : std::string(graphExecutorName(m_impl->options.executor));
}
const std::vector<std::string>& ModelSession::warnings() const { return m_impl->warnings; }
const std::vector<ModuleInfo>& ModelSession::modules() const { return m_impl->modules; }
const OpenOptions& ModelSession::options() const { return m_impl->options; }
void ModelSession::setKeepLeftovers(bool keep) { m_impl->options.keepLeftovers = keep; }
void ModelSession::setGraphExecutor(GraphExecutor executor) { m_impl->options.executor = executor; }

std::string_view graphExecutorName(GraphExecutor executor)
{
    return executor == GraphExecutor::Optimized ? "optimized" : "direct";
}

std::optional<GraphExecutor> graphExecutorFromName(std::string_view name)
{
    if (name == "direct")
        return GraphExecutor::Direct;
    if (name == "optimized")
        return GraphExecutor::Optimized;
    return std::nullopt;
}

const ModuleInfo* ModelSession::findModule(const std::string& path) const
{
    const auto it = m_impl->indexByPath.find(path);
    return it == m_impl->indexByPath.end() ? nullptr : &m_impl->modules[it->second];
}

std::vector<std::string> ModelSession::forwardArgumentNames() const
{
    if (m_impl->program)
        return m_impl->program->inputNames();
    std::vector<std::string> names;
    const auto& args = m_impl->module.get_method("forward").function().getSchema().arguments();
    for (size_t i = 1; i < args.size(); ++i)
        names.push_back(args[i].name());
    return names;
}

void ModelSession::setInputSpecs(const std::vector<std::string>& specs)
{
    size_t required = 0, total = 0;
    if (m_impl->program) {
        required = total = m_impl->program->inputNames().size();
    } else {
        const auto& args = m_impl->module.get_method("forward").function().getSchema().arguments();
        for (size_t i = 1; i < args.size(); ++i)
            required += args[i].default_value() ? 0 : 1;
        total = args.size() - 1;
    }
    if (specs.size() < required || specs.size() > total)
        throw Error("inputs for '" + m_impl->displayName + "'",
                    "forward takes " +
                        (required == total ? std::to_string(total)
                                           : std::to_string(required) + " to " + std::to_string(total)) +
                        " input(s), " + std::to_string(specs.size()) + " given with --input");
    std::vector<c10::IValue> inputs;
    std::vector<std::string> descriptions;
    for (const auto& text : specs) {
        const TensorSpec spec = parseTensorSpec(text);
        try {
            inputs.emplace_back(makeInputTensor(spec));
        } catch (const c10::Error& e) { // a shape that parses but does not fit in memory
            throw Error("input spec '" + text + "'", "cannot create the tensor: " + describeTorchError(e));
        }
        descriptions.push_back(formatTensorSpec(spec));
    }
    m_impl->inputs = std::move(inputs);
    m_impl->kwargs.clear();
    m_impl->inputDescriptions = std::move(descriptions);
}

void ModelSession::loadInputsFile(const std::string& path)
{
    LoadedInputs loaded = kforge::loadInputsFile(path);
    if (!m_impl->program) { // the forward's schema types the file's untyped containers, as Python's call would
        const auto& arguments = m_impl->module.get_method("forward").function().getSchema().arguments();
        for (size_t i = 0; i < loaded.args.size() && i + 1 < arguments.size(); ++i)
            loaded.args[i] = typedAs(loaded.args[i], arguments[i + 1].type());
        for (auto& [name, value] : loaded.kwargs)
            for (size_t i = 1; i < arguments.size(); ++i)
                if (arguments[i].name() == name)
                    value = typedAs(value, arguments[i].type());
    }
    m_impl->inputs = std::move(loaded.args);
    m_impl->kwargs = std::move(loaded.kwargs);
    m_impl->inputDescriptions = std::move(loaded.descriptions);
}

std::vector<std::string> ModelSession::describeInputs() const { return m_impl->inputDescriptions; }
const std::string& ModelSession::fileSha256() const
{
    std::call_once(m_impl->digestOnce, [this] {
        if (!m_impl->builtin)
            m_impl->digest = kforge::fileSha256(m_impl->source);
    });
    return m_impl->digest;
}

bool ModelSession::hasInputs() const
{
    return !m_impl->inputs.empty() || !m_impl->kwargs.empty() || requiredArguments(*m_impl) == 0;
}

namespace {

// Forked tasks, and the rest of a forward after a torch.jit.wait that found its task unfinished, run on inter-op
// threads, where LibTorch plans the methods they call with that thread's own (thread-local) executor choice. This
// launcher runs each of them with the forward's (R12).
torch::jit::TaskLauncher launcherWithExecutor(bool optimize)
{
    return [optimize](std::function<void()> task) {
        at::launch([optimize, task = std::move(task)] {
            torch::jit::GraphOptimizerEnabledGuard executor(optimize);
            task();
        });
    };
}

} // namespace

std::string runScopeOf(const ModelSession::Impl& impl, const std::string& path)
{
    const auto object = impl.objectByPath.find(path);
    if (object == impl.objectByPath.end())
        return path;
    const auto first = impl.indexByObject.find(object->second);
    return first == impl.indexByObject.end() ? path : impl.modules[first->second].path;
}

c10::IValue runForward(ModelSession::Impl& impl) { return runForward(impl, {impl.inputs, impl.kwargs}); }

c10::IValue runForward(ModelSession::Impl& impl, const ForwardInputs& inputs)
{
    if (impl.program)
        return impl.program->run(inputs.args, inputs.kwargs);
    // The uninstrumented copy unless every module's hooks have something to do (graph_instrumentation.h), with the
    // root's hooks called by hand when they have; decided per forward, so a runtime activated during a forward
    // applies from the next one.
    const c10::IValue root = impl.module._ivalue();
    const runtime::HookDemand demand = runtime::hookDemand(root);
    const bool plain = demand != runtime::HookDemand::EveryModule && impl.module.find_method(kPlainForward);
    const bool rootByHand = plain && demand == runtime::HookDemand::RootOnly;
    const bool inlined = impl.options.executor == GraphExecutor::Direct && impl.inlined;
    torch::jit::Method method = impl.module.get_method(plain ? (inlined ? kInlinedPlainForward : kPlainForward)
                                                             : (inlined ? kInlinedForward : "forward"));
    if (rootByHand)
        runtime::callModuleEnter(root);
    c10::IValue output;
    if (!impl.forksTasks) {
        output = method(inputs.args, inputs.kwargs);
    } else {
        const auto done = method.run_async(inputs.args, inputs.kwargs,
                                           launcherWithExecutor(impl.options.executor == GraphExecutor::Optimized));
        done->wait();
        output = done->value(); // rethrows what the forward threw
    }
    if (rootByHand)
        runtime::callModuleExit(root);
    return output;
}

c10::IValue guardedForward(ModelSession::Impl& impl)
{
    const std::string where = "forward of '" + impl.displayName + "'";
    if (impl.inputs.empty() && impl.kwargs.empty() && requiredArguments(impl) > 0)
        throw Error(where, "no inputs: give --input DTYPE[SHAPE] per forward argument, or an inputs file");
    at::NoGradGuard noGrad;
    // LibTorch's OpenMP threads are a setting of the calling thread: a forward on another thread than the one that
    // opened the model (the desktop's worker, a benchmark's) would run with that thread's count.
    if (impl.options.intraOpThreads > 0 && at::get_num_threads() != impl.options.intraOpThreads)
        at::set_num_threads(impl.options.intraOpThreads);
    // Thread-local, and LibTorch caches the optimised and the unoptimised plans apart: per forward is enough.
    torch::jit::GraphOptimizerEnabledGuard optimize(impl.options.executor == GraphExecutor::Optimized);
    std::optional<runtime::CallGuard> opened;
    try {
        opened.emplace(impl.options.keepLeftovers, nullptr, impl.forksTasks);
    } catch (const std::exception& e) {
        throw Error(where, std::string("cannot start the forward: ") + e.what());
    }
    runtime::CallGuard& guard = *opened;
    runtime::clearLastEngineError();
    c10::IValue output;
    std::string error;
    try {
        output = runForward(impl, impl.freshInputs.take(impl.inputs, impl.kwargs));
    } catch (const c10::Error& e) {
        error = runtime::lastEngineError().empty() ? describeTorchError(e) : runtime::lastEngineError();
    } catch (const std::exception& e) {
        error = runtime::lastEngineError().empty() ? describeErrorMessage(e.what()) : runtime::lastEngineError();
    } catch (...) {
        error = "the forward threw something that is not a std::exception";
    }
    if (!error.empty()) {
        guard.finish(&error);
        std::string inputs;
        for (const auto& d : impl.inputDescriptions)
            inputs += (inputs.empty() ? "" : ", ") + d;
        throw Error(where, error + " (inputs: " + inputs + ")");
    }
    guard.finish(nullptr);
    return output;
}

std::vector<TensorDigest> ModelSession::forward() { return digestOutput(guardedForward(*m_impl)); }

void ModelSession::forwardDiscardingOutputs() { guardedForward(*m_impl); }

std::vector<TensorDigest> ModelSession::forwardMany(int iterations, int threads, const ProgressCallback& progress)
{
    const int total = iterations * std::max(threads, 1);
    std::mutex progressMutex;
    std::atomic<bool> stop{false};
    int done = 0;
    // After each forward: counts it and asks whether to go on (one caller at a time).
    const auto reported = [&] {
        if (!progress)
            return true;
        std::lock_guard lock(progressMutex);
        if (!progress(++done, total))
            stop = true;
        return !stop.load();
    };
    // Each thread keeps its last output; only the one returned is digested.
    const int workerCount = std::max(threads, 1);
    std::vector<c10::IValue> last(workerCount);
    std::vector<std::string> errors(workerCount);
    const auto work = [&](int t) {
        for (int i = 0; i < iterations && !stop; ++i) {
            last[t] = guardedForward(*m_impl);
            reported();
        }
    };
    if (workerCount == 1) {
        work(0);
        return digestOutput(last[0]);
    }
    std::vector<std::thread> workers;
    workers.reserve(workerCount);
    for (int t = 0; t < workerCount; ++t)
        workers.emplace_back([&, t] {
            try {
                work(t);
            } catch (const std::exception& e) {
                errors[t] = e.what();
            }
        });
    for (auto& w : workers)
        w.join();
    for (const auto& e : errors)
        if (!e.empty())
            throw Error("forward on " + std::to_string(threads) + " threads", e);
    return digestOutput(last.back());
}

} // namespace kforge
