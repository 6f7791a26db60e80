// SPDX-License-Identifier: Apache-2.0
#pragma once
// ModelSession's private state, shared by the model and runtime layers of the engine.
#include <kforge/model_session.h>

#include "model/exported_decompositions.h"
#include "model/fresh_inputs.h"
#include "runtime/module_directory.h"

#include <torch/script.h>

#include <map>
#include <mutex>
#include <unordered_map>

namespace kforge {
namespace profiling {
class CudaProfiling;
}
class ProgramRunner;

struct ModelSession::Impl final : runtime::ModuleDirectory {
    std::string source;
    std::string displayName;
    bool builtin = false;
    bool frozen = false;
    OpenOptions options;
    std::vector<std::string> warnings;

    torch::jit::Module module; // a TorchScript model
    // or a torch.export program or an AOTInductor package (.pt2); then `module` is empty
    std::shared_ptr<ProgramRunner> program;
    ExportedDecompositions decompositions; // an exported program's calls no provider can serve
    // An exported program's modules called inside torch.cond branches -> the module holding the cond, whose scope
    // serves their calls (exported_cond_branches.h).
    std::map<std::string, std::string> condBranches;
    bool forksTasks = false; // its code calls torch.jit.fork: forwards publish their stacks for the tasks
    // The direct executor's inlined forwards (addInlinedForwards) were made at open; false when they could not be
    // (the forwards then run as they are). Made at open, not by the first forward: adding methods to a class while
    // another thread's forward looks up its methods crashed (forwardMany's threads did).
    bool inlined = false;
    std::once_flag digestOnce; // fileSha256(), read on first use
    std::string digest;
    std::vector<ModuleInfo> modules;
    std::unordered_map<std::string, size_t> indexByPath;
    // Module identity at run time is the TorchScript object `self` (R2).
    std::unordered_map<const c10::ivalue::Object*, size_t> indexByObject;     // an object's first path
    std::unordered_map<std::string, const c10::ivalue::Object*> objectByPath; // every path, second names too

    std::vector<c10::IValue> inputs;
    std::unordered_map<std::string, c10::IValue> kwargs;
    std::vector<std::string> inputDescriptions;
    FreshInputs
        freshInputs; // what each forward is given: `inputs` and `kwargs` as they were set, never as a forward left them

    std::string device = "cpu";
    struct Graph; // a CUDA graph and its static output (cuda_capture.cpp)
    std::vector<CaptureRecord> captures;
    std::vector<std::shared_ptr<Graph>> graphs; // parallel to captures; null for failed ones

    // runtime::ModuleDirectory
    const c10::ivalue::Object* objectOf(const std::string& path) const override;
    const torch::jit::Module* scriptModule() const override { return program ? nullptr : &module; }
};

inline ModelSession::Impl& sessionImpl(ModelSession& session) { return *session.m_impl; }
// The path a module's calls run under: a module object under two names runs in the scope of its first (R2), so a
// plan scope naming its second ("b", "b.inner") is the first name's ("a", "a.inner") at run time. Other paths as
// given.
std::string runScopeOf(const ModelSession::Impl& impl, const std::string& path);
inline const ModelSession::Impl& sessionImpl(const ModelSession& session) { return *session.m_impl; }

// The model's forward on `inputs`, without the guard: the TorchScript method or the exported program.
c10::IValue runForward(ModelSession::Impl& impl, const ForwardInputs& inputs);
// The same on the session's inputs themselves (a CUDA graph capture, whose replays read them where they are).
c10::IValue runForward(ModelSession::Impl& impl);
// One forward inside the engine's call guard (R10) on fresh inputs (FreshInputs); throws kforge::Error with the cause
// and the inputs.
c10::IValue guardedForward(ModelSession::Impl& impl);
// Replays a capture (R15) and returns its static output; throws kforge::Error for an unknown or failed one.
c10::IValue replayCapture(ModelSession::Impl& impl, const std::string& captureId);
// Gives `tracer` the host tables recorded while `captureId` was captured, so its replays are attributed.
void addCaptureTables(const ModelSession::Impl& impl, const std::string& captureId, profiling::CudaProfiling& tracer);

} // namespace kforge
