// SPDX-License-Identifier: Apache-2.0
// Cuda<Function>Provider: our own CUDA kernels (row_kernels.cu) for layer_norm, rms_norm, softmax, gelu and
// silu. They take CUDA tensors of float32, bfloat16 or float16 and reduce over the last dimension(s); the
// provider makes the input contiguous, allocates the output and launches on the current stream of the input's
// device (so it also works inside CUDA graph capture).
//
// Eligibility (prepare): a sample is supported when the kernel can serve it exactly (device, dtypes, shapes,
// arguments; no autograd needed). A call that is not supported (the runtime restores providers READY from
// settings without samples, so this can happen) runs the original ATen op instead.
//
// Built without the CUDA toolkit (no KFORGE_WITH_CUDA), this file registers nothing.
#include "providers/builtin_providers.h"

#ifdef KFORGE_WITH_CUDA
#include "providers/cuda/row_kernels.h"
#include "providers/settings_text.h"
#include "providers/cuda/tuned_kernels.h"

#include <kforge/error.h>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <limits>
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

bool needsGrad(std::initializer_list<const at::Tensor*> tensors)
{
    if (!at::GradMode::is_enabled())
        return false;
    for (const at::Tensor* t : tensors)
        if (t && t->defined() && t->requires_grad())
            return true;
    return false;
}

// An optional tensor argument: absent when None or undefined.
std::optional<at::Tensor> optionalTensor(const c10::IValue& v)
{
    if (v.isNone() || !v.isTensor())
        return std::nullopt;
    at::Tensor t = v.toTensor();
    if (!t.defined())
        return std::nullopt;
    return t;
}

// int[] / SymInt[] argument; nullopt when it is not a list of concrete integers.
std::optional<std::vector<int64_t>> intList(const c10::IValue& v)
{
    if (v.isIntList())
        return v.toIntVector();
    if (!v.isList())
        return std::nullopt;
    std::vector<int64_t> out;
    for (const c10::IValue& e : v.toListRef()) {
        if (e.isInt())
            out.push_back(e.toInt());
        else if (const auto concrete = e.isSymInt() ? e.toSymInt().maybe_as_int() : std::nullopt)
            out.push_back(*concrete);
        else
            return std::nullopt;
    }
    return out;
}

// The argument `index` of a stack whose arguments start at `first`; nullptr when the stack is too short.
const c10::IValue* arg(const torch::jit::Stack& stack, size_t first, size_t index)
{
    return first + index < stack.size() ? &stack[first + index] : nullptr;
}

at::Tensor outputLike(const at::Tensor& x) { return at::empty_like(x, at::MemoryFormat::Contiguous); }

// Launch settings every Cuda*Provider takes (the CUDA autotuner chooses them; a plan replays them). With none set,
// the built-in variants run (row_kernels.cu); with any, a variant NVRTC compiles on first use (tuned_kernels.h):
//   block_threads    threads per block, a multiple of 32 up to 1024
//   vector_width     elements per load and store: 1, 2, 4, 8 or 16 (narrowed where a call's alignment needs it)
//   rows_per_block   row kernels: rows a block works on at once, 1, 2, 4 or 8 (block_threads / rows >= 32)
//   specialize_cols  row kernels: compile each row length into its kernel
//   blocks_per_sm    elementwise kernels: the grid's cap in blocks per multiprocessor
class CudaTuningSettings {
public:
    explicit CudaTuningSettings(bool rowKernel) : m_rowKernel(rowKernel) {}

