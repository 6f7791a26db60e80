// SPDX-License-Identifier: Apache-2.0
// The Cpu*Provider family (engine/src/providers/cpu): each provider, called through the boxed path exactly as
// the runtime calls it, against the ATen op it replaces; for every kernel set (DEFAULT / AVX2 / AVX512) this
// CPU can run; eligibility, settings, run-time fallbacks, and an end-to-end forward through the runtime.
#include <kforge/error.h>
#include <kforge/events.h>
#include <kforge/model_session.h>
#include <kforge/provider_sdk.h>
#include <kforge/runtime.h>

#include "providers/cpu/cpu_kernels.h"
#include "providers/cpu/cpu_providers.h"
#include "test_helpers.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <thread>

using namespace kforge;
using namespace kforge::test;
namespace cpu = kforge::providers::cpu;

namespace {

constexpr double kTolF32 = 1e-5;
constexpr double kTolBf16 = 2e-2;

double tolFor(at::ScalarType t) { return t == at::kBFloat16 ? kTolBf16 : kTolF32; }

std::unique_ptr<KernelProvider> create(const nlohmann::json& settings)
{
    return ProviderRegistry::instance().create(settings);
}

c10::OperatorHandle opOf(const char* name, const char* overload)
{
    return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

// The provider through the boxed path: the op's arguments on a stack, one output left on it, computed by the
// provider itself (a declined call would compare ATen against ATen).
at::Tensor callBoxed(KernelProvider& provider, const c10::OperatorHandle& op, torch::jit::Stack stack)
{
    const CallResult result = provider.call(op, stack);
    EXPECT_TRUE(result.wasServed()) << "declined: " << result.declined;
    EXPECT_EQ(stack.size(), 1u);
    return stack.back().toTensor();
}

// The largest |provider - ATen| seen per output dtype in the current test (printed at its end).
std::map<std::string, double> gWorstDiff;

// Same dtype and shape; values within tol (absolute and relative), NaN where the reference has NaN.
void expectClose(const at::Tensor& got, const at::Tensor& want, double tol, const std::string& what)
{
    ASSERT_EQ(got.scalar_type(), want.scalar_type()) << what;
    ASSERT_EQ(got.sizes(), want.sizes()) << what;
    if (want.numel() == 0)
        return;
    const at::Tensor g = got.to(at::kFloat), w = want.to(at::kFloat);
    const double maxDiff = at::nan_to_num((g - w).abs(), 0.0).max().item<double>();
    double& worst = gWorstDiff[c10::toString(want.scalar_type())];
    worst = std::max(worst, maxDiff);
    EXPECT_TRUE(at::allclose(g, w, tol, tol, /*equal_nan=*/true)) << what << ": max |diff| " << maxDiff;
}

std::string describe(const at::Tensor& t)
{
    std::string s = std::string(c10::toString(t.scalar_type())) + "[";
    for (int64_t i = 0; i < t.dim(); ++i)
        s += (i ? "," : "") + std::to_string(t.size(i));
    s += "]";
    if (!t.is_contiguous())
        s += " strides(" + [&] {
            std::string st;
            for (int64_t i = 0; i < t.dim(); ++i)
                st += (i ? "," : "") + std::to_string(t.stride(i));
            return st;
        }() + ")";
    return s;
}

// Float test inputs of many layouts: model-like, tiny, empty, last dims 1 / 17 / 1000 (not multiples of any
// vector width), and non-contiguous (transposed: dense; sliced with gaps: not dense).
std::vector<at::Tensor> inputs(at::ScalarType dtype)
{
    at::manual_seed(1234);
    auto r = [&](at::IntArrayRef shape) { return (at::randn(shape) * 2.0 + 0.3).to(dtype); };
    return {
        r({4, 64, 96}),
        r({3, 7}),
        r({1, 1}),
        r({2, 0, 5}),
        r({5, 1}),
        r({4, 17}),
        r({2, 1000}),
        r({6, 33}),
        r({2, 3, 4, 5}),
        r({0, 8}),
        r({7, 3}).t(),                    // [3, 7], transposed (dense, not contiguous)
        r({6, 40}).slice(1, 0, 40, 2),    // [6, 20], every other column (not dense)
        r({4, 32}).slice(1, 0, 17),       // [4, 17], row stride 32
        r({8, 5, 24}).permute({1, 0, 2}), // [5, 8, 24]
    };
}

// Runs `body` once per kernel set this CPU can run, with that set forced; restores automatic choice.
template <typename F> void forEachIsa(F body)
{
    for (cpu::Isa isa : cpu::availableIsas()) {
        cpu::setIsaOverride(isa);
        SCOPED_TRACE(std::string("kernels ") + cpu::kernelsFor(isa).name);
        body();
    }
    cpu::resetIsaOverride();
}

class CpuProviders : public ::testing::Test {
protected:
    void SetUp() override { gWorstDiff.clear(); }
    void TearDown() override
    {
        cpu::resetIsaOverride();
        for (const auto& [dtype, diff] : gWorstDiff)
            std::printf("[ info ] largest |provider - ATen| in %s outputs: %.3g\n", dtype.c_str(), diff);
    }
};

} // namespace

// ---------------------------------------------------------------------------------------------------------
// Numerics against ATen

TEST_F(CpuProviders, LayerNormMatchesAten)
{
    const auto op = opOf("aten::layer_norm", "");
    auto provider = create({{"type", "CpuFusedLayerNormProvider"}});
    forEachIsa([&] {
        for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
            for (const at::Tensor& x : inputs(dtype)) {
                if (x.dim() == 0)
                    continue;
                for (int64_t k = 1; k <= std::min<int64_t>(2, x.dim()); ++k) {
                    const std::vector<int64_t> shape(x.sizes().end() - k, x.sizes().end());
                    for (int params = 0; params < 4; ++params) {
                        // params: 0 none, 1 weight, 2 bias, 3 both; bfloat16 also with float32 parameters.
                        for (at::ScalarType pdtype : {dtype, at::kFloat}) {
                            if (pdtype != dtype && params == 0)
                                continue;
                            std::optional<at::Tensor> w, b;
                            if (params & 1)
                                w = (at::randn(shape) * 0.5 + 1.0).to(pdtype);
                            if (params & 2)
                                b = (at::randn(shape) * 0.5).to(pdtype);
                            const double eps = params == 3 ? 1e-6 : 1e-5;
                            const at::Tensor got = callBoxed(*provider, op, {x, shape, w, b, eps, true});
                            const at::Tensor want = at::layer_norm(x, shape, w, b, eps);
                            expectClose(got, want, tolFor(dtype),
                                        "layer_norm " + describe(x) + " over " + std::to_string(k) + " dims, params " +
                                            std::to_string(params) + " in " + c10::toString(pdtype));
                        }
                    }
                }
            }
        }
    });
}

