// SPDX-License-Identifier: Apache-2.0
// Cuda<Function>Provider: our own CUDA kernels (row_kernels.cu) for layer_norm, rms_norm, softmax, gelu and
// silu. They take CUDA tensors of float32, bfloat16 or float16 and reduce over the last dimension(s); the
// provider parses the call with the SDK's argument layer (kforge/provider_args.h), makes the input contiguous,
// allocates the output and launches on the current stream of the input's device (so it also works inside CUDA
// graph capture).
//
// Eligibility (prepare): a sample is supported when the kernel can serve it exactly (device, dtypes, shapes,
// arguments; no autograd needed). A call that is not supported (the runtime restores providers READY from
// settings without samples, so this can happen) runs the original ATen op instead.
//
// Built without the CUDA toolkit (no KFORGE_WITH_CUDA), this file registers nothing.
#include "providers/builtin_providers.h"

#ifdef KFORGE_WITH_CUDA
#include "providers/cuda/row_kernels.h"
#include "providers/cuda/tuned_kernels.h"
#include "providers/tuned_provider.h"

#include <kforge/error.h>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <functional>
#include <optional>
#endif

namespace kforge::providers {

#ifdef KFORGE_WITH_CUDA
namespace {

namespace ck = cuda_kernels;

std::optional<ck::DType> kernelType(at::ScalarType type)
{
    switch (type) {
    case at::kFloat:
        return ck::DType::Float32;
    case at::kBFloat16:
        return ck::DType::BFloat16;
    case at::kHalf:
        return ck::DType::Float16;
    default:
        return std::nullopt;
    }
}

// A dense CUDA tensor of a dtype the kernels take.
bool isKernelTensor(const at::Tensor& t)
{
    return t.defined() && t.is_cuda() && t.layout() == at::kStrided && kernelType(t.scalar_type()).has_value();
}

at::Tensor outputLike(const at::Tensor& x) { return at::empty_like(x, at::MemoryFormat::Contiguous); }

// Launch settings every Cuda*Provider takes (the CUDA autotuner chooses them; a plan replays them). With none set,
// the built-in variants run (row_kernels.cu); with any, a variant NVRTC compiles on first use (tuned_kernels.h):
//   block_threads    threads per block, a multiple of 32 up to 1024
//   vector_width     elements per load and store: 1, 2, 4, 8 or 16 (narrowed where a call's alignment needs it)
//   rows_per_block   row kernels: rows a block works on at once, 1, 2, 4 or 8 (block_threads / rows >= 32)
//   specialize_cols  row kernels: compile each row length into its kernel
//   blocks_per_sm    elementwise kernels: the grid's cap in blocks per multiprocessor
// The settings loop, settings() and the display name are TunedProviderBase's; the call plumbing (parse, check,
// compute, or decline) TunedProvider's: a provider here holds its eligibility (accept) and its launch.
template <class Args> class CudaProvider : public TunedProvider<Args> {
public:
    explicit CudaProvider(bool rowKernel)
    {
        declareInteger(
            "block_threads", 32, 1024, false, [this](int v) { m_tuning.blockThreads = v; },
            [this] { return m_tuning.blockThreads; });
        declareInteger(
            "vector_width", 1, 16, true, [this](int v) { m_tuning.vectorWidth = v; },
            [this] { return m_tuning.vectorWidth; });
        if (rowKernel) {
            declareInteger(
                "rows_per_block", 1, 8, true, [this](int v) { m_tuning.rowsPerBlock = v; },
                [this] { return m_tuning.rowsPerBlock == 1 ? 0 : m_tuning.rowsPerBlock; });
            this->declareSetting({"specialize_cols",
                                  [this](const std::string& where, const nlohmann::json& value) {
                                      if (!value.is_boolean())
                                          throw Error(where, "setting 'specialize_cols' must be true or false, got " +
                                                                 value.dump());
                                      m_tuning.specializeCols = value.get<bool>();
                                  },
                                  [this](nlohmann::json& s) {
                                      if (m_tuning.specializeCols)
                                          s["specialize_cols"] = true;
                                  }});
        } else {
            declareInteger(
                "blocks_per_sm", 1, 1024, false, [this](int v) { m_tuning.blocksPerSm = v; },
                [this] { return m_tuning.blocksPerSm; });
        }
    }

    std::vector<std::string> devices() const override { return {"cuda"}; }

protected:
    const ck::Tuning& tuning() const { return m_tuning; }
    bool tuned() const { return !m_tuning.isDefault(); }

    // Not for our kernels: the runtime runs the original and reports it as such.
    const char* declineReason(const torch::jit::Stack& stack) const override
    {
        const c10::IValue& input = stack[stack.size() - Args::kArguments];
        return input.isTensor() && !input.toTensor().is_cuda()
                   ? "a tensor that is not on a CUDA device"
                   : "a dtype, shape or option the kernel does not handle, or autograd";
    }

    // After every setting loaded: the block splits into whole warps per row.
    void validateSettings(const std::string& where) const override
    {
        if (m_tuning.blockThreads && m_tuning.blockThreads % (32 * m_tuning.rowsPerBlock))
            throw Error(where, "block_threads " + std::to_string(m_tuning.blockThreads) + " cannot give each of " +
                                   std::to_string(m_tuning.rowsPerBlock) + " rows_per_block a whole number of warps");
    }

    void check(cudaError_t status) const
    {
        if (status != cudaSuccess)
            throw Error("provider '" + this->displayName() + "'",
                        std::string("CUDA kernel launch failed: ") + cudaGetErrorString(status));
    }

private:
    // An integer launch setting in [low, high] (a power of two when asked; block_threads a whole number of warps),
    // written back when `current` is not 0.
    void declareInteger(const char* key, int low, int high, bool powerOfTwo, std::function<void(int)> set,
                        std::function<int()> current)
    {
        this->declareSetting(
            {key,
             [=](const std::string& where, const nlohmann::json& value) {
                 const std::string name = key;
                 if (!value.is_number_integer() || value.get<std::int64_t>() < low || value.get<std::int64_t>() > high)
                     throw Error(where, "setting '" + name + "' must be an integer from " + std::to_string(low) +
                                            " to " + std::to_string(high) + ", got " + value.dump());
                 const int v = value.get<int>();
                 if (powerOfTwo && (v & (v - 1)))
                     throw Error(where, "setting '" + name + "' must be a power of two, got " + value.dump());
                 if (name == "block_threads" && v % 32)
                     throw Error(where, "setting 'block_threads' must be a multiple of 32 (a whole number of warps), "
                                        "got " +
                                            value.dump());
                 set(v);
             },
             [key, current](nlohmann::json& s) {
                 if (const int v = current())
                     s[key] = v;
             }});
    }

    ck::Tuning m_tuning;
};

// Parameters (weight, bias) of a norm: on the input's device, shaped like normalized_shape.
bool isParameterFor(const at::Tensor& p, const at::Tensor& x, const std::vector<int64_t>& shape)
{
    return p.is_cuda() && p.layout() == at::kStrided && p.device() == x.device() && p.sizes().vec() == shape;
}

// ---- layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None,
//                 float eps=1e-05, bool cudnn_enable=True) -> Tensor
class CudaLayerNormProvider final : public CudaProvider<LayerNormArgs> {
public:
    CudaLayerNormProvider() : CudaProvider(true) {}
    Function function() const override { return Function::LayerNorm; }
    std::string typeName() const override { return "CudaLayerNormProvider"; }

protected:
    std::optional<LayerNormArgs> accept(const torch::jit::Stack& s) const override
    {
        auto a = parseLayerNorm(s);
        if (!a || !isKernelTensor(a->input) || !normalizedCols(a->input, a->normalizedShape))
            return std::nullopt;
        const at::ScalarType type = a->input.scalar_type();
        std::optional<at::ScalarType> paramType;
        for (const auto* p : {&a->weight, &a->bias}) {
            if (!*p)
                continue;
            const at::Tensor& t = **p;
            if (!isParameterFor(t, a->input, a->normalizedShape))
                return std::nullopt;
            // The input's dtype, or float32 parameters with a half-precision input (output in the input's dtype).
            if (t.scalar_type() != type && t.scalar_type() != at::kFloat)
                return std::nullopt;
            if (paramType && *paramType != t.scalar_type())
                return std::nullopt;
            paramType = t.scalar_type();
        }
        if (needsAutograd({&a->input, tensorOrNull(a->weight), tensorOrNull(a->bias)}))
            return std::nullopt;
        return a;
    }

