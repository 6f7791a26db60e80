// SPDX-License-Identifier: Apache-2.0
#include "test_helpers.h"

#include <kforge/error.h>

#include <gtest/gtest.h>

#include <fstream>
#include <random>

namespace kforge::test {

TempDir::TempDir()
{
    std::random_device rd;
    m_dir = std::filesystem::temp_directory_path() / ("kforge-test-" + std::to_string(rd()));
    std::filesystem::create_directories(m_dir);
}

TempDir::~TempDir()
{
    std::error_code ec;
    std::filesystem::remove_all(m_dir, ec);
}

torch::jit::Module twoLevelModel(const std::string& childBody, const std::string& rootBody)
{
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module child(c10::QualifiedName("__torch__.Act"), cu, true);
    child.define("def forward(self, x: Tensor) -> Tensor:\n    return " + childBody + "\n");
    torch::jit::Module root(c10::QualifiedName("__torch__.Root"), cu, true);
    root.register_module("act", child);
    root.define("def forward(self, x: Tensor):\n    return " + rootBody + "\n");
    root.eval();
    return root;
}

void saveModule(const torch::jit::Module& module, const std::filesystem::path& path) { module.save(path.string()); }

void writeBytes(const std::filesystem::path& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary);
    out << bytes;
}

std::string errorOf(const std::function<void()>& action)
{
    try {
        action();
    } catch (const Error& e) {
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "threw a non-kforge exception: " << e.what();
        return {};
    }
    ADD_FAILURE() << "did not throw";
    return {};
}

} // namespace kforge::test

#include "model/session_impl.h"
#include "memoized_gelu_provider.h"
#include "workspace_gelu_provider.h"
#include "runtime/hook_ops.h"

#include <kforge/provider_sdk.h>

#include <ATen/ATen.h>

#include <mutex>
#include <thread>

namespace kforge::test {
namespace {

class TagGeluProvider final : public KernelProvider {
public:
    TagGeluProvider(std::string type, double tag) : m_type(std::move(type)), m_tag(tag) {}
    Function function() const override { return Function::Gelu; }
    std::string typeName() const override { return m_type; }

protected:
    CallResult run(const c10::OperatorHandle&, torch::jit::Stack& stack) override
    {
        const std::string approximate(stack.back().toStringRef());
        const at::Tensor x = stack[stack.size() - 2].toTensor();
        torch::jit::drop(stack, 2);
        ++tagCalls();
        torch::jit::push(stack, at::gelu(x, approximate) + m_tag);
        return CallResult::served();
    }

private:
    std::string m_type;
    double m_tag;
};

// Caches its output by input shape, not content: right on the first tensor of each shape, which is every call
// make_plan's per-call check makes (one per signature), and wrong on the next tensor of that shape. A provider that
// passes a per-call check and still ruins the model's output (the end-to-end check in make_plan catches it).
class StaleCacheGeluProvider final : public KernelProvider {
public:
    Function function() const override { return Function::Gelu; }
    std::string typeName() const override { return "TestStaleCacheGeluProvider"; }

protected:
    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        const auto args = parseGelu(stack);
        if (!args)
            return CallResult::decline("not gelu's normal form");
        const std::vector<std::int64_t> shape = args->self.sizes().vec();
        std::lock_guard lock(m_mutex);
        for (const auto& [cachedShape, output] : m_cache)
            if (cachedShape == shape) {
                torch::jit::drop(stack, GeluArgs::kArguments);
                torch::jit::push(stack, output);
                return CallResult::served();
            }
        op.callBoxed(stack);
        m_cache.emplace_back(shape, stack.back().toTensor());
        return CallResult::served();
    }

private:
    std::mutex m_mutex;
    std::vector<std::pair<std::vector<std::int64_t>, at::Tensor>> m_cache;
};

class SlowGeluProvider final : public KernelProvider {
public:
    Function function() const override { return Function::Gelu; }
    std::string typeName() const override { return "TestSlowGeluProvider"; }

protected:
    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        // Far above a loaded machine's noise: 2 ms per call lost to 12 vs 17 ms forwards with 16 suites at once.
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ++slowCalls();
        op.callBoxed(stack);
        return CallResult::served();
    }
};