TEST_F(CpuProviders, LayerNormOfConstantRowsAndLargeOffsets)
{
    // Welford keeps the variance of rows with a large mean (a naive sum-of-squares loses it) and gives 0
    // variance for constant rows.
    const auto op = opOf("aten::layer_norm", "");
    auto provider = create({{"type", "CpuFusedLayerNormProvider"}});
    at::manual_seed(7);
    const at::Tensor offset = at::randn({16, 768}) + 1000.0;
    const at::Tensor constant = at::full({3, 100}, 2.5);
    forEachIsa([&] {
        for (const at::Tensor& x : {offset, constant}) {
            const std::vector<int64_t> shape{x.size(1)};
            const at::Tensor got = callBoxed(*provider, op, {x, shape, c10::IValue(), c10::IValue(), 1e-5, true});
            // 1000 + N(0,1) in float32 has ~6e-5 resolution, so allow 1e-3 here.
            expectClose(got, at::layer_norm(x, shape), 1e-3, "layer_norm " + describe(x));
        }
    });
}

TEST_F(CpuProviders, LayerNormIsAsAccurateAsAten)
{
    // Against a float64 reference: the provider's float32 error is not worse than ATen's own (rows with a
    // large common offset, where a careless mean/variance loses digits).
    const auto op = opOf("aten::layer_norm", "");
    auto provider = create({{"type", "CpuFusedLayerNormProvider"}});
    at::manual_seed(11);
    for (double offset : {0.0, 100.0, 1000.0}) {
        const at::Tensor x = at::randn({64, 768}) + offset;
        const std::vector<int64_t> shape{768};
        const at::Tensor exact = at::layer_norm(x.to(at::kDouble), shape);
        const at::Tensor got = callBoxed(*provider, op, {x, shape, c10::IValue(), c10::IValue(), 1e-5, true});
        const double ours = (got.to(at::kDouble) - exact).abs().max().item<double>();
        const double aten = (at::layer_norm(x, shape).to(at::kDouble) - exact).abs().max().item<double>();
        std::printf("[ info ] offset %g: max error vs float64, provider %.3g, ATen %.3g\n", offset, ours, aten);
        EXPECT_LE(ours, 2.0 * aten + 1e-6) << "offset " << offset;
    }
}

TEST_F(CpuProviders, RmsNormMatchesAten)
{
    const auto op = opOf("aten::rms_norm", "");
    auto provider = create({{"type", "CpuRmsNormProvider"}});
    forEachIsa([&] {
        for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
            for (const at::Tensor& x : inputs(dtype)) {
                if (x.dim() == 0)
                    continue;
                for (int64_t k = 1; k <= std::min<int64_t>(2, x.dim()); ++k) {
                    const std::vector<int64_t> shape(x.sizes().end() - k, x.sizes().end());
                    for (int variant = 0; variant < 4; ++variant) {
                        // variant bit 0: weight; bit 1: explicit eps (else None = float32 epsilon).
                        std::optional<at::Tensor> w;
                        if (variant & 1)
                            w = (at::randn(shape) * 0.5 + 1.0).to(dtype);
                        std::optional<double> eps;
                        if (variant & 2)
                            eps = 1e-6;
                        const at::Tensor got = callBoxed(*provider, op, {x, shape, w, eps});
                        const at::Tensor want = at::rms_norm(x, shape, w, eps);
                        expectClose(got, want, tolFor(dtype),
                                    "rms_norm " + describe(x) + " over " + std::to_string(k) + " dims, variant " +
                                        std::to_string(variant));
                    }
                }
            }
        }
    });
}

TEST_F(CpuProviders, RmsNormDefaultEpsIsFloatEpsilon)
{
    // A row of tiny values: the result depends visibly on eps. None must mean float32's epsilon (ATen's
    // rms_norm composite uses the op-math type's epsilon, float32 for bfloat16 too).
    const auto op = opOf("aten::rms_norm", "");
    auto provider = create({{"type", "CpuRmsNormProvider"}});
    for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
        const at::Tensor x = at::full({2, 64}, 3e-4).to(dtype);
        const std::vector<int64_t> shape{64};
        const at::Tensor got = callBoxed(*provider, op, {x, shape, c10::IValue(), c10::IValue()});
        const at::Tensor want = at::rms_norm(x, shape, std::nullopt, std::nullopt);
        expectClose(got, want, tolFor(dtype), "rms_norm eps=None " + describe(x));
        const at::Tensor withEps = at::rms_norm(x, shape, std::nullopt, 1e-3);
        EXPECT_FALSE(at::allclose(got.to(at::kFloat), withEps.to(at::kFloat), 1e-2, 1e-2));
    }
}

