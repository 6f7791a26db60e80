// SPDX-License-Identifier: Apache-2.0
// Cuda*Provider types (engine/src/providers/cuda): registration, settings and CPU eligibility run anywhere; the
// numerics (each provider against the ATen op it replaces) and the runtime end to end need a CUDA device and
// skip with the reason without one.
#include <kforge/error.h>
#include <kforge/events.h>
#include <kforge/model_session.h>
#include <kforge/provider_sdk.h>
#include <kforge/runtime.h>

#include "test_helpers.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>
#if __has_include(<cuda_runtime_api.h>) && __has_include(<c10/cuda/CUDAGuard.h>)
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#define KFORGE_TEST_HAS_CUDA_HEADERS 1
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <sstream>

using namespace kforge;
using namespace kforge::test;

#define REQUIRE_CUDA_PROVIDERS()                                                                                       \
    if (!cudaProvidersBuilt())                                                                                         \
    GTEST_SKIP() << "the engine was built without the CUDA toolkit: no Cuda*Provider types"

#define REQUIRE_CUDA()                                                                                                 \
    REQUIRE_CUDA_PROVIDERS();                                                                                          \
    if (!torch::cuda::is_available())                                                                                  \
    GTEST_SKIP() << "needs a CUDA device; none is visible on this machine"