    at::Tensor compute(const LayerNormArgs& a) const override
    {
        const int64_t cols = *normalizedCols(a.input, a.normalizedShape);
        const c10::cuda::CUDAGuard guard(a.input.device());
        const at::Tensor x = a.input.contiguous();
        at::Tensor out = outputLike(x);
        if (x.numel() == 0)
            return out;
        const at::Tensor w = a.weight ? a.weight->contiguous() : at::Tensor();
        const at::Tensor b = a.bias ? a.bias->contiguous() : at::Tensor();
        const at::ScalarType paramType = w.defined()   ? w.scalar_type()
                                         : b.defined() ? b.scalar_type()
                                                       : x.scalar_type();
        const void* wp = w.defined() ? w.const_data_ptr() : nullptr;
        const void* bp = b.defined() ? b.const_data_ptr() : nullptr;
        const cudaStream_t stream = at::cuda::getCurrentCUDAStream(x.device().index()).stream();
        const ck::DType type = *kernelType(x.scalar_type());
        check(tuned() ? ck::layerNormTuned(x.const_data_ptr(), wp, bp, *kernelType(paramType), out.mutable_data_ptr(),
                                           x.numel() / cols, cols, float(a.eps), type, tuning(), stream)
                      : ck::layerNorm(x.const_data_ptr(), wp, bp, *kernelType(paramType), out.mutable_data_ptr(),
                                      x.numel() / cols, cols, float(a.eps), type, stream));
        return out;
    }
};

// ---- rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor
// eps None: ATen's default, the epsilon of the op's math type, float32 for all three dtypes.
class CudaRmsNormProvider final : public CudaProvider<RmsNormArgs> {
public:
    CudaRmsNormProvider() : CudaProvider(true) {}
    Function function() const override { return Function::RmsNorm; }
    std::string typeName() const override { return "CudaRmsNormProvider"; }

protected:
    std::optional<RmsNormArgs> accept(const torch::jit::Stack& s) const override
    {
        auto a = parseRmsNorm(s);
        if (!a || !isKernelTensor(a->input) || !normalizedCols(a->input, a->normalizedShape))
            return std::nullopt;
        // A weight of another dtype changes the output dtype (type promotion): left to ATen.
        if (a->weight && (!isParameterFor(*a->weight, a->input, a->normalizedShape) ||
                          a->weight->scalar_type() != a->input.scalar_type()))
            return std::nullopt;
        if (needsAutograd({&a->input, tensorOrNull(a->weight)}))
            return std::nullopt;
        return a;
    }