TEST_F(CpuProviders, SoftmaxMatchesAtenOverEveryDim)
{
    const auto op = opOf("aten::softmax", "int");
    auto provider = create({{"type", "CpuOnlineSoftmaxProvider"}});
    forEachIsa([&] {
        for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
            std::vector<at::Tensor> xs = inputs(dtype);
            xs.push_back((at::randn({3, 300}) * 40.0).to(dtype));  // large logits: max subtraction matters
            xs.push_back((at::randn({2, 2500}) * 40.0).to(dtype)); // rows past the short-row kernel (1024)
            xs.push_back(at::tensor(1.5).to(dtype));               // 0-dim
            for (const at::Tensor& x : xs) {
                const int64_t ndim = std::max<int64_t>(x.dim(), 1);
                for (int64_t dim = -ndim; dim < ndim; ++dim) {
                    std::vector<std::optional<at::ScalarType>> dtypes{std::nullopt, dtype};
                    if (dtype == at::kBFloat16)
                        dtypes.push_back(at::kFloat);
                    for (const auto& outDtype : dtypes) {
                        const at::Tensor got = callBoxed(*provider, op, {x, dim, outDtype});
                        const at::Tensor want = at::softmax(x, dim, outDtype);
                        expectClose(got, want, outDtype == at::kFloat ? kTolF32 : tolFor(dtype),
                                    "softmax " + describe(x) + " dim " + std::to_string(dim) + " dtype " +
                                        (outDtype ? c10::toString(*outDtype) : "None"));
                    }
                }
            }
        }
    });
}

TEST_F(CpuProviders, SoftmaxWithMaskedPositions)
{
    // Attention-style masks: -inf entries (leading, trailing, scattered, and whole rows), along the last dim
    // and along a middle dim. Fully masked rows are NaN in ATen and here, as are rows holding NaN or +inf.
    const auto op = opOf("aten::softmax", "int");
    auto provider = create({{"type", "CpuOnlineSoftmaxProvider"}});
    at::manual_seed(99);
    at::Tensor x = at::randn({6, 4, 77});
    const float inf = std::numeric_limits<float>::infinity();
    x.index_put_({0, at::indexing::Slice(), at::indexing::Slice(0, 40)}, -inf);  // leading block masked
    x.index_put_({1, at::indexing::Slice(), at::indexing::Slice(50, 77)}, -inf); // trailing block masked
    x.index_put_({2}, at::where(at::rand({4, 77}) < 0.7, at::full({}, -inf), x[2]));
    x.index_put_({3, 0}, -inf);                                       // one fully masked row
    x.index_put_({4}, x[4] - 200.0);                                  // very negative but finite
    x.index_put_({5, 1, 3}, std::numeric_limits<float>::quiet_NaN()); // NaN and +inf make their rows NaN
    x.index_put_({5, 2, 60}, inf);
    // The same over rows long enough for the online (blocked) kernel: masked blocks, a masked row, NaN, +inf.
    at::Tensor longRows = at::randn({5, 1500});
    longRows.index_put_({0, at::indexing::Slice(0, 700)}, -inf);
    longRows.index_put_({1}, -inf);
    longRows.index_put_({2, 1200}, std::numeric_limits<float>::quiet_NaN());
    longRows.index_put_({3, 10}, inf);
    forEachIsa([&] {
        for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
            const at::Tensor xt = x.to(dtype);
            for (int64_t dim : {-1, 1, 0}) {
                const at::Tensor got = callBoxed(*provider, op, {xt, dim, c10::IValue()});
                expectClose(got, at::softmax(xt, dim), tolFor(dtype),
                            "masked softmax " + describe(xt) + " dim " + std::to_string(dim));
            }
            const at::Tensor lt = longRows.to(dtype);
            expectClose(callBoxed(*provider, op, {lt, int64_t{-1}, c10::IValue()}), at::softmax(lt, -1), tolFor(dtype),
                        "masked softmax " + describe(lt));
        }
    });
}

TEST_F(CpuProviders, GeluMatchesAtenBothForms)
{
    const auto op = opOf("aten::gelu", "");
    for (const char* form : {"none", "tanh"}) {
        auto provider = create({{"type", "CpuGeluProvider"}, {"approximate", form}});
        forEachIsa([&] {
            for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
                std::vector<at::Tensor> xs = inputs(dtype);
                xs.push_back(at::tensor(-0.7).to(dtype)); // 0-dim
                xs.push_back((at::randn({3, 1001}) * 6.0).to(dtype));
                for (const at::Tensor& x : xs) {
                    const at::Tensor got = callBoxed(*provider, op, {x, std::string(form)});
                    expectClose(got, at::gelu(x, form), tolFor(dtype), std::string("gelu ") + form + " " + describe(x));
                    if (x.is_non_overlapping_and_dense())
                        EXPECT_EQ(got.strides(), x.strides()) << "dense input computed in place of a copy";
                }
            }
        });
    }
}

