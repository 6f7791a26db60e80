// SPDX-License-Identifier: Apache-2.0
// The C++ half of bench/bench_executor_gap.py: is the forward kforge profiles the one a deployment runs? It holds one
// TorchScript file loaded the ways its variants need and times forwards of the one asked for, on request, so that the
// Python driver can interleave them with Python's own `torch.jit.load(...)(x)` in rounds (the same machine state). The
// driver starts one process per variant: a deployment holds one model, and models alternating in one process slow
// each other (the allocator's and the caches' state, not the executor):
//
//   libtorch           torch::jit::load + forward under NoGradGuard: a C++ LibTorch deployment (graph optimizer on,
//                      LibTorch's default profiling executor)
//   libtorch_direct    the file loaded a second time and only ever run with the graph optimizer off: what kforge's
//                      direct executor does to LibTorch alone, without kforge (a GraphFunction keeps the graph
//                      prepared by its first call, inlined or not, whatever the flag says later: hence its own copy)
//   kforge_direct      ModelSession::forwardDiscardingOutputs, --executor direct (kforge's default)
//   kforge_optimized   the same with --executor optimized
//   kforge_profiled    forwards of the direct session inside one kforge::profile on the CPU (what `kforge profile`
//                      records: module scopes, function calls, every top-level op): N + 1 measured forwards, no
//                      warm-up, each timed from one progress callback to the next, the first dropped (it holds the
//                      profile's start), so a time is a forward as recorded in a running profile
//                      (bench/bench_profiling_cost.py)
//
// Protocol (stdin, one command a line; stdout, one answer a line): "VARIANT N" runs N forwards and answers their
// times in ms separated by spaces; "quit" ends. Before the first command it prints "ready".
//
//   bench_executor_gap MODEL.pt INPUTS.pt [THREADS [VARIANT,...] [DEVICE]]   (default: the first four variants, cpu)
//
// DEVICE "cuda" moves every variant's model and inputs to the GPU and times each forward to a device synchronize:
// the question of docs/gpu-results.md (2026-12-04), where kforge's plain resnet50 forward took 6.75 ms on an H200
// against Python's 3.94 ms for the same file.
//
// Time on this VM moves by 10-30% between processes, more than the 3% the default forward is judged by; instructions
// do not move. `bench_executor_gap --instructions MODEL.pt INPUTS.pt [THREADS [VARIANT,...]]` counts each variant's
// instructions per forward under callgrind (bench/instruction_count.h) and prints them with their ratio to libtorch's:
// the work each forward does, not its time (memory stalls are not counted), but a difference that does not move.
#include "instruction_count.h"

#include <kforge/model_session.h>
#include <kforge/profiling.h>

#include "model/graph_instrumentation.h"
#include "model/session_impl.h"

#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/serialize.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

// The forward arguments a torch.save'd tensor, tuple, list (positional) or dict (by name) holds.
struct Inputs {
    std::vector<c10::IValue> args;
    std::unordered_map<std::string, c10::IValue> kwargs;
};

