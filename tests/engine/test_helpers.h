// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared fixtures for the engine suites: small TorchScript models written in C++, temp files.
#include <torch/script.h>

#include <filesystem>
#include <functional>
#include <string>

namespace kforge::test {

// A temporary folder removed at destruction.
class TempDir {
public:
    TempDir();
    ~TempDir();
    std::filesystem::path path(const std::string& name) const { return m_dir / name; }

private:
    std::filesystem::path m_dir;
};

// Root(Any) -> child "act" whose forward applies `body` (TorchScript expression over x), e.g. "torch.relu(x)".
torch::jit::Module twoLevelModel(const std::string& childBody, const std::string& rootBody = "self.act.forward(x)");
void saveModule(const torch::jit::Module& module, const std::filesystem::path& path);
void writeBytes(const std::filesystem::path& path, const std::string& bytes);
// The message of the kforge::Error `action` throws; fails the test when it throws nothing or something else.
std::string errorOf(const std::function<void()>& action);

} // namespace kforge::test

#include <kforge/model_session.h>
#include <kforge/plan.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace kforge::test {

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Test providers (registered once per process):
//   TestTagGeluProvider   gelu(x) + 1000: its output says who served the call; counts its calls
//   TestTagBGeluProvider  gelu(x) + 2000
//   TestSlowGeluProvider  correct but sleeps 20 ms per call
//   TestThrowingGeluProvider  throws "planted failure"
//   TestMisbehavingGeluProvider  breaks the provider contract as its setting "mode" says: "throw-int", "two-outputs",
//                             "not-a-tensor", "wrong-shape" (a 0-D result), "wrong-dtype" (float64),
//                             "decline-after-pop"
//   TestBlockingGeluProvider  once blockingProbe().armed, every call waits inside it until release(); not
//                             eligible for make_plan before
//   TestMemoizedGeluProvider  faster or slower than ATen by construction, on any machine: an input tensor it served
//                             before gets the stored output back (a lookup); inputs under kMemoFastNumel elements
//                             sleep 50 ms first
//   TestWorkspaceGeluProvider  a lookup of its first output (right on a model calling gelu on one tensor), with a
//                             workspace of kWorkspaceGeluBytes in every call
void registerTestProviders();

// What TestBlockingGeluProvider instances did: live instances, calls, whether one was destroyed while a call
// was inside it (a use-after-free in the making).
struct BlockingProbe {
    std::atomic<bool> armed{false}; // before: calls pass straight through to the original
    std::mutex mutex;
    std::condition_variable changed;
    bool entered = false;  // a call is waiting inside
    bool released = false; // calls may go on
    std::atomic<int> live{0}, calls{0}, inCall{0};
    std::atomic<bool> destroyedDuringCall{false};
    void waitEntered();
    void release();
};
BlockingProbe& blockingProbe(); // one per process: one test at a time uses it
std::atomic<long>& tagCalls();
std::atomic<long>& slowCalls(); // calls TestSlowGeluProvider served
inline constexpr double kTagA = 1000.0;
inline constexpr double kTagB = 2000.0;
inline constexpr std::int64_t kMemoFastNumel = 100000;
inline constexpr std::int64_t kWorkspaceGeluBytes = std::int64_t(8) << 20;

PlanEntry entry(const std::string& scope, const std::string& function, const std::string& providerType);
Plan planOf(std::vector<PlanEntry> entries);

// A scripted model saved in `dir` with one submodule per name, each `torch.gelu` of its input, and `forward` (the
// root's TorchScript source, calling them as self.NAME.forward), opened with `inputSpecs`: the optimizer's and
// re-validation's models whose calls differ by construction.
std::unique_ptr<ModelSession> geluModules(const TempDir& dir, const std::vector<std::string>& names,
                                          const std::string& forward, const std::vector<std::string>& inputSpecs);

// The module object at `path` as the hook ops see it (their `self`).
c10::IValue moduleObject(ModelSession& session, const std::string& path);
// Calls kforge::module_enter / module_exit by hand, as AITune's test calls the pre-hook by hand.
void callEnterOp(const c10::IValue& self);
void callExitOp(const c10::IValue& self);

// Who serves gelu on this thread right now: 0 = original, kTagA or kTagB.
double geluTagOnThisThread();

} // namespace kforge::test