// Exact GELU's erf is a piecewise polynomial (cpu_kernels_impl.h): within 2e-7 (1 + |x|) of GELU computed in double
// everywhere, through every piece boundary and past the last piece, on every ISA; NaN stays NaN.
TEST_F(CpuProviders, ExactGeluIsAccurateAcrossItsPieces)
{
    const auto op = opOf("aten::gelu", "");
    auto provider = create({{"type", "CpuGeluProvider"}});
    const at::Tensor x =
        at::cat({at::linspace(-12.0, 12.0, 480001), at::tensor({0.0f, -0.0f, 1e-30f, -1e-30f, 3e38f})});
    const at::Tensor xd = x.to(at::kDouble);
    const at::Tensor expected = xd * 0.5 * (1.0 + at::erf(xd * M_SQRT1_2));
    forEachIsa([&] {
        const at::Tensor got = callBoxed(*provider, op, {x, std::string("none")}).to(at::kDouble);
        const at::Tensor excess = (got - expected).abs() - 2e-7 * (1.0 + xd.abs()); // ~1.7 float ulps of x
        const auto worst = excess.argmax().item<int64_t>();
        EXPECT_LE(excess.max().item<double>(), 0.0)
            << "at x = " << x[worst].item<float>() << ": " << got[worst].item<double>() << " instead of "
            << expected[worst].item<double>();
        const at::Tensor nan = callBoxed(*provider, op, {at::full({20}, NAN), std::string("none")});
        EXPECT_TRUE(nan.isnan().all().item<bool>());
    });
}

TEST_F(CpuProviders, GeluComputesWhatTheCallAsksWhenItDiffersFromTheSetting)
{
    // A provider restored as tanh GELU that still receives an exact-GELU call (and the reverse) computes
    // the call's form: never the other GELU silently.
    const auto op = opOf("aten::gelu", "");
    const at::Tensor x = at::randn({4, 300}) * 3.0;
    ASSERT_FALSE(at::allclose(at::gelu(x, "none"), at::gelu(x, "tanh"), 1e-5, 1e-5));
    for (const auto& [setting, call] : {std::pair{"tanh", "none"}, std::pair{"none", "tanh"}}) {
        auto provider = create({{"type", "CpuGeluProvider"}, {"approximate", setting}});
        const at::Tensor got = callBoxed(*provider, op, {x, std::string(call)});
        expectClose(got, at::gelu(x, call), kTolF32, std::string("setting ") + setting + ", call " + call);
    }
}

TEST_F(CpuProviders, SiluMatchesAten)
{
    const auto op = opOf("aten::silu", "");
    auto provider = create({{"type", "CpuSiluProvider"}});
    forEachIsa([&] {
        for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
            std::vector<at::Tensor> xs = inputs(dtype);
            xs.push_back(at::tensor(2.25).to(dtype));
            xs.push_back((at::randn({2, 999}) * 30.0).to(dtype)); // saturating both ends
            for (const at::Tensor& x : xs) {
                const at::Tensor got = callBoxed(*provider, op, {x});
                expectClose(got, at::silu(x), tolFor(dtype), "silu " + describe(x));
            }
        }
    });
}

TEST_F(CpuProviders, ModelSizedShapes)
{
    // One model-sized case per provider ([8,128,768]-like activations, softmax over [2,12,128,128]), with the
    // automatically chosen kernels and the default thread count.
    at::manual_seed(5);
    const at::Tensor act = at::randn({4, 128, 768});
    const at::Tensor w = at::randn({768}) * 0.2 + 1.0, b = at::randn({768}) * 0.1;
    const at::Tensor scores = at::randn({2, 12, 128, 128}) * 3.0;
    const std::vector<int64_t> shape{768};
    for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
        const double tol = tolFor(dtype);
        const at::Tensor x = act.to(dtype), s = scores.to(dtype), wd = w.to(dtype), bd = b.to(dtype);
        auto ln = create({{"type", "CpuFusedLayerNormProvider"}});
        expectClose(callBoxed(*ln, opOf("aten::layer_norm", ""), {x, shape, wd, bd, 1e-5, true}),
                    at::layer_norm(x, shape, wd, bd), tol, "layer_norm " + describe(x));
        auto rms = create({{"type", "CpuRmsNormProvider"}});
        expectClose(callBoxed(*rms, opOf("aten::rms_norm", ""), {x, shape, wd, c10::IValue()}),
                    at::rms_norm(x, shape, wd), tol, "rms_norm " + describe(x));
        auto sm = create({{"type", "CpuOnlineSoftmaxProvider"}});
        expectClose(callBoxed(*sm, opOf("aten::softmax", "int"), {s, int64_t{-1}, c10::IValue()}), at::softmax(s, -1),
                    tol, "softmax " + describe(s));
        auto gelu = create({{"type", "CpuGeluProvider"}});
        expectClose(callBoxed(*gelu, opOf("aten::gelu", ""), {x, std::string("none")}), at::gelu(x), tol,
                    "gelu " + describe(x));
        auto silu = create({{"type", "CpuSiluProvider"}});
        expectClose(callBoxed(*silu, opOf("aten::silu", ""), {x}), at::silu(x), tol, "silu " + describe(x));
    }
}

// ---------------------------------------------------------------------------------------------------------
// Eligibility (prepare) and run-time fallbacks

