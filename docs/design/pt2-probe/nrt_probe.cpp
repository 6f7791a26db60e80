// SPDX-License-Identifier: Apache-2.0
// Minimal NativeRT (.pt2) runner + dispatcher interception probe (torch 2.11.0 wheel).
// usage: nrt_probe <pkg.pt2> <model_name> <x.bin> <y.bin> <comma-shape> [--trace] [--vlog] [--static-list]
#include <torch/nativert/ModelRunnerHandle.h>
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/util/Flags.h>
#include <c10/util/Registry.h>
#include <ATen/CPUFunctions.h>
#include <torch/library.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

C10_DECLARE_int(caffe2_log_level); // defined in libc10 (FLAGS_caffe2_log_level)

// The static-kernel registry accessor is exported from libtorch_cpu.so (no header in the wheel).
namespace torch::nativert {
class OpKernel;
class Node;
c10::Registry<std::string, std::unique_ptr<OpKernel>, const Node*>* StaticallyDispatchedCPUKernelRegistry();
} // namespace torch::nativert

static thread_local int g_depth = 0;
static std::atomic<int> g_geluCalls{0}, g_addmmCalls{0}, g_reluCalls{0};
static thread_local std::string g_cur_node; // set by the VLOG(2) "Executing:" hook
static bool g_trace = false;
static std::vector<std::string> g_events;

// Captures c10 MessageLogger output (written to std::cerr) and extracts NativeRT's per-node
// VLOG(2) "Executing: <node>" / "Completed: <node>" lines.
struct CerrHook : std::streambuf {
    std::streambuf* orig;
    std::string line;
    explicit CerrHook(std::streambuf* o) : orig(o) {}
    int overflow(int c) override
    {
        if (c == EOF)
            return 0;
        put((char)c);
        return c;
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override
    {
        for (std::streamsize i = 0; i < n; ++i)
            put(s[i]);
        return n;
    }
    void put(char c)
    {
        if (c != '\n') {
            line.push_back(c);
            return;
        }
        auto p = line.find("] Executing: ");
        auto q = line.find("] Completed: ");
        if (p != std::string::npos) {
            g_cur_node = line.substr(p + 13);
            if (g_trace)
                g_events.push_back("NODE-BEGIN " + g_cur_node);
        } else if (q != std::string::npos) {
            if (g_trace)
                g_events.push_back("NODE-END");
            g_cur_node.clear();
        } else {
            orig->sputn(line.data(), line.size());
            orig->sputc('\n');
        }
        line.clear();
    }
};

static std::vector<float> readBin(const std::string& p)
{
    std::ifstream f(p, std::ios::binary);
    std::vector<char> b((std::istreambuf_iterator<char>(f)), {});
    std::vector<float> v(b.size() / 4);
    memcpy(v.data(), b.data(), v.size() * 4);
    return v;
}

int main(int argc, char** argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage\n");
        return 2;
    }
    std::string pkg = argv[1], model = argv[2];
    std::vector<int64_t> shape;
    {
        std::stringstream ss(argv[5]);
        std::string t;
        while (std::getline(ss, t, ','))
            shape.push_back(std::stoll(t));
    }
    bool trace = false, vlog = false, slist = false;
    int bench = 0;
    for (int i = 6; i < argc; ++i) {
        std::string a = argv[i];
        trace |= a == "--trace";
        vlog |= a == "--vlog";
        slist |= a == "--static-list";
        if (a.rfind("--bench=", 0) == 0)
            bench = std::stoi(a.substr(8));
    }

    if (slist) {
        auto keys = torch::nativert::StaticallyDispatchedCPUKernelRegistry()->Keys();
        std::sort(keys.begin(), keys.end());
        printf("StaticallyDispatchedCPUKernelRegistry: %zu keys\n", keys.size());
        for (auto& k : keys)
            printf("  %s\n", k.c_str());
    }