namespace {

const std::vector<std::pair<std::string, std::string>> kProviders{
    {"CudaLayerNormProvider", "layer_norm"},
    {"CudaRmsNormProvider", "rms_norm"},
    {"CudaSoftmaxProvider", "softmax"},
    {"CudaGeluProvider", "gelu"},
    {"CudaSiluProvider", "silu"},
};

bool cudaProvidersBuilt() { return ProviderRegistry::instance().find("CudaLayerNormProvider") != nullptr; }

std::unique_ptr<KernelProvider> fresh(const std::string& type)
{
    const ProviderTypeInfo* info = ProviderRegistry::instance().find(type);
    if (!info)
        throw std::runtime_error("no provider type " + type);
    return info->create();
}

c10::OperatorHandle op(const char* name, const char* overload = "")
{
    return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

c10::IValue none() { return c10::IValue(); }
c10::IValue opt(const at::Tensor& t) { return t.defined() ? c10::IValue(t) : c10::IValue(); }
c10::IValue ints(std::vector<int64_t> v) { return c10::IValue(std::move(v)); }

// Boxed argument stacks, as the op schemas have them.
torch::jit::Stack layerNormArgs(const at::Tensor& x, std::vector<int64_t> shape, const at::Tensor& w = {},
                                const at::Tensor& b = {}, double eps = 1e-5)
{
    return {x, ints(std::move(shape)), opt(w), opt(b), eps, true};
}
torch::jit::Stack rmsNormArgs(const at::Tensor& x, std::vector<int64_t> shape, const at::Tensor& w = {},
                              std::optional<double> eps = std::nullopt)
{
    return {x, ints(std::move(shape)), opt(w), eps ? c10::IValue(*eps) : none()};
}
torch::jit::Stack softmaxArgs(const at::Tensor& x, int64_t dim, std::optional<at::ScalarType> dtype = std::nullopt)
{
    return {x, dim, dtype ? c10::IValue(*dtype) : none()};
}
torch::jit::Stack geluArgs(const at::Tensor& x, const std::string& approximate = "none") { return {x, approximate}; }
torch::jit::Stack siluArgs(const at::Tensor& x) { return {x}; }

// Runs `settings`'s provider on `args` through KernelProvider::call, after checking that the kernel accepts
// them (a refused call would fall back to ATen and the comparison would prove nothing).
at::Tensor runProvider(const nlohmann::json& settings, const c10::OperatorHandle& handle, torch::jit::Stack args)
{
    const std::string type = settings["type"].get<std::string>();
    EXPECT_TRUE(fresh(type)->prepare({args})) << type << " refused a sample it should take";
    auto provider = ProviderRegistry::instance().create(settings);
    provider->call(handle, args);
    EXPECT_EQ(args.size(), 1u);
    return args.back().toTensor();
}

struct Tolerance {
    double rtol;
    double atol;
};

// float32: tight; half precision: the two implementations may round the same float result to neighbouring
// values (up to ~2 units in the last place).
Tolerance toleranceFor(at::ScalarType type, double floatAtol = 1e-6)
{
    switch (type) {
    case at::kBFloat16:
        return {2e-2, 1e-3};
    case at::kHalf:
        return {3e-3, 1e-4};
    default:
        return {1e-5, floatAtol};
    }
}

void expectClose(const at::Tensor& got, const at::Tensor& want, Tolerance tol, const std::string& what)
{
    ASSERT_TRUE(got.defined()) << what;
    EXPECT_EQ(got.scalar_type(), want.scalar_type()) << what;
    EXPECT_EQ(got.device(), want.device()) << what;
    ASSERT_EQ(got.sizes().vec(), want.sizes().vec()) << what;
    if (got.numel() == 0)
        return;
    const at::Tensor g = got.to(at::kDouble).cpu();
    const at::Tensor w = want.to(at::kDouble).cpu();
    const bool close = at::allclose(g, w, tol.rtol, tol.atol, /*equal_nan=*/true);
    const double maxDiff = (g - w).abs().nan_to_num(0.0, 0.0, 0.0).max().item<double>();
    EXPECT_TRUE(close) << what << ": max |got - want| = " << maxDiff << " (rtol " << tol.rtol << ", atol " << tol.atol
                       << ")";
}

std::string describe(const at::Tensor& x, const std::string& extra = "")
{
    std::ostringstream s;
    s << c10::toString(x.scalar_type()) << x.sizes() << (x.is_contiguous() ? "" : " non-contiguous")
      << (reinterpret_cast<std::uintptr_t>(x.data_ptr()) % 16 ? " misaligned" : "") << extra;
    return s.str();
}

const std::vector<at::ScalarType> kTypes{at::kFloat, at::kBFloat16, at::kHalf};

// Launch settings the numerics run under besides the built-in kernels (NVRTC-compiled variants): small and full
// blocks, narrow and 32-byte loads, several rows per block, the row length compiled in.
const std::vector<nlohmann::json> kRowTunings{
    nlohmann::json::object(),
    {{"block_threads", 128}, {"vector_width", 4}},
    {{"block_threads", 256}, {"vector_width", 2}, {"rows_per_block", 4}, {"specialize_cols", true}},
    {{"block_threads", 1024}, {"vector_width", 16}, {"rows_per_block", 8}},
};
const std::vector<nlohmann::json> kUnaryTunings{
    nlohmann::json::object(),
    {{"block_threads", 128}, {"vector_width", 2}, {"blocks_per_sm", 2}},
    {{"block_threads", 1024}, {"vector_width", 16}},
};

nlohmann::json tuned(const std::string& type, const nlohmann::json& tuning)
{
    nlohmann::json settings{{"type", type}};
    settings.update(tuning);
    return settings;
}

std::string tuningText(const nlohmann::json& tuning) { return tuning.empty() ? "" : " " + tuning.dump(); }

at::TensorOptions cuda(at::ScalarType type) { return at::TensorOptions().device(at::kCUDA).dtype(type); }

// Row-shaped inputs: odd sizes, one column, 17, 4096, above the shared-memory cache (10000, 10001), no rows,
// a transposed view, a sliced view, and a contiguous tensor starting off the 16-byte boundary.
std::vector<at::Tensor> rowInputs(at::ScalarType type)
{
    const auto o = cuda(type);
    std::vector<at::Tensor> xs{
        at::randn({3, 17}, o), at::randn({5, 1}, o),     at::randn({2, 3, 4096}, o),
        at::randn({7, 33}, o), at::randn({1, 10000}, o), at::randn({2, 10001}, o),
        at::randn({0, 64}, o), at::randn({4, 8}, o),     at::randn({1000, 96}, o),
    };
    xs.push_back(at::randn({64, 6}, o).t());                                     // [6, 64], non-contiguous
    xs.push_back(at::randn({5, 40}, o).narrow(1, 3, 32));                        // [5, 32], non-contiguous
    xs.push_back(at::randn({4 * 64 + 1}, o).narrow(0, 1, 4 * 64).view({4, 64})); // contiguous, misaligned
    return xs;
}

std::vector<at::Tensor> elementwiseInputs(at::ScalarType type)
{
    const auto o = cuda(type);
    std::vector<at::Tensor> xs{at::randn({1}, o),    at::randn({17}, o),   at::randn({3, 4096}, o),
                               at::randn({1001}, o), at::randn({0, 5}, o), at::randn({2, 3, 5, 7}, o) * 4,
                               at::randn({}, o)};
    xs.push_back(at::randn({64, 9}, o).t());                   // non-contiguous
    xs.push_back(at::randn({1 + 4099}, o).narrow(0, 1, 4099)); // contiguous, misaligned, odd tail
    // The whole range the math has to get right: large negative (tiny results), zero, large positive.
    xs.push_back(at::linspace(-12, 12, 2049, o));
    return xs;
}

} // namespace

// ---- Anywhere ------------------------------------------------------------------------------------------------------

TEST(CudaProviders, RegisteredForCudaWithTheirFunctions)
{
    REQUIRE_CUDA_PROVIDERS();
    for (const auto& [type, function] : kProviders) {
        const ProviderTypeInfo* info = ProviderRegistry::instance().find(type);
        ASSERT_NE(info, nullptr) << type;
        EXPECT_EQ(functionName(info->function), function) << type;
        EXPECT_EQ(info->devices, std::vector<std::string>{"cuda"}) << type;
        EXPECT_FALSE(info->description.empty()) << type;
        auto provider = info->create();
        EXPECT_EQ(provider->typeName(), type);
        EXPECT_EQ(provider->function(), info->function);
        EXPECT_EQ(provider->devices(), std::vector<std::string>{"cuda"});
        EXPECT_EQ(provider->state(), ProviderState::Init);
        if (type == "CudaGeluProvider") {
            const nlohmann::json& schema = info->settingsSchema;
            ASSERT_TRUE(schema.contains("approximate")) << schema.dump();
            EXPECT_EQ(schema["approximate"]["enum"], nlohmann::json({"none", "tanh"}));
            EXPECT_EQ(schema["approximate"]["default"], "none");
        }
        // Launch settings for the CUDA autotuner, never enumerated as plain variants (no "enum").
        for (const char* key : {"block_threads", "vector_width"}) {
            ASSERT_TRUE(info->settingsSchema.contains(key)) << type << ": " << info->settingsSchema.dump();
            EXPECT_FALSE(info->settingsSchema[key].contains("enum")) << type << " " << key;
        }
    }
}

TEST(CudaProviders, SettingsRoundTrip)
{
    REQUIRE_CUDA_PROVIDERS();
    auto& registry = ProviderRegistry::instance();
    for (const auto& [type, _] : kProviders) {
        auto provider = registry.create({{"type", type}});
        EXPECT_EQ(provider->state(), ProviderState::Ready) << type;
        const nlohmann::json settings = provider->settings();
        EXPECT_EQ(settings["type"], type);
        EXPECT_EQ(registry.create(settings)->settings(), settings) << type;
        EXPECT_THROW(registry.create({{"type", type}, {"bogus", 1}}), Error) << type;
    }

    auto gelu = registry.create({{"type", "CudaGeluProvider"}});
    EXPECT_EQ(gelu->settings(), nlohmann::json({{"type", "CudaGeluProvider"}, {"approximate", "none"}}));
    EXPECT_EQ(gelu->displayName(), "CudaGeluProvider(approximate=none)");
    const nlohmann::json tanh{{"type", "CudaGeluProvider"}, {"approximate", "tanh"}};
    auto tanhGelu = registry.create(tanh);
    EXPECT_EQ(tanhGelu->settings(), tanh);
    EXPECT_EQ(tanhGelu->displayName(), "CudaGeluProvider(approximate=tanh)");
    EXPECT_EQ(registry.create(tanhGelu->settings())->settings(), tanh);
    try {
        registry.create({{"type", "CudaGeluProvider"}, {"approximate", "fast"}});
        FAIL() << "an unknown approximation was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("fast"), std::string::npos) << e.what();
    }
    EXPECT_THROW(registry.create({{"type", "CudaGeluProvider"}, {"approximate", 1}}), Error);
}

// Launch settings: what the CUDA autotuner writes into plans; checked when a plan loads, kept on a round trip.
TEST(CudaProviders, LaunchSettingsRoundTripAndBadValuesAreRefused)
{
    REQUIRE_CUDA_PROVIDERS();
    auto& registry = ProviderRegistry::instance();
    for (const auto& [type, _] : kProviders) {
        const bool rowKernel = type != "CudaGeluProvider" && type != "CudaSiluProvider";
        for (const nlohmann::json& tuning : rowKernel ? kRowTunings : kUnaryTunings) {
            const auto provider = registry.create(tuned(type, tuning));
            for (const auto& [key, value] : tuning.items())
                EXPECT_EQ(provider->settings()[key], value) << type << " " << key;
            EXPECT_EQ(registry.create(provider->settings())->settings(), provider->settings()) << type;
            if (!tuning.empty())
                EXPECT_NE(provider->displayName().find("block_threads="), std::string::npos) << provider->displayName();
        }
        const std::vector<nlohmann::json> bad{
            {{"block_threads", 100}},   {{"block_threads", 2048}},
            {{"block_threads", "256"}}, {{"vector_width", 3}},
            {{"vector_width", 32}},     {{"vector_width", 0}},
            {{"blocks_per_sm", 0}},     {{"rows_per_block", 3}},
            {{"specialize_cols", 1}},   {{"block_threads", 64}, {"rows_per_block", 4}},
        };
        for (const nlohmann::json& tuning : bad) {
            const bool appliesToThisKind =
                rowKernel ? !tuning.contains("blocks_per_sm")
                          : !tuning.contains("rows_per_block") && !tuning.contains("specialize_cols");
            const std::string message = test::errorOf([&] { registry.create(tuned(type, tuning)); });
            EXPECT_FALSE(message.empty()) << type << " took " << tuning.dump();
            if (appliesToThisKind)
                EXPECT_NE(message.find(tuning.begin().key()), std::string::npos) << message;
            else
                EXPECT_NE(message.find("unknown setting"), std::string::npos) << message;
        }
    }
}

// A CUDA provider never takes CPU tensors: prepare() says no and the provider stays INIT.
TEST(CudaProviders, IneligibleOnCpuTensors)
{
    REQUIRE_CUDA_PROVIDERS();
    const at::Tensor x = at::randn({4, 8});
    const at::Tensor w = at::ones({8});
    const std::vector<std::pair<std::string, torch::jit::Stack>> samples{
        {"CudaLayerNormProvider", layerNormArgs(x, {8}, w, w)},
        {"CudaRmsNormProvider", rmsNormArgs(x, {8}, w)},
        {"CudaSoftmaxProvider", softmaxArgs(x, -1)},
        {"CudaGeluProvider", geluArgs(x)},
        {"CudaSiluProvider", siluArgs(x)},
    };
    for (const auto& [type, sample] : samples) {
        auto provider = fresh(type);
        EXPECT_FALSE(provider->prepare({sample})) << type;
        EXPECT_EQ(provider->state(), ProviderState::Init) << type;
    }
}

// CPU tensors are not for these kernels: each provider declines the call with the reason and leaves its
// arguments on the stack, for the runtime to run the original op.
TEST(CudaProviders, UnsupportedCallsAreDeclinedWithTheStackUntouched)
{
    REQUIRE_CUDA_PROVIDERS();
    auto& registry = ProviderRegistry::instance();
    const at::Tensor x = at::randn({4, 8});
    const at::Tensor w = at::randn({8});

    auto expectDeclined = [&](const std::string& type, const c10::OperatorHandle& handle, torch::jit::Stack args) {
        const size_t count = args.size();
        const CallResult result = registry.create({{"type", type}})->call(handle, args);
        ASSERT_FALSE(result.wasServed()) << type;
        EXPECT_NE(std::string(result.declined).find("CUDA"), std::string::npos) << type << ": " << result.declined;
        EXPECT_EQ(args.size(), count) << type;
    };
    expectDeclined("CudaLayerNormProvider", op("aten::layer_norm"), layerNormArgs(x, {8}, w, w));
    expectDeclined("CudaRmsNormProvider", op("aten::rms_norm"), rmsNormArgs(x, {8}, w));
    expectDeclined("CudaSoftmaxProvider", op("aten::softmax", "int"), softmaxArgs(x, 0));
    expectDeclined("CudaGeluProvider", op("aten::gelu"), geluArgs(x));
    expectDeclined("CudaSiluProvider", op("aten::silu"), siluArgs(x));
}

// Planned on a CPU session, the CUDA providers decline every call: the originals serve them, the output is the
// baseline's, and the calls are reported as the originals' (never credited to a Cuda*Provider), with the reason.
TEST(CudaProviders, OnACpuSessionTheOriginalsServeAndAreCredited)
{
    REQUIRE_CUDA_PROVIDERS();
    TempDir dir;
    saveModule(twoLevelModel("torch.rms_norm(torch.silu(x), [64], None, 1e-06)"), dir.path("m.pt"));
    for (const std::string source : {std::string("builtin:tiny-gpt"), dir.path("m.pt").string()}) {
        auto session = ModelSession::open(source);
        if (!session->isBuiltin())
            session->setInputSpecs({"float32[8,64]"});
        const auto baseline = session->forward();
        KernelProviderRuntime runtime(
            *session, planOf({entry("", "layer_norm", "CudaLayerNormProvider"),
                              entry("", "rms_norm", "CudaRmsNormProvider"), entry("", "softmax", "CudaSoftmaxProvider"),
                              entry("", "gelu", "CudaGeluProvider"), entry("", "silu", "CudaSiluProvider")}));
        auto stream = EventStream::attach(65536);
        std::vector<TensorDigest> out;
        {
            auto applied = runtime.applied();
            out = session->forward();
        }
        ASSERT_EQ(out.size(), baseline.size()) << source;
        EXPECT_EQ(out[0].sum, baseline[0].sum) << source;
        EXPECT_EQ(out[0].maxAbs, baseline[0].maxAbs) << source;
        std::vector<Event> log;
        stream->drain(log);
        EXPECT_FALSE(
            std::any_of(log.begin(), log.end(), [](const Event& e) { return e.kind == EventKind::ProviderCall; }))
            << source << ": a call was credited to a provider that declined it";
        EXPECT_TRUE(std::any_of(log.begin(), log.end(), [](const Event& e) {
            return e.kind == EventKind::OriginalCall && e.detail.rfind("declined by Cuda", 0) == 0;
        })) << source;
        EXPECT_FALSE(runtime.declines().empty()) << source;
    }
}

// ---- On a CUDA device: eligibility ------------------------------------------------------------------------------

TEST(CudaProviders, EligibleOnCudaTensors)
{
    REQUIRE_CUDA();
    for (at::ScalarType type : kTypes) {
        const at::Tensor x = at::randn({4, 8}, cuda(type));
        const at::Tensor w = at::ones({8}, cuda(type));
        const std::vector<std::pair<std::string, torch::jit::Stack>> samples{
            {"CudaLayerNormProvider", layerNormArgs(x, {8}, w, w)},
            {"CudaLayerNormProvider", layerNormArgs(x, {4, 8})},
            {"CudaRmsNormProvider", rmsNormArgs(x, {8}, w)},
            {"CudaRmsNormProvider", rmsNormArgs(x, {8}, {}, 1e-6)},
            {"CudaSoftmaxProvider", softmaxArgs(x, -1)},
            {"CudaSoftmaxProvider", softmaxArgs(x, 1, at::kFloat)},
            {"CudaGeluProvider", geluArgs(x, "tanh")},
            {"CudaSiluProvider", siluArgs(x.t())},
        };
        for (const auto& [provider, sample] : samples) {
            auto p = fresh(provider);
            EXPECT_TRUE(p->prepare({sample})) << provider << " " << describe(x);
            EXPECT_EQ(p->state(), ProviderState::Ready) << provider;
        }
    }
    // Layer norm: float32 parameters with a half-precision input.
    EXPECT_TRUE(fresh("CudaLayerNormProvider")
                    ->prepare({layerNormArgs(at::randn({4, 8}, cuda(at::kBFloat16)), {8},
                                             at::ones({8}, cuda(at::kFloat)), at::zeros({8}, cuda(at::kFloat)))}));
}

TEST(CudaProviders, IneligibleSamplesOnCuda)
{
    REQUIRE_CUDA();
    const at::Tensor x = at::randn({4, 8}, cuda(at::kFloat));
    const at::Tensor x64 = x.to(at::kDouble);
    const at::Tensor w = at::ones({8}, cuda(at::kFloat));
    const at::Tensor xb = x.to(at::kBFloat16);
    const std::vector<std::pair<std::string, torch::jit::Stack>> samples{
        {"CudaLayerNormProvider", layerNormArgs(x64, {8})},                                // float64
        {"CudaLayerNormProvider", layerNormArgs(x, {4})},                                  // not the last dims
        {"CudaLayerNormProvider", layerNormArgs(x, {8}, at::ones({8}))},                   // CPU weight
        {"CudaLayerNormProvider", layerNormArgs(x, {8}, at::ones({4}, cuda(at::kFloat)))}, // wrong weight shape
        {"CudaLayerNormProvider", layerNormArgs(x, {8}, w.to(at::kHalf))},                 // half weight, float input
        {"CudaLayerNormProvider", layerNormArgs(xb, {8}, w, w.to(at::kBFloat16))}, // mixed weight and bias dtypes
        {"CudaRmsNormProvider", rmsNormArgs(xb, {8}, w)},                          // promoting weight
        {"CudaRmsNormProvider", rmsNormArgs(x64, {8})},
        {"CudaSoftmaxProvider", softmaxArgs(x, 0)}, // not the last dim
        {"CudaSoftmaxProvider", softmaxArgs(x, -2)},
        {"CudaSoftmaxProvider", softmaxArgs(x, -1, at::kHalf)}, // narrowing dtype
        {"CudaSoftmaxProvider", softmaxArgs(x64, -1)},
        {"CudaGeluProvider", geluArgs(x64)},
        {"CudaSiluProvider", siluArgs(x.to(at::kInt))},
    };
    for (size_t i = 0; i < samples.size(); ++i) {
        auto p = fresh(samples[i].first);
        EXPECT_FALSE(p->prepare({samples[i].second})) << samples[i].first << " took sample " << i;
        EXPECT_EQ(p->state(), ProviderState::Init);
    }
    // Autograd: an input that needs gradients is left to ATen.
    const at::Tensor leaf = at::randn({4, 8}, cuda(at::kFloat)).requires_grad_();
    EXPECT_FALSE(fresh("CudaSiluProvider")->prepare({siluArgs(leaf)}));
    {
        at::NoGradGuard noGrad;
        EXPECT_TRUE(fresh("CudaSiluProvider")->prepare({siluArgs(leaf)}));
    }
}

// ---- On a CUDA device: numerics against ATen ---------------------------------------------------------------------

TEST(CudaProviders, LayerNormMatchesAten)
{
    REQUIRE_CUDA();
    at::manual_seed(1);
    const auto handle = op("aten::layer_norm");
    for (const nlohmann::json& tuning : kRowTunings)
        for (at::ScalarType type : kTypes) {
            const nlohmann::json settings = tuned("CudaLayerNormProvider", tuning);
            const Tolerance tol = toleranceFor(type, 1e-5);
            for (const at::Tensor& raw : rowInputs(type)) {
                // As made (views, misaligned storage), and with a mean and a scale to remove.
                for (const at::Tensor& x : {raw, raw * 3 + 1}) {
                    const int64_t cols = x.size(-1);
                    const at::Tensor w = at::randn({cols}, cuda(type));
                    const at::Tensor b = at::randn({cols}, cuda(type));
                    expectClose(runProvider(settings, handle, layerNormArgs(x, {cols}, w, b)),
                                at::layer_norm(x, {cols}, w, b), tol,
                                "layer_norm w,b " + describe(x, tuningText(tuning)));
                    expectClose(runProvider(settings, handle, layerNormArgs(x, {cols}, {}, {}, 1e-3)),
                                at::layer_norm(x, {cols}, {}, {}, 1e-3), tol,
                                "layer_norm no w,b " + describe(x, tuningText(tuning)));
                    expectClose(runProvider(settings, handle, layerNormArgs(x, {cols}, w)),
                                at::layer_norm(x, {cols}, w), tol,
                                "layer_norm w only " + describe(x, tuningText(tuning)));
                }
            }
            // normalized_shape over two dims: rows of 3 * 64.
            const at::Tensor x3 = at::randn({5, 3, 64}, cuda(type));
            const at::Tensor w3 = at::randn({3, 64}, cuda(type));
            expectClose(runProvider(settings, handle, layerNormArgs(x3, {3, 64}, w3, w3)),
                        at::layer_norm(x3, {3, 64}, w3, w3), tol,
                        "layer_norm 2-d normalized_shape " + describe(x3, tuningText(tuning)));
            // float32 parameters with a half-precision input: output in the input's dtype. ATen's CUDA layer_norm
            // refuses this mix ("expected scalar type BFloat16 but found Float", torch 2.11 on the H200), so the
            // reference normalises in float32 and rounds once, as the provider does.
            if (type != at::kFloat) {
                const at::Tensor x = at::randn({6, 256}, cuda(type));
                const at::Tensor w = at::randn({256}, cuda(at::kFloat));
                const at::Tensor b = at::randn({256}, cuda(at::kFloat));
                expectClose(runProvider(settings, handle, layerNormArgs(x, {256}, w, b)),
                            at::layer_norm(x.to(at::kFloat), {256}, w, b).to(type), tol,
                            "layer_norm float32 parameters " + describe(x, tuningText(tuning)));
            }
        }
}

TEST(CudaProviders, RmsNormMatchesAten)
{
    REQUIRE_CUDA();
    at::manual_seed(2);
    const auto handle = op("aten::rms_norm");
    for (const nlohmann::json& tuning : kRowTunings)
        for (at::ScalarType type : kTypes) {
            const nlohmann::json settings = tuned("CudaRmsNormProvider", tuning);
            const Tolerance tol = toleranceFor(type, 1e-5);
            for (const at::Tensor& x : rowInputs(type)) {
                const int64_t cols = x.size(-1);
                const at::Tensor w = at::randn({cols}, cuda(type));
                expectClose(runProvider(settings, handle, rmsNormArgs(x, {cols}, w)), at::rms_norm(x, {cols}, w), tol,
                            "rms_norm w " + describe(x, tuningText(tuning)));
                expectClose(runProvider(settings, handle, rmsNormArgs(x, {cols}, {}, 1e-6)),
                            at::rms_norm(x, {cols}, std::nullopt, 1e-6), tol,
                            "rms_norm eps " + describe(x, tuningText(tuning)));
            }
            // Tiny values: the default eps (float32's epsilon) matters.
            const at::Tensor tiny = at::randn({4, 32}, cuda(type)) * 1e-4;
            expectClose(runProvider(settings, handle, rmsNormArgs(tiny, {32})), at::rms_norm(tiny, {32}), tol,
                        "rms_norm default eps " + describe(tiny, tuningText(tuning)));
            const at::Tensor x3 = at::randn({5, 3, 64}, cuda(type));
            expectClose(runProvider(settings, handle, rmsNormArgs(x3, {3, 64})), at::rms_norm(x3, {3, 64}), tol,
                        "rms_norm 2-d normalized_shape " + describe(x3, tuningText(tuning)));
        }
}

TEST(CudaProviders, SoftmaxMatchesAten)
{
    REQUIRE_CUDA();
    at::manual_seed(3);
    const auto handle = op("aten::softmax", "int");
    for (const nlohmann::json& tuning : kRowTunings)
        for (at::ScalarType type : kTypes) {
            const nlohmann::json settings = tuned("CudaSoftmaxProvider", tuning);
            const Tolerance tol = toleranceFor(type);
            for (const at::Tensor& raw : rowInputs(type)) {
                for (const at::Tensor& x : {raw, raw * 4}) {
                    const int64_t last = x.dim() - 1;
                    expectClose(runProvider(settings, handle, softmaxArgs(x, -1)), at::softmax(x, -1), tol,
                                "softmax " + describe(x, tuningText(tuning)));
                    expectClose(runProvider(settings, handle, softmaxArgs(x, last)), at::softmax(x, last), tol,
                                "softmax dim=last " + describe(x, tuningText(tuning)));
                    expectClose(runProvider(settings, handle, softmaxArgs(x, -1, at::kFloat)),
                                at::softmax(x, -1, at::kFloat), toleranceFor(at::kFloat),
                                "softmax dtype=float32 " + describe(x, tuningText(tuning)));
                    expectClose(runProvider(settings, handle, softmaxArgs(x, -1, type)), at::softmax(x, -1, type), tol,
                                "softmax dtype=input " + describe(x, tuningText(tuning)));
                }
            }
            // Causal masking (-inf), a fully masked row (NaN, as ATen), large magnitudes.
            at::Tensor scores = at::randn({3, 8, 100}, cuda(type)) * 20;
            const at::Tensor mask = at::ones({8, 100}, at::TensorOptions().device(at::kCUDA).dtype(at::kBool)).triu(1);
            scores = scores.masked_fill(mask, -std::numeric_limits<double>::infinity());
            scores.select(1, 0).fill_(-std::numeric_limits<double>::infinity());
            expectClose(runProvider(settings, handle, softmaxArgs(scores, -1)), at::softmax(scores, -1), tol,
                        "softmax masked " + describe(scores, tuningText(tuning)));
            const at::Tensor scalar = at::randn({}, cuda(type));
            expectClose(runProvider(settings, handle, softmaxArgs(scalar, 0)), at::softmax(scalar, 0), tol,
                        "softmax 0-d " + describe(scalar, tuningText(tuning)));
        }
}

TEST(CudaProviders, GeluMatchesAten)
{
    REQUIRE_CUDA();
    at::manual_seed(4);
    const auto handle = op("aten::gelu");
    for (const nlohmann::json& tuning : kUnaryTunings)
        for (at::ScalarType type : kTypes) {
            const Tolerance tol = toleranceFor(type);
            for (const at::Tensor& x : elementwiseInputs(type)) {
                for (const std::string approximate : {"none", "tanh"}) {
                    nlohmann::json settings = tuned("CudaGeluProvider", tuning);
                    settings["approximate"] = approximate;
                    expectClose(runProvider(settings, handle, geluArgs(x, approximate)), at::gelu(x, approximate), tol,
                                "gelu " + approximate + " " + describe(x, tuningText(tuning)));
                }
                // The setting decides the formula, whatever the call asks for.
                nlohmann::json tanh = tuned("CudaGeluProvider", tuning);
                tanh["approximate"] = "tanh";
                expectClose(runProvider(tanh, handle, geluArgs(x, "none")), at::gelu(x, "tanh"), tol,
                            "gelu tanh setting on an exact call " + describe(x, tuningText(tuning)));
            }
        }
}

TEST(CudaProviders, SiluMatchesAten)
{
    REQUIRE_CUDA();
    at::manual_seed(5);
    const auto handle = op("aten::silu");
    for (const nlohmann::json& tuning : kUnaryTunings)
        for (at::ScalarType type : kTypes) {
            const nlohmann::json settings = tuned("CudaSiluProvider", tuning);
            const Tolerance tol = toleranceFor(type);
            for (const at::Tensor& x : elementwiseInputs(type))
                expectClose(runProvider(settings, handle, siluArgs(x)), at::silu(x), tol,
                            "silu " + describe(x, tuningText(tuning)));
        }
}

// A tuned provider's kernel is compiled at run time and kept in the kernel cache folder; a second process (here:
// the same variant asked again) does not compile again.
TEST(CudaProviders, TunedVariantsAreCompiledOnFirstUseIntoTheKernelCache)
{
    REQUIRE_CUDA();
    test::TempDir dir;
    setenv("KFORGE_KERNEL_CACHE", dir.path("kernels").c_str(), 1);
    const auto handle = op("aten::softmax", "int");
    // A variant no other test uses, so this process has not loaded it yet.
    const nlohmann::json settings = tuned("CudaSoftmaxProvider", {{"block_threads", 96}, {"vector_width", 1}});
    const at::Tensor x = at::randn({33, 77}, cuda(at::kFloat));
    expectClose(runProvider(settings, handle, softmaxArgs(x, -1)), at::softmax(x, -1), toleranceFor(at::kFloat),
                "softmax " + settings.dump());
    unsetenv("KFORGE_KERNEL_CACHE");
    size_t entries = 0;
    for (const auto& file : std::filesystem::directory_iterator(dir.path("kernels")))
        entries += file.path().extension() == ".kernel";
    EXPECT_EQ(entries, 1u) << "the softmax variant was not cached in " << dir.path("kernels");
}

#ifdef KFORGE_TEST_HAS_CUDA_HEADERS
// The kernels run on the current stream: work queued on a side stream is ordered with them.
TEST(CudaProviders, RunOnTheCurrentStream)
{
    REQUIRE_CUDA();
    const auto handle = op("aten::softmax", "int");
    const at::Tensor x = at::randn({64, 1024}, cuda(at::kFloat));
    const at::Tensor want = at::softmax(x, -1);
    c10::cuda::getCurrentCUDAStream().synchronize(); // x and want are ready for the side stream
    auto side = c10::cuda::getStreamFromPool();
    at::Tensor got;
    {
        c10::cuda::CUDAStreamGuard guard(side);
        got = runProvider({{"type", "CudaSoftmaxProvider"}}, handle, softmaxArgs(x, -1));
        got = got * 1.0; // more work on the side stream, after the kernel
    }
    side.synchronize();
    expectClose(got, want, toleranceFor(at::kFloat), "softmax on a side stream");
}
#endif

// ---- On a CUDA device: through the runtime --------------------------------------------------------------------

// tiny-gpt on CUDA with our layer_norm, gelu and softmax in effect everywhere: the output matches the
// original's, and every provider served calls.
TEST(CudaProviders, TinyGptEndToEnd)
{
    REQUIRE_CUDA();
    auto session = ModelSession::open("builtin:tiny-gpt");
    session->setDevice("cuda");
    const auto baseline = session->forward();
    ASSERT_FALSE(baseline.empty());

    PlanEntry gelu = entry("", "gelu", "CudaGeluProvider");
    gelu.provider["approximate"] = "none";
    KernelProviderRuntime runtime(*session, planOf({entry("", "layer_norm", "CudaLayerNormProvider"), gelu,
                                                    entry("", "softmax", "CudaSoftmaxProvider")}));
    auto stream = EventStream::attach(65536);
    std::vector<TensorDigest> out;
    {
        auto applied = runtime.applied();
        out = session->forward();
    }
    ASSERT_EQ(out.size(), baseline.size());
    for (size_t i = 0; i < out.size(); ++i) {
        EXPECT_EQ(out[i].shape, baseline[i].shape);
        EXPECT_EQ(out[i].dtype, baseline[i].dtype);
        EXPECT_NE(out[i].device.find("cuda"), std::string::npos) << out[i].device;
        EXPECT_NEAR(out[i].sum, baseline[i].sum, 1e-3 * std::max(1.0, std::abs(baseline[i].sum)));
        EXPECT_NEAR(out[i].maxAbs, baseline[i].maxAbs, 1e-4 * std::max(1.0, baseline[i].maxAbs));
    }
    std::vector<Event> log;
    stream->drain(log);
    for (const std::string provider :
         {"CudaLayerNormProvider", "CudaGeluProvider(approximate=none)", "CudaSoftmaxProvider"}) {
        EXPECT_TRUE(
            std::any_of(log.begin(), log.end(),
                        [&](const Event& e) { return e.kind == EventKind::ProviderCall && e.provider == provider; }))
            << provider << " served no call";
    }
    // Deactivated: the originals again.
    const auto after = session->forward();
    EXPECT_NEAR(after[0].sum, baseline[0].sum, 1e-5 * std::max(1.0, std::abs(baseline[0].sum)));
}

// rms_norm and silu (which tiny-gpt does not call) in a scoped module, in bfloat16.
TEST(CudaProviders, ScopedRmsNormAndSiluEndToEnd)
{
    REQUIRE_CUDA();
    TempDir dir;
    saveModule(twoLevelModel("torch.rms_norm(torch.silu(x), [64], None, 1e-06)"), dir.path("m.pt"));
    auto session = ModelSession::open(dir.path("m.pt").string());
    session->setInputSpecs({"bfloat16[8,64]"});
    session->setDevice("cuda");
    const auto baseline = session->forward();
    KernelProviderRuntime runtime(
        *session, planOf({entry("act", "rms_norm", "CudaRmsNormProvider"), entry("act", "silu", "CudaSiluProvider")}));
    auto stream = EventStream::attach(4096);
    std::vector<TensorDigest> out;
    {
        auto applied = runtime.applied();
        out = session->forward();
    }
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype, baseline[0].dtype);
    EXPECT_NEAR(out[0].sum, baseline[0].sum, 0.05 * std::max(1.0, std::abs(baseline[0].sum)));
    EXPECT_NEAR(out[0].maxAbs, baseline[0].maxAbs, 0.02 * std::max(1.0, baseline[0].maxAbs));
    std::vector<Event> log;
    stream->drain(log);
    for (const std::string provider : {"CudaRmsNormProvider", "CudaSiluProvider"})
        EXPECT_TRUE(
            std::any_of(log.begin(), log.end(),
                        [&](const Event& e) { return e.kind == EventKind::ProviderCall && e.provider == provider; }))
            << provider << " served no call";
}

// The kernels are capturable: a CUDA graph of tiny-gpt with them replays the eager result.
TEST(CudaProviders, CapturedIntoACudaGraph)
{
    REQUIRE_CUDA();
    auto session = ModelSession::open("builtin:tiny-gpt");
    session->setDevice("cuda");
    const auto baseline = session->forward();
    KernelProviderRuntime runtime(
        *session, planOf({entry("", "layer_norm", "CudaLayerNormProvider"), entry("", "gelu", "CudaGeluProvider"),
                          entry("", "softmax", "CudaSoftmaxProvider")}));
    runtime.activate();
    const CaptureRecord record = session->capture();
    ASSERT_TRUE(record.ok) << record.error;
    runtime.deactivate();
    const auto replayed = session->replay(record.id);
    ASSERT_EQ(replayed.size(), baseline.size());
    EXPECT_NEAR(replayed[0].sum, baseline[0].sum, 1e-3 * std::max(1.0, std::abs(baseline[0].sum)));
    EXPECT_NEAR(replayed[0].maxAbs, baseline[0].maxAbs, 1e-4 * std::max(1.0, baseline[0].maxAbs));
}