namespace {

struct Case {
    std::string type;
    nlohmann::json settings;
    std::function<torch::jit::Stack(const at::Tensor&)> stackFor; // the op's arguments for one input
};

std::vector<Case> cases()
{
    return {
        {"CpuFusedLayerNormProvider",
         {{"type", "CpuFusedLayerNormProvider"}},
         [](const at::Tensor& x) {
             return torch::jit::Stack{x, std::vector<int64_t>{x.size(-1)}, c10::IValue(), c10::IValue(), 1e-5, true};
         }},
        {"CpuRmsNormProvider",
         {{"type", "CpuRmsNormProvider"}},
         [](const at::Tensor& x) {
             return torch::jit::Stack{x, std::vector<int64_t>{x.size(-1)}, c10::IValue(), c10::IValue()};
         }},
        {"CpuOnlineSoftmaxProvider",
         {{"type", "CpuOnlineSoftmaxProvider"}},
         [](const at::Tensor& x) {
             return torch::jit::Stack{x, int64_t{-1}, c10::IValue()};
         }},
        {"CpuGeluProvider",
         {{"type", "CpuGeluProvider"}},
         [](const at::Tensor& x) {
             return torch::jit::Stack{x, std::string("none")};
         }},
        {"CpuSiluProvider", {{"type", "CpuSiluProvider"}}, [](const at::Tensor& x) { return torch::jit::Stack{x}; }},
    };
}

std::unique_ptr<KernelProvider> fresh(const std::string& type)
{
    return ProviderRegistry::instance().find(type)->create(); // INIT: not restored, not prepared
}

} // namespace

TEST_F(CpuProviders, PrepareAcceptsFloat32AndBfloat16Only)
{
    for (const Case& c : cases()) {
        SCOPED_TRACE(c.type);
        for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
            auto p = fresh(c.type);
            EXPECT_TRUE(p->prepare({c.stackFor(at::randn({2, 8}).to(dtype))})) << c10::toString(dtype);
            EXPECT_EQ(p->state(), ProviderState::Ready);
        }
        for (at::ScalarType dtype : {at::kDouble, at::kHalf, at::kInt, at::kLong}) {
            auto p = fresh(c.type);
            const at::Tensor x =
                dtype == at::kInt || dtype == at::kLong ? at::ones({2, 8}, dtype) : at::randn({2, 8}).to(dtype);
            EXPECT_FALSE(p->prepare({c.stackFor(x)})) << c10::toString(dtype);
            EXPECT_EQ(p->state(), ProviderState::Init);
        }
        // One bad sample among good ones makes the whole prepare false.
        auto p = fresh(c.type);
        EXPECT_FALSE(p->prepare({c.stackFor(at::randn({2, 8})), c.stackFor(at::randn({2, 8}).to(at::kDouble))}));
        EXPECT_EQ(p->devices(), std::vector<std::string>{"cpu"});
    }
}

TEST_F(CpuProviders, PrepareRefusesCudaTensors)
{
    if (!at::globalContext().hasCUDA())
        GTEST_SKIP() << "no CUDA device: the CUDA half of eligibility is checked on a GPU machine";
    for (const Case& c : cases()) {
        auto p = fresh(c.type);
        EXPECT_FALSE(p->prepare({c.stackFor(at::randn({2, 8}, at::device(at::kCUDA)))})) << c.type;
    }
}

TEST_F(CpuProviders, PrepareChecksTheOpsOtherArguments)
{
    const at::Tensor x = at::randn({4, 16});
    const at::Tensor xb = x.to(at::kBFloat16);
    // gelu: the call's form must be the provider's.
    EXPECT_TRUE(fresh("CpuGeluProvider")->prepare({{x, std::string("none")}}));
    EXPECT_FALSE(fresh("CpuGeluProvider")->prepare({{x, std::string("tanh")}}));
    EXPECT_TRUE(create({{"type", "CpuGeluProvider"}, {"approximate", "tanh"}})->prepare({{x, std::string("tanh")}}));
    // softmax dtype: None, same, or float32 from bfloat16.
    auto sm = [&](const at::Tensor& t, std::optional<at::ScalarType> d) {
        return fresh("CpuOnlineSoftmaxProvider")->prepare({{t, int64_t{1}, d}});
    };
    EXPECT_TRUE(sm(x, at::kFloat));
    EXPECT_TRUE(sm(xb, at::kFloat));
    EXPECT_TRUE(sm(xb, at::kBFloat16));
    EXPECT_FALSE(sm(x, at::kDouble));
    EXPECT_FALSE(sm(x, at::kBFloat16));
    EXPECT_FALSE(fresh("CpuOnlineSoftmaxProvider")->prepare({{x, int64_t{2}, c10::IValue()}})); // bad dim
    // norms: normalized_shape must be the trailing dims; parameters of that shape, in the dtype or float32.
    auto ln = [&](const at::Tensor& t, std::vector<int64_t> shape, c10::IValue w) {
        return fresh("CpuFusedLayerNormProvider")->prepare({{t, shape, w, c10::IValue(), 1e-5, true}});
    };
    EXPECT_TRUE(ln(x, {4, 16}, c10::IValue()));
    EXPECT_FALSE(ln(x, {}, c10::IValue())); // ATen requires at least one normalized dim
    EXPECT_FALSE(ln(x, {4}, c10::IValue()));
    EXPECT_FALSE(ln(x, {8}, c10::IValue()));
    EXPECT_TRUE(ln(xb, {16}, at::ones({16})));
    EXPECT_FALSE(ln(x, {16}, at::ones({16}, at::kDouble)));
    EXPECT_FALSE(ln(x, {16}, at::ones({8})));
    EXPECT_FALSE(fresh("CpuRmsNormProvider")->prepare({{x, std::vector<int64_t>{16}, at::ones({15}), 1e-6}}));
}

TEST_F(CpuProviders, CallBeforePrepareThrows)
{
    auto p = fresh("CpuSiluProvider");
    torch::jit::Stack stack{at::randn({3})};
    EXPECT_THROW(p->call(opOf("aten::silu", ""), stack), Error);
}