    const ck::Tuning& value() const { return m_tuning; }
    std::string names() const
    {
        return m_rowKernel ? "block_threads, vector_width, rows_per_block, specialize_cols"
                           : "block_threads, vector_width, blocks_per_sm";
    }
    void addTo(nlohmann::json& settings) const
    {
        if (m_tuning.blockThreads)
            settings["block_threads"] = m_tuning.blockThreads;
        if (m_tuning.vectorWidth)
            settings["vector_width"] = m_tuning.vectorWidth;
        if (m_tuning.rowsPerBlock != 1)
            settings["rows_per_block"] = m_tuning.rowsPerBlock;
        if (m_tuning.specializeCols)
            settings["specialize_cols"] = true;
        if (m_tuning.blocksPerSm)
            settings["blocks_per_sm"] = m_tuning.blocksPerSm;
    }
    // False when `key` is not a tuning setting of this provider; throws kforge::Error for a bad value.
    bool load(const std::string& where, const std::string& key, const nlohmann::json& value)
    {
        const auto integer = [&](int low, int high) {
            if (!value.is_number_integer() || value.get<std::int64_t>() < low || value.get<std::int64_t>() > high)
                throw Error(where, "setting '" + key + "' must be an integer from " + std::to_string(low) + " to " +
                                       std::to_string(high) + ", got " + value.dump());
            return value.get<int>();
        };
        const auto powerOfTwo = [&](int high) {
            const int v = integer(1, high);
            if (v & (v - 1))
                throw Error(where, "setting '" + key + "' must be a power of two, got " + value.dump());
            return v;
        };
        if (key == "block_threads") {
            m_tuning.blockThreads = integer(32, 1024);
            if (m_tuning.blockThreads % 32)
                throw Error(where, "setting 'block_threads' must be a multiple of 32 (a whole number of warps), got " +
                                       value.dump());
        } else if (key == "vector_width") {
            m_tuning.vectorWidth = powerOfTwo(16);
        } else if (key == "rows_per_block" && m_rowKernel) {
            m_tuning.rowsPerBlock = powerOfTwo(8);
        } else if (key == "specialize_cols" && m_rowKernel) {
            if (!value.is_boolean())
                throw Error(where, "setting 'specialize_cols' must be true or false, got " + value.dump());
            m_tuning.specializeCols = value.get<bool>();
        } else if (key == "blocks_per_sm" && !m_rowKernel) {
            m_tuning.blocksPerSm = integer(1, 1024);
        } else {
            return false;
        }
        return true;
    }
    // After every setting loaded: the block splits into whole warps per row.
    void validate(const std::string& where) const
    {
        if (m_tuning.blockThreads && m_tuning.blockThreads % (32 * m_tuning.rowsPerBlock))
            throw Error(where, "block_threads " + std::to_string(m_tuning.blockThreads) + " cannot give each of " +
                                   std::to_string(m_tuning.rowsPerBlock) + " rows_per_block a whole number of warps");
    }

private:
    bool m_rowKernel;
    ck::Tuning m_tuning;
};

// Common shape of the providers: parse the arguments at `first`, check them, compute, replace them by the output.
class CudaProvider : public KernelProvider {
public:
    explicit CudaProvider(bool rowKernel) : m_tuning(rowKernel) {}

    std::vector<std::string> devices() const override { return {"cuda"}; }
    std::string displayName() const override
    {
        nlohmann::json s = nlohmann::json::object();
        addOwnSettings(s);
        m_tuning.addTo(s);
        const std::string inner = settingsText(s);
        return inner.empty() ? typeName() : typeName() + "(" + inner + ")";
    }
    nlohmann::json settings() const override
    {
        nlohmann::json s{{"type", typeName()}};
        addOwnSettings(s);
        m_tuning.addTo(s);
        return s;
    }

protected:
    bool supports(const torch::jit::Stack& sample) const override { return supportsAt(sample, 0); }

    void loadSettings(const nlohmann::json& settings) override
    {
        const std::string where = "provider '" + typeName() + "'";
        for (const auto& [key, value] : settings.items())
            if (key != "type" && !m_tuning.load(where, key, value) && !loadOwnSetting(where, key, value))
                throw Error(where,
                            "unknown setting '" + key + "' (known: " + ownSettingNames() + m_tuning.names() + ")");
        m_tuning.validate(where);
    }
    // Settings of the derived provider other than the tuning ones.
    virtual bool loadOwnSetting(const std::string& where, const std::string& key, const nlohmann::json& value)
    {
        return false;
    }
    virtual std::string ownSettingNames() const { return ""; } // "approximate, "
    virtual void addOwnSettings(nlohmann::json& settings) const {}

