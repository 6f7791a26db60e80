// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/capture.h>
#include <kforge/module_info.h>
#include <kforge/progress.h>
#include <kforge/tensor_digest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kforge {
namespace runtime {
class ModuleDirectory; // engine-internal: what the runtime sees of a session
}

// How LibTorch runs the TorchScript graph of each forward (docs/loading-models.md, "Graph executor").
enum class GraphExecutor {
    // The graph as scripted, without optimisation passes: the first forward is as fast as the others (a
    // 10,000-module model answers at once) and every op runs as scripted, nothing fused. The default.
    Direct,
    // LibTorch's default executor (profiling): the first forwards profile the graph and optimise it, which takes
    // seconds on very large graphs; on CUDA it fuses elementwise ops (turned off while a plan is active). What a
    // LibTorch deployment runs.
    Optimized,
};
std::string_view graphExecutorName(GraphExecutor executor); // "direct", "optimized"

// LibTorch's intra-op threads in this process now (at::get_num_threads; OpenOptions::intraOpThreads sets them).
int intraOpThreadCount();
std::optional<GraphExecutor> graphExecutorFromName(std::string_view name);

struct OpenOptions {
    // R11: keep patches that a failed forward left behind, for debugging, instead of unwinding them.
    bool keepLeftovers = false;
    GraphExecutor executor = GraphExecutor::Direct;
    // A torch.export package's program to run, by name; "": its only one, else "model" (torch.export.save's name)
    // or "forward" (exportedProgramNames lists them). Ignored for TorchScript models.
    std::string program;
    // A .pt2 holding both an exported program and its AOTInductor compiled code (torch.export.pt2_archive's
    // package_pt2): run the compiled code, as a C++ deployment of the package would, with the exported program's
    // module tree (its modules' own times cannot be told apart inside compiled code: the root holds them). Off: the
    // exported program runs, node by node, where plans apply.
    bool compiled = false;
    // LibTorch's intra-op threads (at::set_num_threads) from the moment the model opens, and on the thread of every
    // forward (LibTorch's OpenMP threads are a setting of each calling thread); 0 leaves LibTorch's default (one per
    // core). Fewer threads make CPU timings steadier.
    int intraOpThreads = 0;
};

// A loaded TorchScript model (a file, or "builtin:NAME"), its module tree and its example inputs.
// Opening instruments each module class's forward once with module enter/exit ops (docs/design/runtime-semantics.md
// R2); which modules are hooked is decided at run time by the runtimes activated on the session.
class ModelSession {
public:
    // Throws kforge::Error naming the file or builtin and the cause.
    static std::unique_ptr<ModelSession> open(const std::string& source, OpenOptions options = {});
    static std::vector<std::string> builtinModels(); // "builtin:tiny-gpt", ...

    ~ModelSession();
    ModelSession(const ModelSession&) = delete;
    ModelSession& operator=(const ModelSession&) = delete;

    const std::string& source() const;
    std::string displayName() const; // "tiny-gpt", "resnet.pt"
    bool isBuiltin() const;
    // Lower-case hex SHA-256 of the model file, read once per session (a plan records it); "" for a built-in.
    const std::string& fileSha256() const;
    // A frozen model has its submodules inlined: module scoping is unavailable (a warning says so).
    bool isFrozen() const;
    // Why no plan can apply to this model (an AOTInductor package's compiled code); "" when plans apply.
    std::string planRefusal() const;
    // What runs a forward: "direct" or "optimized" (the TorchScript graph executor, GraphExecutor), "exported" (a
    // torch.export program, node by node) or "compiled" (an AOTInductor package's generated code).
    std::string forwardProgram() const;
    const std::vector<std::string>& warnings() const;

    const std::vector<ModuleInfo>& modules() const; // pre-order, root first
    const ModuleInfo* findModule(const std::string& path) const;

    // Inputs: builtins and sessions start with default example inputs (files need setInputs/loadInputs).
    void setInputSpecs(const std::vector<std::string>& specs); // "float32[1,3,224,224]", one per argument
    void loadInputsFile(const std::string& path);              // torch.save'd tensor, tuple, list or dict
    std::vector<std::string> describeInputs() const;           // "float32[1,16]" per input
    bool hasInputs() const;
    std::vector<std::string> forwardArgumentNames() const; // the forward schema's names, without self

    // One forward inside the engine's call guard (R10), and a digest of each output tensor (a sum and a maximum,
    // computed after the forward). Throws kforge::Error on failure; the runtime state is unwound (or kept, with
    // keepLeftovers) and the session stays usable.
    std::vector<TensorDigest> forward();
    // The same forward for callers that only need it to run (warm-ups, timing loops, sample capture): no digest,
    // which costs 1-3% of a small model's forward.
    void forwardDiscardingOutputs();
    // Run forwards on `threads` threads, `iterations` each (R12). Returns the digests of the last forward (the only
    // one digested).
    // `progress(done, total)`, if given, is called after each forward (from one thread at a time); when it returns
    // false every thread stops after its current forward.
    std::vector<TensorDigest> forwardMany(int iterations, int threads = 1, const ProgressCallback& progress = {});

    // Moves the model and its inputs to "cpu" or "cuda[:N]"; throws kforge::Error if the device is absent.
    void setDevice(const std::string& device);
    std::string device() const;

    // R15: warms up, then captures one forward into a CUDA graph on a side stream, recording which provider
    // was in effect for which function in which scope. Needs a CUDA device (kforge::Error otherwise). A
    // failed capture returns a record with ok=false and its leftovers instead of throwing.
    CaptureRecord capture(int warmupIterations = 2);
    std::vector<TensorDigest> replay(const std::string& captureId);
    std::vector<CaptureRecord> captures() const;

    const OpenOptions& options() const;
    void setKeepLeftovers(bool keep);
    // Applies from the next forward on; each executor keeps its own optimised plans, so switching loses nothing.
    void setGraphExecutor(GraphExecutor executor);

    struct Impl;
    // The engine's own view of a session (engine/src/model/session_impl.h), for its layers, white-box tests and
    // benches: not part of the API.
    friend Impl& sessionImpl(ModelSession& session);
    friend const Impl& sessionImpl(const ModelSession& session);
    const runtime::ModuleDirectory& moduleDirectory() const;

private:
    explicit ModelSession(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace kforge