TEST_F(CpuProviders, UnsupportedCallsAreDeclinedWithTheReasonAndTheStackUntouched)
{
    // A restored provider skips prepare; a call it cannot compute is declined (the runtime then runs the
    // original and credits it, not the provider), with its arguments left as they were.
    const auto silu = opOf("aten::silu", "");
    auto p = create({{"type", "CpuSiluProvider"}});
    const at::Tensor xd = at::randn({5, 9}, at::kDouble);
    torch::jit::Stack stack{xd};
    const CallResult result = p->call(silu, stack);
    ASSERT_FALSE(result.wasServed());
    EXPECT_NE(std::string(result.declined).find("dtype"), std::string::npos) << result.declined;
    ASSERT_EQ(stack.size(), 1u);
    EXPECT_TRUE(stack[0].toTensor().is_same(xd));

    auto ln = create({{"type", "CpuFusedLayerNormProvider"}});
    torch::jit::Stack bad{at::randn({4, 16}), std::vector<int64_t>{8}, c10::IValue(), c10::IValue(), 1e-5, true};
    EXPECT_FALSE(ln->call(opOf("aten::layer_norm", ""), bad).wasServed()); // the original raises ATen's error
    EXPECT_EQ(bad.size(), 6u);
}

TEST_F(CpuProviders, CallsThatNeedAutogradAreDeclined)
{
    const auto op = opOf("aten::layer_norm", "");
    auto p = create({{"type", "CpuFusedLayerNormProvider"}});
    const at::Tensor x = at::randn({3, 10});
    const at::Tensor w = at::ones({10}).requires_grad_();
    {
        at::AutoGradMode grad(true);
        torch::jit::Stack stack{x, std::vector<int64_t>{10}, w, c10::IValue(), 1e-5, true};
        const CallResult result = p->call(op, stack);
        ASSERT_FALSE(result.wasServed());
        EXPECT_NE(std::string(result.declined).find("autograd"), std::string::npos) << result.declined;
    }
    {
        at::NoGradGuard noGrad; // inference (what ModelSession::forward does): ours
        const at::Tensor y = callBoxed(*p, op, {x, std::vector<int64_t>{10}, w, c10::IValue(), 1e-5, true});
        EXPECT_FALSE(y.requires_grad());
    }
}

// ---------------------------------------------------------------------------------------------------------
// Registry and settings

TEST_F(CpuProviders, RegisteredWithDescriptionAndSchema)
{
    const std::map<std::string, Function> expected{{"CpuFusedLayerNormProvider", Function::LayerNorm},
                                                   {"CpuRmsNormProvider", Function::RmsNorm},
                                                   {"CpuOnlineSoftmaxProvider", Function::Softmax},
                                                   {"CpuGeluProvider", Function::Gelu},
                                                   {"CpuSiluProvider", Function::Silu}};
    for (const auto& [type, function] : expected) {
        const ProviderTypeInfo* info = ProviderRegistry::instance().find(type);
        ASSERT_NE(info, nullptr) << type;
        EXPECT_EQ(info->function, function);
        EXPECT_EQ(info->devices, std::vector<std::string>{"cpu"});
        EXPECT_FALSE(info->description.empty());
        EXPECT_TRUE(info->settingsSchema.is_object());
        // Every CPU provider takes the tuning settings; only gelu has one of its own, and only it enumerates values
        // (make_plan tries enumerated values as plain variants; the tuning ones are CpuAutotuner's to search).
        std::vector<std::string> keys;
        for (const auto& [key, schema] : info->settingsSchema.items()) {
            keys.push_back(key);
            EXPECT_EQ(schema.contains("enum"), key == "approximate") << type << " " << key;
        }
        std::vector<std::string> want{"grain_elements", "isa", "max_threads"};
        if (type == "CpuGeluProvider")
            want.insert(want.begin(), "approximate");
        EXPECT_EQ(keys, want) << type;
    }
    const auto& gelu = *ProviderRegistry::instance().find("CpuGeluProvider");
    EXPECT_EQ(gelu.settingsSchema["approximate"]["enum"], nlohmann::json({"none", "tanh"}));
    EXPECT_EQ(gelu.settingsSchema["approximate"]["default"], "none");
    EXPECT_NE(gelu.description.find("APPROXIMATION"), std::string::npos) << "tanh marked as approximate";
}

TEST_F(CpuProviders, SettingsRoundTrip)
{
    for (const nlohmann::json& settings :
         {nlohmann::json{{"type", "CpuFusedLayerNormProvider"}}, nlohmann::json{{"type", "CpuRmsNormProvider"}},
          nlohmann::json{{"type", "CpuOnlineSoftmaxProvider"}}, nlohmann::json{{"type", "CpuSiluProvider"}},
          nlohmann::json{{"type", "CpuGeluProvider"}, {"approximate", "none"}},
          nlohmann::json{{"type", "CpuGeluProvider"}, {"approximate", "tanh"}}}) {
        auto p = create(settings);
        EXPECT_EQ(p->state(), ProviderState::Ready);
        const nlohmann::json saved = p->settings();
        EXPECT_EQ(saved, settings);
        auto q = create(saved);
        EXPECT_EQ(q->settings(), saved);
        EXPECT_EQ(q->displayName(), p->displayName());
    }
    EXPECT_EQ(create({{"type", "CpuGeluProvider"}})->settings()["approximate"], "none"); // the default
    EXPECT_EQ(create({{"type", "CpuGeluProvider"}, {"approximate", "tanh"}})->displayName(),
              "CpuGeluProvider(approximate=tanh)");
    EXPECT_EQ(create({{"type", "CpuGeluProvider"}})->displayName(), "CpuGeluProvider(approximate=none)");
    EXPECT_EQ(create({{"type", "CpuSiluProvider"}})->displayName(), "CpuSiluProvider");
}