    const ck::Tuning& tuning() const { return m_tuning.value(); }
    bool tuned() const { return !m_tuning.value().isDefault(); }

    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        const size_t count = op.schema().arguments().size();
        TORCH_CHECK(stack.size() >= count, typeName(), ": the stack holds fewer arguments than ", op.schema().name());
        const size_t first = stack.size() - count;
        if (!supportsAt(stack, first)) // not for our kernels: the runtime runs the original and reports it as such
            return CallResult::decline(stack[first].isTensor() && !stack[first].toTensor().is_cuda()
                                           ? "a tensor that is not on a CUDA device"
                                           : "a dtype, shape or option the kernel does not handle, or autograd");
        at::Tensor out = compute(stack, first);
        torch::jit::drop(stack, count);
        torch::jit::push(stack, std::move(out));
        return CallResult::served();
    }

    virtual bool supportsAt(const torch::jit::Stack& stack, size_t first) const = 0;
    virtual at::Tensor compute(const torch::jit::Stack& stack, size_t first) const = 0;

    void check(cudaError_t status) const
    {
        if (status != cudaSuccess)
            throw Error("provider '" + displayName() + "'",
                        std::string("CUDA kernel launch failed: ") + cudaGetErrorString(status));
    }

private:
    CudaTuningSettings m_tuning;
};

// Parameters (weight, bias) of a norm: on the input's device, shaped like normalized_shape.
bool isParameterFor(const at::Tensor& p, const at::Tensor& x, const std::vector<int64_t>& shape)
{
    return p.is_cuda() && p.layout() == at::kStrided && p.device() == x.device() && p.sizes().vec() == shape;
}

// Input x and normalized_shape, the last dims of x: returns cols (their product), or nullopt.
std::optional<int64_t> normalizedCols(const at::Tensor& x, const std::vector<int64_t>& shape)
{
    const int64_t k = int64_t(shape.size());
    if (k == 0 || k > x.dim())
        return std::nullopt;
    int64_t cols = 1;
    for (int64_t i = 0; i < k; ++i) {
        if (x.size(x.dim() - k + i) != shape[size_t(i)])
            return std::nullopt;
        cols *= shape[size_t(i)];
    }
    return cols;
}

// ---- layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None,
//                 float eps=1e-05, bool cudnn_enable=True) -> Tensor
class CudaLayerNormProvider final : public CudaProvider {
public:
    CudaLayerNormProvider() : CudaProvider(true) {}
    Function function() const override { return Function::LayerNorm; }
    std::string typeName() const override { return "CudaLayerNormProvider"; }

protected:
    struct Args {
        at::Tensor x;
        std::vector<int64_t> shape;
        std::optional<at::Tensor> weight, bias;
        double eps = 1e-5;
    };

    static std::optional<Args> parse(const torch::jit::Stack& s, size_t first)
    {
        const c10::IValue* x = arg(s, first, 0);
        const c10::IValue* shape = arg(s, first, 1);
        if (!x || !shape || !x->isTensor())
            return std::nullopt;
        Args a;
        a.x = x->toTensor();
        auto list = intList(*shape);
        if (!list)
            return std::nullopt;
        a.shape = std::move(*list);
        if (const auto* w = arg(s, first, 2))
            a.weight = optionalTensor(*w);
        if (const auto* b = arg(s, first, 3))
            a.bias = optionalTensor(*b);
        if (const auto* eps = arg(s, first, 4)) {
            if (!eps->isDouble())
                return std::nullopt;
            a.eps = eps->toDouble();
        }
        return a;
    }

    bool supportsAt(const torch::jit::Stack& s, size_t first) const override
    {
        const auto a = parse(s, first);
        if (!a || !isKernelTensor(a->x) || !normalizedCols(a->x, a->shape))
            return false;
        const at::ScalarType type = a->x.scalar_type();
        std::optional<at::ScalarType> paramType;
        for (const auto* p : {&a->weight, &a->bias}) {
            if (!*p)
                continue;
            const at::Tensor& t = **p;
            if (!isParameterFor(t, a->x, a->shape))
                return false;
            // The input's dtype, or float32 parameters with a half-precision input (output in the input's dtype).
            if (t.scalar_type() != type && t.scalar_type() != at::kFloat)
                return false;
            if (paramType && *paramType != t.scalar_type())
                return false;
            paramType = t.scalar_type();
        }
        const at::Tensor* w = a->weight ? &*a->weight : nullptr;
        const at::Tensor* b = a->bias ? &*a->bias : nullptr;
        return !needsGrad({&a->x, w, b});
    }