    // --override: replace the CPU kernels of aten::gelu / aten::addmm / aten::relu in the dispatcher
    // (what a dispatcher-level interposer does) and count how often NativeRT reaches them.
    std::unique_ptr<torch::Library> lib;
    for (int i = 6; i < argc; ++i)
        if (std::string(argv[i]) == "--override") {
            lib = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__,
                                                   __LINE__);
            lib->impl("gelu", [](const at::Tensor& s, c10::string_view a) {
                ++g_geluCalls;
                return at::cpu::gelu(s, a);
            });
            lib->impl("addmm", [](const at::Tensor& b, const at::Tensor& m1, const at::Tensor& m2, const at::Scalar& be,
                                  const at::Scalar& al) {
                ++g_addmmCalls;
                return at::cpu::addmm(b, m1, m2, be, al);
            });
            lib->impl("relu", [](const at::Tensor& s) {
                ++g_reluCalls;
                return at::clamp_min(s, 0);
            });
        }
    auto xv = readBin(argv[3]), yv = readBin(argv[4]);
    at::Tensor x = at::from_blob(xv.data(), shape, at::kFloat).clone();

    auto t0 = std::chrono::steady_clock::now();
    torch::nativert::ModelRunnerHandle runner(pkg, model);
    auto t1 = std::chrono::steady_clock::now();
    printf("loaded %s/%s in %.1f ms\n", pkg.c_str(), model.c_str(),
           std::chrono::duration<double, std::milli>(t1 - t0).count());

    CerrHook* hook = nullptr;
    if (getenv("RAWVLOG")) {
        FLAGS_caffe2_log_level = -2;
        runner.runWithFlatInputsAndOutputs({x});
        FLAGS_caffe2_log_level = 0;
    }
    if (vlog) {
        hook = new CerrHook(std::cerr.rdbuf());
        std::cerr.rdbuf(hook);
        FLAGS_caffe2_log_level = -2;
    }

    at::CallbackHandle h = 0;
    if (trace) {
        h = at::addGlobalCallback(at::RecordFunctionCallback(
            [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
                if (g_trace) {
                    auto on = fn.operator_name();
                    std::string ov = on ? on->overload_name : std::string("-");
                    g_events.push_back(
                        std::string(2 * g_depth, ' ') + "d" + std::to_string(g_depth) +
                        " scope=" + std::to_string((int)fn.scope()) + " " + fn.name() + " [" + ov + "]" +
                        (g_cur_node.empty() ? "" : "  <node " + g_cur_node.substr(0, g_cur_node.find(' ')) + ">"));
                }
                ++g_depth;
                return nullptr;
            },
            [](const at::RecordFunction&, at::ObserverContext*) { --g_depth; }));
    }

    // 1) high-level API: args + kwargs -> pytree-unflattened output
    g_trace = trace;
    c10::IValue out = runner.run({x}, {});
    g_trace = false;
    size_t nFirst = g_events.size();
    // 2) flat API (traced too, to check the per-node op sequence is stable across runs)
    std::vector<c10::IValue> flatIn{x.clone()};
    g_trace = trace;
    auto flat = runner.runWithFlatInputsAndOutputs(std::move(flatIn));
    g_trace = false;
    if (trace) {
        std::vector<std::string> a(g_events.begin(), g_events.begin() + nFirst),
            b(g_events.begin() + nFirst, g_events.end());
        // drop the USER_SCOPE pytree records that only run() emits
        auto strip = [](std::vector<std::string> v) {
            std::vector<std::string> r;
            for (auto& e : v)
                if (e.find("scope=7") == std::string::npos)
                    r.push_back(e);
            return r;
        };
        printf("second (flat) run: %zu events; identical to first run (ignoring scope=7 pytree records): %d\n",
               b.size(), (int)(strip(a) == strip(b)));
        if (getenv("DUMP2")) {
            printf("--- second run trace ---\n");
            for (auto& e : b)
                printf("%s\n", e.c_str());
            printf("--- end second ---\n");
        }
        g_events.resize(nFirst);
    }
    if (bench > 0) {
        for (int w = 0; w < 3; ++w)
            runner.runWithFlatInputsAndOutputs({x});
        auto b0 = std::chrono::steady_clock::now();
        for (int i = 0; i < bench; ++i)
            runner.runWithFlatInputsAndOutputs({x});
        auto b1 = std::chrono::steady_clock::now();
        printf("bench: %.3f ms/run over %d runs (vlog hook %s, record-function cb %s)\n",
               std::chrono::duration<double, std::milli>(b1 - b0).count() / bench, bench, vlog ? "on" : "off",
               trace ? "on" : "off");
    }
    if (vlog) {
        FLAGS_caffe2_log_level = 0;
    }

    at::Tensor y = at::from_blob(yv.data(), {(int64_t)yv.size()}, at::kFloat);
    printf("run() output IValue tag=%s", out.tagKind().c_str());
    at::Tensor o = out.isTuple()  ? out.toTupleRef().elements()[0].toTensor()
                   : out.isList() ? out.toListRef()[0].toTensor()
                                  : out.toTensor();
    printf(" out0 shape=%s\n", c10::str(o.sizes()).c_str());
    printf("flat outputs: %zu, out0 shape=%s\n", flat.size(), c10::str(flat[0].toTensor().sizes()).c_str());
    double d1 = (o.reshape({-1}) - y).abs().max().item<double>();
    double d2 = (flat[0].toTensor().reshape({-1}) - y).abs().max().item<double>();
    printf("max|nativert.run - eager| = %.3g   max|flat - eager| = %.3g   allclose(1e-4)=%d\n", d1, d2,
           (int)at::allclose(o.reshape({-1}), y, 1e-4, 1e-4));

    if (lib)
        printf("dispatcher overrides reached during 2 runs: gelu=%d addmm=%d relu=%d\n", g_geluCalls.load(),
               g_addmmCalls.load(), g_reluCalls.load());
    if (trace) {
        at::removeCallback(h);
        printf("--- RecordFunction trace during run() (%zu events) ---\n", g_events.size());
        for (auto& e : g_events)
            printf("%s\n", e.c_str());
    }
    if (hook)
        std::cerr.rdbuf(hook->orig);
    return 0;
}