    at::Tensor compute(const RmsNormArgs& a) const override
    {
        const int64_t cols = *normalizedCols(a.input, a.normalizedShape);
        const c10::cuda::CUDAGuard guard(a.input.device());
        const at::Tensor x = a.input.contiguous();
        at::Tensor out = outputLike(x);
        if (x.numel() == 0)
            return out;
        const at::Tensor w = a.weight ? a.weight->contiguous() : at::Tensor();
        const void* wp = w.defined() ? w.const_data_ptr() : nullptr;
        const cudaStream_t stream = at::cuda::getCurrentCUDAStream(x.device().index()).stream();
        const ck::DType type = *kernelType(x.scalar_type());
        const float eps = float(a.epsOrDefault());
        check(tuned() ? ck::rmsNormTuned(x.const_data_ptr(), wp, out.mutable_data_ptr(), x.numel() / cols, cols, eps,
                                         type, tuning(), stream)
                      : ck::rmsNorm(x.const_data_ptr(), wp, out.mutable_data_ptr(), x.numel() / cols, cols, eps, type,
                                    stream));
        return out;
    }
};

// ---- softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
class CudaSoftmaxProvider final : public CudaProvider<SoftmaxArgs> {
public:
    CudaSoftmaxProvider() : CudaProvider(true) {}
    Function function() const override { return Function::Softmax; }
    std::string typeName() const override { return "CudaSoftmaxProvider"; }

protected:
    std::optional<SoftmaxArgs> accept(const torch::jit::Stack& s) const override
    {
        auto a = parseSoftmax(s);
        if (!a || !isKernelTensor(a->self))
            return std::nullopt;
        // Over the last dimension only (a 0-d tensor counts as one element in one row).
        const int64_t rank = std::max<int64_t>(a->self.dim(), 1);
        if (wrapDim(a->dim, rank) != rank - 1)
            return std::nullopt;
        // dtype: the input's, or float32 (a half-precision input computed and returned in float32).
        if (a->dtype && *a->dtype != a->self.scalar_type() && *a->dtype != at::kFloat)
            return std::nullopt;
        if (needsAutograd({&a->self}))
            return std::nullopt;
        return a;
    }