class ThrowingGeluProvider final : public KernelProvider {
public:
    Function function() const override { return Function::Gelu; }
    std::string typeName() const override { return "TestThrowingGeluProvider"; }

protected:
    CallResult run(const c10::OperatorHandle&, torch::jit::Stack&) override
    {
        throw std::runtime_error("planted failure");
    }
};

// Breaks the provider contract in the way its "mode" setting names (R16: the runtime must catch each).
class MisbehavingGeluProvider final : public KernelProvider {
public:
    Function function() const override { return Function::Gelu; }
    std::string typeName() const override { return "TestMisbehavingGeluProvider"; }
    nlohmann::json settings() const override { return {{"type", typeName()}, {"mode", m_mode}}; }

protected:
    void loadSettings(const nlohmann::json& settings) override { m_mode = settings.value("mode", ""); }
    CallResult run(const c10::OperatorHandle&, torch::jit::Stack& stack) override
    {
        const at::Tensor x = stack[stack.size() - 2].toTensor();
        if (m_mode == "throw-int")
            throw 42;
        torch::jit::drop(stack, 2);
        if (m_mode == "decline-after-pop")
            return CallResult::decline("declined after popping its arguments");
        if (m_mode == "two-outputs") {
            torch::jit::push(stack, at::gelu(x), at::gelu(x));
        } else if (m_mode == "not-a-tensor") {
            torch::jit::push(stack, 1.5);
        } else if (m_mode == "wrong-shape") {
            torch::jit::push(stack, at::gelu(x).sum());
        } else if (m_mode == "wrong-dtype") {
            torch::jit::push(stack, at::gelu(x).to(at::kDouble));
        } else if (m_mode == "wrong-on-3-dims") { // right on matrices, off by one on anything with 3 dimensions
            torch::jit::push(stack, x.dim() == 3 ? at::gelu(x) + 1 : at::gelu(x));
        } else {
            torch::jit::push(stack, at::gelu(x));
        }
        return CallResult::served();
    }

private:
    std::string m_mode;
};

class BlockingGeluProvider final : public KernelProvider {
public:
    BlockingGeluProvider() { ++blockingProbe().live; }
    ~BlockingGeluProvider() override
    {
        if (blockingProbe().inCall > 0)
            blockingProbe().destroyedDuringCall = true;
        --blockingProbe().live;
    }
    Function function() const override { return Function::Gelu; }
    std::string typeName() const override { return "TestBlockingGeluProvider"; }

protected:
    // Not a candidate of make_plan unless a test armed it: it passes calls through, so its speed is the original's.
    bool supports(const torch::jit::Stack&) const override { return blockingProbe().armed; }
    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        BlockingProbe& probe = blockingProbe();
        if (!probe.armed) { // other suites (the optimizer tries every gelu provider) pass straight through
            op.callBoxed(stack);
            return CallResult::served();
        }
        ++probe.inCall;
        ++probe.calls;
        {
            std::unique_lock lock(probe.mutex);
            probe.entered = true;
            probe.changed.notify_all();
            probe.changed.wait(lock, [&] { return probe.released; });
        }
        op.callBoxed(stack);
        --probe.inCall;
        return CallResult::served();
    }
};

// Serves every interpolate call it is given, in any form, with zeros of the right shape: wrong everywhere.
class ZeroingInterpolateProvider final : public KernelProvider {
public:
    Function function() const override { return Function::Interpolate; }
    std::string typeName() const override { return "TestZeroingInterpolateProvider"; }

protected:
    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        op.callBoxed(stack);
        stack.back() = at::zeros_like(stack.back().toTensor());
        return CallResult::served();
    }
};

} // namespace

BlockingProbe& blockingProbe()
{
    static BlockingProbe probe;
    return probe;
}

void BlockingProbe::waitEntered()
{
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return entered; });
}

void BlockingProbe::release()
{
    std::lock_guard lock(mutex);
    released = true;
    changed.notify_all();
}