TEST_F(CpuProviders, UnknownOrBadSettingsThrowNamingProviderAndKey)
{
    for (const char* type : {"CpuFusedLayerNormProvider", "CpuRmsNormProvider", "CpuOnlineSoftmaxProvider",
                             "CpuGeluProvider", "CpuSiluProvider"}) {
        try {
            create({{"type", type}, {"blockSize", 64}});
            ADD_FAILURE() << type << " accepted an unknown setting";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(type), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("blockSize"), std::string::npos) << e.what();
        }
    }
    for (const nlohmann::json& bad : {nlohmann::json("fast"), nlohmann::json(true)}) {
        try {
            create({{"type", "CpuGeluProvider"}, {"approximate", bad}});
            ADD_FAILURE() << "approximate=" << bad.dump() << " accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("CpuGeluProvider"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("approximate"), std::string::npos) << e.what();
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Kernel sets and threads

TEST_F(CpuProviders, KernelSetsAndParallelism)
{
    const auto isas = cpu::availableIsas();
    ASSERT_FALSE(isas.empty());
    EXPECT_EQ(isas.front(), cpu::Isa::Default);
    const cpu::KernelTable& chosen = cpu::kernels();
    std::printf("[ info ] kernel sets on this CPU:");
    for (cpu::Isa isa : isas)
        std::printf(" %s(%d lanes)", cpu::kernelsFor(isa).name, cpu::kernelsFor(isa).floatLanes);
    std::printf("; providers use %s; ATen uses %s; intra-op threads %d, parallel: %s\n", chosen.name,
                at::get_cpu_capability().c_str(), at::get_num_threads(), cpu::parallelForIsParallel() ? "yes" : "no");
    EXPECT_EQ(std::string(chosen.name) == "AVX512" || std::string(chosen.name) == "AVX2" ||
                  std::string(chosen.name) == "DEFAULT",
              true);

    // parallelFor covers the range exactly once, and uses more than one thread when ATen has more than one.
    std::mutex mutex;
    std::set<std::thread::id> threads;
    std::vector<int> hits(10000, 0);
    cpu::parallelFor(0, 10000, 16, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
            ++hits[size_t(i)];
        std::lock_guard lock(mutex);
        threads.insert(std::this_thread::get_id());
    });
    EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), 10000);
    if (at::get_num_threads() > 1) {
        EXPECT_TRUE(cpu::parallelForIsParallel());
        EXPECT_GT(threads.size(), 1u);
    }
    // Serial below the grain, and exceptions come back to the caller.
    threads.clear();
    cpu::parallelFor(0, 8, 16, [&](int64_t, int64_t) { threads.insert(std::this_thread::get_id()); });
    EXPECT_EQ(threads.size(), 1u);
    EXPECT_THROW(cpu::parallelFor(0, 10000, 16,
                                  [&](int64_t b, int64_t) {
                                      if (b == 0)
                                          throw std::runtime_error("boom");
                                  }),
                 std::runtime_error);
}

// ---------------------------------------------------------------------------------------------------------
// End to end through the runtime

TEST_F(CpuProviders, TinyGptThroughTheRuntimeMatchesBaseline)
{
    auto session = ModelSession::open("builtin:tiny-gpt");
    const std::vector<TensorDigest> baseline = session->forward();
    KernelProviderRuntime runtime(
        *session, planOf({entry("", "layer_norm", "CpuFusedLayerNormProvider"), entry("", "gelu", "CpuGeluProvider"),
                          entry("", "softmax", "CpuOnlineSoftmaxProvider")}));
    std::map<std::string, int> providerCalls, originalCalls;
    std::vector<TensorDigest> withProviders;
    {
        auto stream = EventStream::attach();
        runtime.activate();
        withProviders = session->forward();
        runtime.deactivate();
        std::vector<Event> events;
        stream->drain(events);
        for (const Event& e : events) {
            if (e.kind == EventKind::ProviderCall)
                ++providerCalls[e.function + " by " + e.provider];
            else if (e.kind == EventKind::OriginalCall)
                ++originalCalls[e.function];
        }
    }
    EXPECT_GT(providerCalls["layer_norm by CpuFusedLayerNormProvider"], 0);
    EXPECT_GT(providerCalls["gelu by CpuGeluProvider(approximate=none)"], 0);
    EXPECT_GT(providerCalls["softmax by CpuOnlineSoftmaxProvider"], 0);
    for (const auto& [what, n] : providerCalls)
        std::printf("[ info ] %s x%d\n", what.c_str(), n);

    ASSERT_EQ(withProviders.size(), baseline.size());
    for (size_t i = 0; i < baseline.size(); ++i) {
        const TensorDigest &a = baseline[i], &b = withProviders[i];
        EXPECT_EQ(a.path, b.path);
        EXPECT_EQ(a.dtype, b.dtype);
        EXPECT_EQ(a.shape, b.shape);
        const double scale = std::max(1.0, std::abs(a.sum));
        EXPECT_NEAR(b.sum, a.sum, 1e-4 * scale) << a.path;
        EXPECT_NEAR(b.maxAbs, a.maxAbs, 1e-4 * std::max(1.0, a.maxAbs)) << a.path;
    }
    // And the session is back to the originals afterwards.
    const std::vector<TensorDigest> after = session->forward();
    ASSERT_EQ(after.size(), baseline.size());
    EXPECT_EQ(after[0].sum, baseline[0].sum);
}