    at::Tensor compute(const SoftmaxArgs& a) const override
    {
        const c10::cuda::CUDAGuard guard(a.self.device());
        const at::Tensor x = a.self.contiguous();
        const at::ScalarType outType = a.dtype.value_or(x.scalar_type());
        at::Tensor out = at::empty_like(x, x.options().dtype(outType), at::MemoryFormat::Contiguous);
        if (x.numel() == 0)
            return out;
        const int64_t cols = x.dim() == 0 ? 1 : x.size(-1);
        const cudaStream_t stream = at::cuda::getCurrentCUDAStream(x.device().index()).stream();
        const ck::DType in = *kernelType(x.scalar_type()), outKind = *kernelType(outType);
        check(tuned() ? ck::softmaxTuned(x.const_data_ptr(), out.mutable_data_ptr(), x.numel() / cols, cols, in,
                                         outKind, tuning(), stream)
                      : ck::softmax(x.const_data_ptr(), out.mutable_data_ptr(), x.numel() / cols, cols, in, outKind,
                                    stream));
        return out;
    }
};

// Elementwise: gelu and silu take one tensor (`self`) and nothing else the kernels care about.
template <class Args> class CudaUnaryProvider : public CudaProvider<Args> {
public:
    CudaUnaryProvider() : CudaProvider<Args>(false) {}

protected:
    virtual std::optional<Args> parse(const torch::jit::Stack& s) const = 0;
    virtual cudaError_t launch(const void* x, void* y, int64_t n, ck::DType type, cudaStream_t stream) const = 0;

    std::optional<Args> accept(const torch::jit::Stack& s) const override
    {
        auto a = parse(s);
        if (!a || !isKernelTensor(a->self) || needsAutograd({&a->self}))
            return std::nullopt;
        return a;
    }

    at::Tensor compute(const Args& a) const override
    {
        const c10::cuda::CUDAGuard guard(a.self.device());
        const at::Tensor x = a.self.contiguous();
        at::Tensor out = outputLike(x);
        if (x.numel() == 0)
            return out;
        this->check(launch(x.const_data_ptr(), out.mutable_data_ptr(), x.numel(), *kernelType(x.scalar_type()),
                           at::cuda::getCurrentCUDAStream(x.device().index()).stream()));
        return out;
    }
};

// ---- gelu(Tensor self, *, str approximate='none') -> Tensor
// The setting `approximate` chooses the formula the kernel computes ("none": exact, with erf; "tanh"), whatever
// the call asks for: a plan can swap exact GELU for the tanh form on purpose.
class CudaGeluProvider final : public CudaUnaryProvider<GeluArgs> {
public:
    CudaGeluProvider()
    {
        declareSetting({"approximate",
                        [this](const std::string& where, const nlohmann::json& value) {
                            if (!value.is_string())
                                throw Error(where, "setting 'approximate' must be a string");
                            const auto name = value.get<std::string>();
                            if (name == "none")
                                m_approximation = ck::GeluApproximation::None;
                            else if (name == "tanh")
                                m_approximation = ck::GeluApproximation::Tanh;
                            else
                                throw Error(where, "unknown approximate '" + name + "' (known: none, tanh)");
                        },
                        [this](nlohmann::json& s) {
                            s["approximate"] = m_approximation == ck::GeluApproximation::Tanh ? "tanh" : "none";
                        }},
                       Placement::First);
    }
    Function function() const override { return Function::Gelu; }
    std::string typeName() const override { return "CudaGeluProvider"; }

protected:
    std::optional<GeluArgs> parse(const torch::jit::Stack& s) const override { return parseGelu(s); }
    cudaError_t launch(const void* x, void* y, int64_t n, ck::DType type, cudaStream_t stream) const override
    {
        return tuned() ? ck::geluTuned(x, y, n, m_approximation, type, tuning(), stream)
                       : ck::gelu(x, y, n, m_approximation, type, stream);
    }

private:
    ck::GeluApproximation m_approximation = ck::GeluApproximation::None;
};

// ---- silu(Tensor self) -> Tensor
class CudaSiluProvider final : public CudaUnaryProvider<UnaryArgs> {
public:
    Function function() const override { return Function::Silu; }
    std::string typeName() const override { return "CudaSiluProvider"; }

protected:
    std::optional<UnaryArgs> parse(const torch::jit::Stack& s) const override { return parseSilu(s); }
    cudaError_t launch(const void* x, void* y, int64_t n, ck::DType type, cudaStream_t stream) const override
    {
        return tuned() ? ck::siluTuned(x, y, n, type, tuning(), stream) : ck::silu(x, y, n, type, stream);
    }
};

} // namespace
#endif

#ifdef KFORGE_WITH_CUDA
namespace {

// The launch settings in a provider's settings schema (no "enum": make_plan tries them through CudaAutotuner, not as
// plain variants).
ProviderTypeInfo withLaunchSettings(ProviderTypeInfo info, bool rowKernel)
{
    const auto integer = [](int byDefault, const char* description) {
        return nlohmann::json{{"type", "integer"}, {"default", byDefault}, {"description", description}};
    };
    info.settingsSchema["block_threads"] = integer(0, "threads per block, a multiple of 32 (0: as the built-in "
                                                      "kernel chooses); any launch setting compiles the kernel "
                                                      "with NVRTC on first use");
    info.settingsSchema["vector_width"] = integer(0, "elements per load and store: 1, 2, 4, 8, 16 (0: 16 bytes)");
    if (rowKernel) {
        info.settingsSchema["rows_per_block"] = integer(1, "rows a block works on at once: 1, 2, 4, 8");
        info.settingsSchema["specialize_cols"] = {
            {"type", "boolean"}, {"default", false}, {"description", "compile each row length into its kernel"}};
    } else {
        info.settingsSchema["blocks_per_sm"] = integer(0, "the grid's cap in blocks per multiprocessor (0: 16)");
    }
    info.description += " Launch settings (block_threads, vector_width, ...) select a variant compiled at run time "
                        "by NVRTC and cached on disk; CudaAutotuner chooses them for the model's shapes.";
    return info;
}

} // namespace
#endif

void registerCudaProviders(ProviderRegistry& registry)
{
#ifdef KFORGE_WITH_CUDA
    const std::string dtypes = " (CUDA tensors of float32, bfloat16, float16)";
    registry.add(withLaunchSettings(
        {"CudaLayerNormProvider",
         Function::LayerNorm,
         {"cuda"},
         "layer_norm by a CUDA kernel: one block per row, float32 math; weight and bias optional, of the "
         "input's dtype or float32" +
             dtypes,
         [] { return std::make_unique<CudaLayerNormProvider>(); }},
        true));
    registry.add(
        withLaunchSettings({"CudaRmsNormProvider",
                            Function::RmsNorm,
                            {"cuda"},
                            "rms_norm by a CUDA kernel: one block per row, float32 math; weight optional" + dtypes,
                            [] { return std::make_unique<CudaRmsNormProvider>(); }},
                           true));
    registry.add(
        withLaunchSettings({"CudaSoftmaxProvider",
                            Function::Softmax,
                            {"cuda"},
                            "softmax over the last dimension by a CUDA kernel: one block per row, online max and sum; "
                            "dtype=None, the input's or float32" +
                                dtypes,
                            [] { return std::make_unique<CudaSoftmaxProvider>(); }},
                           true));
    registry.add(withLaunchSettings(
        {"CudaGeluProvider",
         Function::Gelu,
         {"cuda"},
         "gelu by an elementwise CUDA kernel, computing the form the setting 'approximate' names (none: "
         "exact, with erf; tanh)" +
             dtypes,
         [] { return std::make_unique<CudaGeluProvider>(); },
         {{"approximate", {{"type", "string"}, {"enum", {"none", "tanh"}}, {"default", "none"}}}}},
        false));
    registry.add(withLaunchSettings({"CudaSiluProvider",
                                     Function::Silu,
                                     {"cuda"},
                                     "silu by an elementwise CUDA kernel" + dtypes,
                                     [] { return std::make_unique<CudaSiluProvider>(); }},
                                    false));
#else
    (void)registry;
#endif
}

} // namespace kforge::providers