    at::Tensor compute(const torch::jit::Stack& s, size_t first) const override
    {
        const auto parsed = parse(s, first);
        const Args& a = *parsed;
        const int64_t cols = *normalizedCols(a.x, a.shape);
        const c10::cuda::CUDAGuard guard(a.x.device());
        const at::Tensor x = a.x.contiguous();
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
class CudaRmsNormProvider final : public CudaProvider {
public:
    CudaRmsNormProvider() : CudaProvider(true) {}
    Function function() const override { return Function::RmsNorm; }
    std::string typeName() const override { return "CudaRmsNormProvider"; }

protected:
    struct Args {
        at::Tensor x;
        std::vector<int64_t> shape;
        std::optional<at::Tensor> weight;
        // ATen's default: the epsilon of the op's math type, float32 for all three dtypes.
        double eps = std::numeric_limits<float>::epsilon();
    };

    static std::optional<Args> parse(const torch::jit::Stack& s, size_t first)
    {
        const c10::IValue* x = arg(s, first, 0);
        const c10::IValue* shape = arg(s, first, 1);
        if (!x || !shape || !x->isTensor())
            return std::nullopt;
        Args a;
        a.x = x->toTensor();
        auto list = intList(*shape);
        if (!list)
            return std::nullopt;
        a.shape = std::move(*list);
        if (const auto* w = arg(s, first, 2))
            a.weight = optionalTensor(*w);
        if (const auto* eps = arg(s, first, 3); eps && !eps->isNone()) {
            if (!eps->isDouble())
                return std::nullopt;
            a.eps = eps->toDouble();
        }
        return a;
    }

    bool supportsAt(const torch::jit::Stack& s, size_t first) const override
    {
        const auto a = parse(s, first);
        if (!a || !isKernelTensor(a->x) || !normalizedCols(a->x, a->shape))
            return false;
        // A weight of another dtype changes the output dtype (type promotion): left to ATen.
        if (a->weight &&
            (!isParameterFor(*a->weight, a->x, a->shape) || a->weight->scalar_type() != a->x.scalar_type()))
            return false;
        return !needsGrad({&a->x, a->weight ? &*a->weight : nullptr});
    }

    at::Tensor compute(const torch::jit::Stack& s, size_t first) const override
    {
        const auto parsed = parse(s, first);
        const Args& a = *parsed;
        const int64_t cols = *normalizedCols(a.x, a.shape);
        const c10::cuda::CUDAGuard guard(a.x.device());
        const at::Tensor x = a.x.contiguous();
        at::Tensor out = outputLike(x);
        if (x.numel() == 0)
            return out;
        const at::Tensor w = a.weight ? a.weight->contiguous() : at::Tensor();
        const void* wp = w.defined() ? w.const_data_ptr() : nullptr;
        const cudaStream_t stream = at::cuda::getCurrentCUDAStream(x.device().index()).stream();
        const ck::DType type = *kernelType(x.scalar_type());
        check(tuned() ? ck::rmsNormTuned(x.const_data_ptr(), wp, out.mutable_data_ptr(), x.numel() / cols, cols,
                                         float(a.eps), type, tuning(), stream)
                      : ck::rmsNorm(x.const_data_ptr(), wp, out.mutable_data_ptr(), x.numel() / cols, cols,
                                    float(a.eps), type, stream));
        return out;
    }
};

// ---- softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
class CudaSoftmaxProvider final : public CudaProvider {
public:
    CudaSoftmaxProvider() : CudaProvider(true) {}
    Function function() const override { return Function::Softmax; }
    std::string typeName() const override { return "CudaSoftmaxProvider"; }

protected:
    struct Args {
        at::Tensor x;
        int64_t dim = -1;
        std::optional<at::ScalarType> dtype;
    };

    static std::optional<Args> parse(const torch::jit::Stack& s, size_t first)
    {
        const c10::IValue* x = arg(s, first, 0);
        const c10::IValue* dim = arg(s, first, 1);
        if (!x || !dim || !x->isTensor() || !dim->isInt())
            return std::nullopt;
        Args a;
        a.x = x->toTensor();
        a.dim = dim->toInt();
        if (const auto* dtype = arg(s, first, 2); dtype && !dtype->isNone()) {
            if (!dtype->isInt())
                return std::nullopt;
            a.dtype = dtype->toScalarType();
        }
        return a;
    }

    bool supportsAt(const torch::jit::Stack& s, size_t first) const override
    {
        const auto a = parse(s, first);
        if (!a || !isKernelTensor(a->x))
            return false;
        // Over the last dimension only (a 0-d tensor counts as one element in one row).
        const int64_t rank = std::max<int64_t>(a->x.dim(), 1);
        if (a->dim != -1 && a->dim != rank - 1)
            return false;
        // dtype: the input's, or float32 (a half-precision input computed and returned in float32).
        if (a->dtype && *a->dtype != a->x.scalar_type() && *a->dtype != at::kFloat)
            return false;
        return !needsGrad({&a->x});
    }

    at::Tensor compute(const torch::jit::Stack& s, size_t first) const override
    {
        const auto parsed = parse(s, first);
        const Args& a = *parsed;
        const c10::cuda::CUDAGuard guard(a.x.device());
        const at::Tensor x = a.x.contiguous();
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

// Elementwise: gelu and silu take one tensor and nothing the kernels care about.
class CudaUnaryProvider : public CudaProvider {
public:
    CudaUnaryProvider() : CudaProvider(false) {}

protected:
    bool supportsAt(const torch::jit::Stack& s, size_t first) const override
    {
        const c10::IValue* x = arg(s, first, 0);
        if (!x || !x->isTensor())
            return false;
        const at::Tensor t = x->toTensor();
        return isKernelTensor(t) && !needsGrad({&t});
    }

    at::Tensor compute(const torch::jit::Stack& s, size_t first) const override
    {
        const at::Tensor input = s[first].toTensor();
        const c10::cuda::CUDAGuard guard(input.device());
        const at::Tensor x = input.contiguous();
        at::Tensor out = outputLike(x);
        if (x.numel() == 0)
            return out;
        check(launch(x.const_data_ptr(), out.mutable_data_ptr(), x.numel(), *kernelType(x.scalar_type()),
                     at::cuda::getCurrentCUDAStream(x.device().index()).stream()));
        return out;
    }

    virtual cudaError_t launch(const void* x, void* y, int64_t n, ck::DType type, cudaStream_t stream) const = 0;
};

// ---- gelu(Tensor self, *, str approximate='none') -> Tensor
// The setting `approximate` chooses the formula the kernel computes ("none": exact, with erf; "tanh"), whatever
// the call asks for: a plan can swap exact GELU for the tanh form on purpose.
class CudaGeluProvider final : public CudaUnaryProvider {
public:
    Function function() const override { return Function::Gelu; }
    std::string typeName() const override { return "CudaGeluProvider"; }

protected:
    bool loadOwnSetting(const std::string& where, const std::string& key, const nlohmann::json& value) override
    {
        if (key != "approximate")
            return false;
        if (!value.is_string())
            throw Error(where, "setting 'approximate' must be a string");
        const auto name = value.get<std::string>();
        if (name == "none")
            m_approximation = ck::GeluApproximation::None;
        else if (name == "tanh")
            m_approximation = ck::GeluApproximation::Tanh;
        else
            throw Error(where, "unknown approximate '" + name + "' (known: none, tanh)");
        return true;
    }
    std::string ownSettingNames() const override { return "approximate, "; }
    void addOwnSettings(nlohmann::json& settings) const override { settings["approximate"] = approximateName(); }

    cudaError_t launch(const void* x, void* y, int64_t n, ck::DType type, cudaStream_t stream) const override
    {
        return tuned() ? ck::geluTuned(x, y, n, m_approximation, type, tuning(), stream)
                       : ck::gelu(x, y, n, m_approximation, type, stream);
    }

private:
    std::string approximateName() const { return m_approximation == ck::GeluApproximation::Tanh ? "tanh" : "none"; }

    ck::GeluApproximation m_approximation = ck::GeluApproximation::None;
};

// ---- silu(Tensor self) -> Tensor
class CudaSiluProvider final : public CudaUnaryProvider {
public:
    Function function() const override { return Function::Silu; }
    std::string typeName() const override { return "CudaSiluProvider"; }

protected:
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