// R16: TorchSDPAKernelProvider serves and refuses what Python's public op does under sdpa_kernel with one backend
// (it calls that backend's op after PyTorch's eligibility checks for it). Expectations checked with torch 2.11 in
// Python (sdpa_kernel on the CPU): FLASH_ATTENTION serves 4-D inputs, grouped-query attention and boolean masks, and
// refuses 3-D inputs and dropout with "No available kernel"; MATH serves 3-D inputs.
TEST(TorchSdpaProvider, R16_ServesOrRefusesAsThePublicOpUnderSdpaKernel)
{
    at::manual_seed(0);
    at::NoGradGuard noGrad;
    const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::scaled_dot_product_attention", "");
    const at::Tensor q = at::randn({2, 4, 8, 16}), k = at::randn({2, 4, 8, 16}), v = at::randn({2, 4, 8, 16});
    const auto args = [](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, c10::IValue mask,
                         double dropout, bool gqa) {
        return torch::jit::Stack{q, k, v, std::move(mask), dropout, false, c10::IValue(), gqa};
    };
    struct Case {
        const char* backend;
        const char* name;
        torch::jit::Stack stack;
        bool served;
    };
    const std::vector<Case> cases{
        {"FLASH_ATTENTION", "4-D", args(q, k, v, {}, 0.0, false), true},
        {"FLASH_ATTENTION", "grouped-query", args(q, k.slice(1, 0, 2), v.slice(1, 0, 2), {}, 0.0, true), true},
        {"FLASH_ATTENTION", "boolean mask", args(q, k, v, at::rand({8, 8}) > 0.3, 0.0, false), true},
        {"FLASH_ATTENTION", "3-D", args(q[0], k[0], v[0], {}, 0.0, false), false},
        {"FLASH_ATTENTION", "dropout", args(q, k, v, {}, 0.5, false), false},
        {"MATH", "3-D", args(q[0], k[0], v[0], {}, 0.0, false), true},
        {"MATH", "boolean mask", args(q, k, v, at::rand({8, 8}) > 0.3, 0.0, false), true},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(std::string(c.backend) + " " + c.name);
        auto provider = create({{"type", "TorchSDPAKernelProvider"}, {"backend", c.backend}});
        EXPECT_EQ(provider->prepare({c.stack}), c.served) << "eligibility is the trial call on the sample";
        torch::jit::Stack stack = c.stack;
        if (c.served) {
            torch::jit::Stack reference = c.stack;
            op.callBoxed(reference); // the default backends
            ASSERT_TRUE(provider->call(op, stack).wasServed());
            EXPECT_TRUE(at::allclose(stack.back().toTensor(), reference.back().toTensor(), 1e-5, 1e-5));
        } else {
            try {
                provider->call(op, stack);
                ADD_FAILURE() << "served a call PyTorch refuses under this backend";
            } catch (const c10::Error& e) {
                EXPECT_NE(std::string(e.what()).find("No available kernel"), std::string::npos) << e.what();
            }
        }
    }
    const at::Context& ctx = at::globalContext(); // the process-wide switches are as they were
    EXPECT_TRUE(ctx.userEnabledMathSDP());
    EXPECT_TRUE(ctx.userEnabledFlashSDP());
    EXPECT_TRUE(ctx.userEnabledMemEfficientSDP());
}

// ---------------------------------------------------------------------------------------------------------
// Tuning settings (what CpuAutotuner chooses): they round-trip through settings(), bad values are errors naming
// the setting, and every configuration computes the same values as the default one.
TEST_F(CpuProviders, TuningSettingsRoundTripAreCheckedAndKeepTheValues)
{
    auto& registry = ProviderRegistry::instance();
    const nlohmann::json tuned{{"type", "CpuGeluProvider"},
                               {"approximate", "none"},
                               {"grain_elements", 4096},
                               {"isa", "default"},
                               {"max_threads", 1}};
    const auto provider = registry.create(tuned);
    EXPECT_EQ(provider->settings(), tuned);
    EXPECT_EQ(provider->displayName(),
              "CpuGeluProvider(approximate=none, grain_elements=4096, isa=default, max_threads=1)");
    for (const auto& [key, bad] : std::vector<std::pair<std::string, nlohmann::json>>{
             {"isa", "sse2"}, {"grain_elements", 0}, {"max_threads", -1}, {"max_threads", "two"}}) {
        nlohmann::json settings{{"type", "CpuSiluProvider"}, {key, bad}};
        try {
            registry.create(settings);
            ADD_FAILURE() << settings.dump() << " was accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("setting '" + key + "'"), std::string::npos) << e.what();
        }
    }
    const at::Tensor x = at::randn({64, 1000});
    const auto run = [&](const nlohmann::json& settings) {
        auto p = registry.create(settings);
        const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::gelu", "");
        torch::jit::Stack stack{x, std::string("none")};
        EXPECT_TRUE(p->call(op, stack).wasServed());
        return stack.back().toTensor();
    };
    const at::Tensor reference = run({{"type", "CpuGeluProvider"}});
    for (const cpu::Isa isa : cpu::availableIsas())
        for (const int grain : {1000, 32768})
            EXPECT_TRUE(at::allclose(run({{"type", "CpuGeluProvider"},
                                          {"isa", std::string(cpu::isaName(isa))},
                                          {"grain_elements", grain},
                                          {"max_threads", 1}}),
                                     reference, 1e-5, 1e-6));
}