std::atomic<long>& slowCalls()
{
    static std::atomic<long> calls{0};
    return calls;
}

std::atomic<long>& tagCalls()
{
    static std::atomic<long> calls{0};
    return calls;
}

void registerTestProviders()
{
    static std::once_flag once;
    std::call_once(once, [] {
        auto& r = ProviderRegistry::instance();
        r.add({"TestTagGeluProvider", Function::Gelu, {"cpu", "cuda"}, "test", [] {
                   return std::make_unique<TagGeluProvider>("TestTagGeluProvider", kTagA);
               }});
        r.add({"TestTagBGeluProvider", Function::Gelu, {"cpu", "cuda"}, "test", [] {
                   return std::make_unique<TagGeluProvider>("TestTagBGeluProvider", kTagB);
               }});
        r.add({"TestSlowGeluProvider", Function::Gelu, {"cpu"}, "test", [] {
                   return std::make_unique<SlowGeluProvider>();
               }});
        r.add({"TestThrowingGeluProvider", Function::Gelu, {"cpu"}, "test", [] {
                   return std::make_unique<ThrowingGeluProvider>();
               }});
        r.add({"TestMisbehavingGeluProvider",
               Function::Gelu,
               {"cpu"},
               "test",
               [] { return std::make_unique<MisbehavingGeluProvider>(); },
               {{"mode", {{"type", "string"}}}}});
        r.add({"TestBlockingGeluProvider", Function::Gelu, {"cpu"}, "test", [] {
                   return std::make_unique<BlockingGeluProvider>();
               }});
        r.add({"TestMemoizedGeluProvider", Function::Gelu, {"cpu"}, "test", [] {
                   return std::make_unique<MemoizedGeluProvider>(kMemoFastNumel);
               }});
        r.add({"TestStaleCacheGeluProvider", Function::Gelu, {"cpu"}, "test", [] {
                   return std::make_unique<StaleCacheGeluProvider>();
               }});
        r.add({"TestWorkspaceGeluProvider", Function::Gelu, {"cpu"}, "test", [] {
                   return std::make_unique<WorkspaceGeluProvider>(kWorkspaceGeluBytes);
               }});
        r.add({"TestZeroingInterpolateProvider", Function::Interpolate, {"cpu"}, "test", [] {
                   return std::make_unique<ZeroingInterpolateProvider>();
               }});
    });
}

PlanEntry entry(const std::string& scope, const std::string& function, const std::string& providerType)
{
    PlanEntry e;
    e.scope = scope;
    e.function = function;
    e.provider = {{"type", providerType}};
    return e;
}

Plan planOf(std::vector<PlanEntry> entries) { return Plan{std::move(entries)}; }

c10::IValue moduleObject(ModelSession& session, const std::string& path)
{
    for (const auto& item : sessionImpl(session).module.named_modules())
        if (item.name == path)
            return item.value._ivalue();
    throw std::runtime_error("no module " + path);
}

void callEnterOp(const c10::IValue& self) { runtime::callModuleEnter(self); }
void callExitOp(const c10::IValue& self) { runtime::callModuleExit(self); }

double geluTagOnThisThread()
{
    const at::Tensor x = at::zeros({1});
    return at::gelu(x).item<double>(); // gelu(0) == 0, so the value is the tag
}

std::unique_ptr<ModelSession> geluModules(const TempDir& dir, const std::vector<std::string>& names,
                                          const std::string& forward, const std::vector<std::string>& inputSpecs)
{
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module root(c10::QualifiedName("__torch__.GeluModules"), cu, true);
    for (const std::string& name : names) {
        torch::jit::Module m(c10::QualifiedName("__torch__.Gelu_" + name), cu, true);
        m.define("def forward(self, x: Tensor) -> Tensor:\n    return torch.gelu(x)\n");
        root.register_module(name, m);
    }
    root.define(forward);
    const std::string path = dir.path("gelu_modules.pt").string();
    root.save(path);
    auto session = ModelSession::open(path);
    session->setInputSpecs(inputSpecs);
    return session;
}

} // namespace kforge::test