Inputs loadInputs(const std::string& path)
{
    std::ifstream file(path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const c10::IValue value = torch::pickle_load(bytes);
    Inputs inputs;
    if (value.isTuple())
        inputs.args = value.toTupleRef().elements().vec();
    else if (value.isList())
        inputs.args = value.toListRef().vec();
    else if (value.isGenericDict())
        for (const auto& item : value.toGenericDict())
            inputs.kwargs[item.key().toStringRef()] = item.value();
    else
        inputs.args = {value};
    return inputs;
}

// A tensor, or the tensors inside tuples, lists and dicts, on `device`.
c10::IValue onDevice(const c10::IValue& value, const c10::Device& device)
{
    if (value.isTensor())
        return value.toTensor().to(device);
    if (value.isTuple()) {
        std::vector<c10::IValue> items;
        for (const c10::IValue& item : value.toTupleRef().elements())
            items.push_back(onDevice(item, device));
        return c10::ivalue::Tuple::create(std::move(items));
    }
    if (value.isList()) {
        c10::impl::GenericList items(c10::AnyType::get());
        for (const c10::IValue& item : value.toListRef())
            items.push_back(onDevice(item, device));
        return items;
    }
    return value;
}

bool gCuda = false; // DEVICE was "cuda": every forward is timed to a device synchronize

double timeMs(const std::function<void()>& forward)
{
    const auto start = std::chrono::steady_clock::now();
    forward();
    if (gCuda)
        torch::cuda::synchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The times of `forwards` forwards recorded inside one CPU profile (the kforge_profiled variant), space-separated ms.
std::string profiledForwardTimes(kforge::ModelSession& session, int forwards)
{
    std::vector<std::chrono::steady_clock::time_point> ends;
    kforge::ProfileOptions options;
    options.warmupIterations = 0;
    options.iterations = forwards + 1;
    options.progress = [&ends](int, int) {
        ends.push_back(std::chrono::steady_clock::now());
        return true;
    };
    kforge::profile(session, options);
    std::string answer;
    for (size_t i = 1; i < ends.size(); ++i)
        answer += (i > 1 ? " " : "") +
                  std::to_string(std::chrono::duration<double, std::milli>(ends[i] - ends[i - 1]).count());
    return answer;
}

// What one process holds: only the models its variants need, loaded on first use.
class Loaded {
public:
    Loaded(std::string model, std::string inputsPath, std::string device)
        : model_(std::move(model)), inputsPath_(std::move(inputsPath)), device_(std::move(device)),
          inputs_(loadInputs(inputsPath_))
    {
        for (c10::IValue& arg : inputs_.args)
            arg = onDevice(arg, c10::Device(device_));
        for (auto& [name, value] : inputs_.kwargs)
            value = onDevice(value, c10::Device(device_));
    }

    const Inputs& inputs() const { return inputs_; }

    torch::jit::Module& deployment(bool optimize)
    {
        auto& module = optimize ? deployed_ : deployedDirect_;
        if (!module) {
            module = torch::jit::load(model_, c10::Device(device_));
            module->eval();
        }
        return *module;
    }

    kforge::ModelSession& session(kforge::GraphExecutor executor)
    {
        auto& session = executor == kforge::GraphExecutor::Direct ? direct_ : optimized_;
        if (!session) {
            kforge::OpenOptions options;
            options.executor = executor;
            session = kforge::ModelSession::open(model_, options);
            session->loadInputsFile(inputsPath_);
            if (device_ != "cpu")
                session->setDevice(device_);
        }
        return *session;
    }

private:
    std::string model_, inputsPath_, device_;
    Inputs inputs_;
    std::optional<torch::jit::Module> deployed_, deployedDirect_;
    std::unique_ptr<kforge::ModelSession> direct_, optimized_;
};

// The forward a variant times; empty for a name no variant has. The optimizer flag is thread-local: each sets its own.
std::function<void()> variantForward(const std::string& name, Loaded& loaded)
{
    const auto libtorch = [&loaded](bool optimize) -> std::function<void()> {
        torch::jit::Module& module = loaded.deployment(optimize);
        return [&module, &loaded, optimize] {
            at::NoGradGuard noGrad;
            torch::jit::GraphOptimizerEnabledGuard executor(optimize);
            module.get_method("forward")(loaded.inputs().args, loaded.inputs().kwargs);
        };
    };
    // Attribution: kforge's plain copy of the forward (not inlined) or its instrumented forward, without the call
    // guard.
    const auto raw = [&loaded](const char* method, bool deploymentInputs) -> std::function<void()> {
        auto& impl = sessionImpl(loaded.session(kforge::GraphExecutor::Direct));
        return [&impl, &loaded, method, deploymentInputs] {
            at::NoGradGuard noGrad;
            torch::jit::GraphOptimizerEnabledGuard executor(false);
            if (deploymentInputs)
                impl.module.get_method(method)(loaded.inputs().args, loaded.inputs().kwargs);
            else
                impl.module.get_method(method)(impl.inputs, impl.kwargs);
        };
    };
    const auto session = [&loaded](kforge::GraphExecutor executor) -> std::function<void()> {
        kforge::ModelSession& opened = loaded.session(executor);
        return [&opened] { opened.forwardDiscardingOutputs(); };
    };
    if (name == "libtorch")
        return libtorch(true);
    if (name == "libtorch_direct")
        return libtorch(false);
    if (name == "kforge_direct")
        return session(kforge::GraphExecutor::Direct);
    if (name == "kforge_optimized")
        return session(kforge::GraphExecutor::Optimized);
    if (name == "kforge_plain_raw")
        return raw(kforge::kPlainForward, false);
    if (name == "kforge_plain_raw_inputs")
        return raw(kforge::kPlainForward, true);
    if (name == "kforge_hooked_raw")
        return raw("forward", false);
    return {};
}

constexpr const char* kDefaultVariants = "libtorch,libtorch_direct,kforge_direct,kforge_optimized";

// The parent of an --instructions run: re-runs this binary under callgrind and prints the counts.
int reportInstructions(const char* self, const std::vector<std::string>& args)
{
    const auto counts = kforge_bench::instructionsPerCall(self, args);
    const auto base = counts.find("libtorch");
    if (base == counts.end()) {
        std::fprintf(stderr, "bench_executor_gap: no count for libtorch\n");
        return 1;
    }
    std::printf("%s: instructions per forward (callgrind), ratio to libtorch's\n", args[1].c_str());
    std::istringstream names(args.size() > 4 ? args[4] : kDefaultVariants);
    for (std::string name; std::getline(names, name, ',');)
        if (const auto it = counts.find(name); it != counts.end())
            std::printf("  %-24s %14.0f  %.4fx\n", name.c_str(), it->second, it->second / base->second);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc > 1 && std::string(argv[1]) == "--instructions") {
        std::vector<std::string> args{"--instructions-child"};
        args.insert(args.end(), argv + 2, argv + argc);
        if (args.size() < 3) {
            std::fprintf(stderr,
                         "usage: bench_executor_gap --instructions MODEL.pt INPUTS.pt [THREADS [VARIANT,...]]\n");
            return 2;
        }
        return reportInstructions(argv[0], args);
    }
    const bool countingChild = argc > 1 && std::string(argv[1]) == "--instructions-child";
    if (countingChild) {
        --argc;
        ++argv;
    }
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_executor_gap MODEL.pt INPUTS.pt [THREADS [VARIANT,...] [DEVICE]] (driven "
                             "by bench_executor_gap.py)\n");
        return 2;
    }
    if (argc > 3 && std::stoi(argv[3]) > 0)
        at::set_num_threads(std::stoi(argv[3]));
    const std::string device = argc > 5 ? argv[5] : "cpu";
    gCuda = device == "cuda";
    Loaded loaded(argv[1], argv[2], device);
    // Load what the named variants need before "ready", so that no timed forward pays for a load.
    std::map<std::string, std::function<void()>> variants;
    std::istringstream names(argc > 4 ? argv[4] : kDefaultVariants);
    for (std::string name; std::getline(names, name, ',');)
        if (name == "kforge_profiled")
            loaded.session(kforge::GraphExecutor::Direct);
        else if (auto forward = variantForward(name, loaded))
            variants[name] = std::move(forward);
    if (countingChild) {
        for (const auto& [name, forward] : variants)
            kforge_bench::countInstructions(name, 5, forward, 5);
        return 0;
    }
    std::printf("ready\n");
    std::fflush(stdout);
    for (std::string line; std::getline(std::cin, line);) {
        std::istringstream command(line);
        std::string variant;
        int forwards = 0;
        command >> variant >> forwards;
        if (variant == "quit")
            break;
        if (variant == "kforge_profiled") {
            std::printf("%s\n", profiledForwardTimes(loaded.session(kforge::GraphExecutor::Direct), forwards).c_str());
            std::fflush(stdout);
            continue;
        }
        auto it = variants.find(variant);
        if (it == variants.end()) {
            auto forward = variantForward(variant, loaded);
            if (!forward) {
                std::printf("error: unknown variant '%s'\n", variant.c_str());
                std::fflush(stdout);
                continue;
            }
            it = variants.emplace(variant, std::move(forward)).first;
        }
        std::string answer;
        for (int i = 0; i < forwards; ++i)
            answer += (i ? " " : "") + std::to_string(timeMs(it->second));
        std::printf("%s\n", answer.c_str());
        std::fflush(stdout);
    }
    return 0;
}
