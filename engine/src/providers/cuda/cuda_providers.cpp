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

// Common shape of the providers: parse the arguments at `first`, check them, compute, replace them by the output.
class CudaProvider : public KernelProvider {
public:
    std::vector<std::string> devices() const override { return {"cuda"}; }

protected:
    bool supports(const torch::jit::Stack& sample) const override { return supportsAt(sample, 0); }

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
        check(ck::layerNorm(x.const_data_ptr(), w.defined() ? w.const_data_ptr() : nullptr,
                            b.defined() ? b.const_data_ptr() : nullptr, *kernelType(paramType), out.mutable_data_ptr(),
                            x.numel() / cols, cols, float(a.eps), *kernelType(x.scalar_type()),
                            at::cuda::getCurrentCUDAStream(x.device().index()).stream()));
        return out;
    }
};

// ---- rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor
class CudaRmsNormProvider final : public CudaProvider {
public:
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
        check(ck::rmsNorm(x.const_data_ptr(), w.defined() ? w.const_data_ptr() : nullptr, out.mutable_data_ptr(),
                          x.numel() / cols, cols, float(a.eps), *kernelType(x.scalar_type()),
                          at::cuda::getCurrentCUDAStream(x.device().index()).stream()));
        return out;
    }
};

// ---- softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
class CudaSoftmaxProvider final : public CudaProvider {
public:
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
        check(ck::softmax(x.const_data_ptr(), out.mutable_data_ptr(), x.numel() / cols, cols,
                          *kernelType(x.scalar_type()), *kernelType(outType),
                          at::cuda::getCurrentCUDAStream(x.device().index()).stream()));
        return out;
    }
};

// Elementwise: gelu and silu take one tensor and nothing the kernels care about.
class CudaUnaryProvider : public CudaProvider {
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
    std::string displayName() const override { return typeName() + "(approximate=" + approximateName() + ")"; }
    nlohmann::json settings() const override { return {{"type", typeName()}, {"approximate", approximateName()}}; }

protected:
    void loadSettings(const nlohmann::json& settings) override
    {
        const std::string where = "provider '" + typeName() + "'";
        for (const auto& [key, value] : settings.items()) {
            if (key == "type")
                continue;
            if (key != "approximate")
                throw Error(where, "unknown setting '" + key + "' (known: approximate)");
            if (!value.is_string())
                throw Error(where, "setting 'approximate' must be a string");
            const auto name = value.get<std::string>();
            if (name == "none")
                m_approximation = ck::GeluApproximation::None;
            else if (name == "tanh")
                m_approximation = ck::GeluApproximation::Tanh;
            else
                throw Error(where, "unknown approximate '" + name + "' (known: none, tanh)");
        }
    }

    cudaError_t launch(const void* x, void* y, int64_t n, ck::DType type, cudaStream_t stream) const override
    {
        return ck::gelu(x, y, n, m_approximation, type, stream);
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
        return ck::silu(x, y, n, type, stream);
    }
};

} // namespace
#endif

void registerCudaProviders(ProviderRegistry& registry)
{
#ifdef KFORGE_WITH_CUDA
    const std::string dtypes = " (CUDA tensors of float32, bfloat16, float16)";
    registry.add({"CudaLayerNormProvider",
                  Function::LayerNorm,
                  {"cuda"},
                  "layer_norm by a CUDA kernel: one block per row, float32 math; weight and bias optional, of the "
                  "input's dtype or float32" +
                      dtypes,
                  [] { return std::make_unique<CudaLayerNormProvider>(); }});
    registry.add({"CudaRmsNormProvider",
                  Function::RmsNorm,
                  {"cuda"},
                  "rms_norm by a CUDA kernel: one block per row, float32 math; weight optional" + dtypes,
                  [] { return std::make_unique<CudaRmsNormProvider>(); }});
    registry.add({"CudaSoftmaxProvider",
                  Function::Softmax,
                  {"cuda"},
                  "softmax over the last dimension by a CUDA kernel: one block per row, online max and sum; "
                  "dtype=None, the input's or float32" +
                      dtypes,
                  [] { return std::make_unique<CudaSoftmaxProvider>(); }});
    registry.add({"CudaGeluProvider",
                  Function::Gelu,
                  {"cuda"},
                  "gelu by an elementwise CUDA kernel, computing the form the setting 'approximate' names (none: "
                  "exact, with erf; tanh)" +
                      dtypes,
                  [] { return std::make_unique<CudaGeluProvider>(); },
                  {{"approximate", {{"type", "string"}, {"enum", {"none", "tanh"}}, {"default", "none"}}}}});
    registry.add({"CudaSiluProvider", Function::Silu, {"cuda"}, "silu by an elementwise CUDA kernel" + dtypes, [] {
                      return std::make_unique<CudaSiluProvider>();
                  }});
#else
    (void)registry;
#endif
}

} // namespace kforge::providers
