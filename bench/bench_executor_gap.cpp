// SPDX-License-Identifier: Apache-2.0
// The C++ half of bench/bench_executor_gap.py: is the forward kforge profiles the one a deployment runs? It holds one
// TorchScript file loaded four ways and times forwards of the one asked for, on request, so that the Python driver can
// interleave them with Python's own `torch.jit.load(...)(x)` in rounds (one process pair, the same machine state):
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
//   bench_executor_gap MODEL.pt INPUTS.pt [THREADS]
#include <kforge/model_session.h>
#include <kforge/profiling.h>

#include "model/graph_instrumentation.h"
#include "model/session_impl.h"

#include <ATen/Parallel.h>
#include <torch/script.h>
#include <torch/serialize.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
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

double timeMs(const std::function<void()>& forward)
{
    const auto start = std::chrono::steady_clock::now();
    forward();
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

} // namespace

int main(int argc, char** argv)
{
    if (argc < 3) {
        std::fprintf(stderr,
                     "usage: bench_executor_gap MODEL.pt INPUTS.pt [THREADS] (driven by bench_executor_gap.py)\n");
        return 2;
    }
    const std::string model = argv[1];
    if (argc > 3 && std::stoi(argv[3]) > 0)
        at::set_num_threads(std::stoi(argv[3]));

    torch::jit::Module deployed = torch::jit::load(model), deployedDirect = torch::jit::load(model);
    deployed.eval();
    deployedDirect.eval();
    const Inputs inputs = loadInputs(argv[2]);
    kforge::OpenOptions direct, optimized;
    direct.executor = kforge::GraphExecutor::Direct;
    optimized.executor = kforge::GraphExecutor::Optimized;
    auto kforgeDirect = kforge::ModelSession::open(model, direct);
    auto kforgeOptimized = kforge::ModelSession::open(model, optimized);
    kforgeDirect->loadInputsFile(argv[2]);
    kforgeOptimized->loadInputsFile(argv[2]);

    const auto libtorch = [&inputs](torch::jit::Module& module, bool optimize) {
        return [&module, &inputs, optimize] {
            at::NoGradGuard noGrad;
            torch::jit::GraphOptimizerEnabledGuard executor(optimize);
            module.get_method("forward")(inputs.args, inputs.kwargs);
        };
    };
    // The optimizer flag is thread-local; each variant sets its own.
    const std::map<std::string, std::function<void()>> variants{
        {"libtorch", libtorch(deployed, true)},
        {"libtorch_direct", libtorch(deployedDirect, false)},
        {"kforge_direct", [&] { kforgeDirect->forwardDiscardingOutputs(); }},
        {"kforge_optimized", [&] { kforgeOptimized->forwardDiscardingOutputs(); }},
        // Attribution: kforge's plain copy of the forward, not inlined, without the call guard.
        {"kforge_plain_raw",
         [&] {
             at::NoGradGuard noGrad;
             torch::jit::GraphOptimizerEnabledGuard executor(false);
             sessionImpl(*kforgeDirect)
                 .module.get_method(kforge::kPlainForward)(sessionImpl(*kforgeDirect).inputs,
                                                           sessionImpl(*kforgeDirect).kwargs);
         }},
        // ... with the inputs this program loaded (the deployment's) instead of the session's.
        {"kforge_plain_raw_inputs",
         [&] {
             at::NoGradGuard noGrad;
             torch::jit::GraphOptimizerEnabledGuard executor(false);
             sessionImpl(*kforgeDirect).module.get_method(kforge::kPlainForward)(inputs.args, inputs.kwargs);
         }},
        // ... and the instrumented forward (module enter/exit ops, idle).
        {"kforge_hooked_raw",
         [&] {
             at::NoGradGuard noGrad;
             torch::jit::GraphOptimizerEnabledGuard executor(false);
             sessionImpl(*kforgeDirect)
                 .module.get_method("forward")(sessionImpl(*kforgeDirect).inputs, sessionImpl(*kforgeDirect).kwargs);
         }},
    };
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
            std::printf("%s\n", profiledForwardTimes(*kforgeDirect, forwards).c_str());
            std::fflush(stdout);
            continue;
        }
        const auto it = variants.find(variant);
        if (it == variants.end()) {
            std::printf("error: unknown variant '%s'\n", variant.c_str());
            std::fflush(stdout);
            continue;
        }
        std::string answer;
        for (int i = 0; i < forwards; ++i)
            answer += (i ? " " : "") + std::to_string(timeMs(it->second));
        std::printf("%s\n", answer.c_str());
        std::fflush(stdout);
    }
    return 0;
}
