// SPDX-License-Identifier: Apache-2.0
// The provider SDK's argument layer (kforge/provider_args.h): one reader of boxed values, and one parse function
// per normal form written with it.
#include <kforge/provider_args.h>

#include <ATen/core/grad_mode.h>
#include <ATen/core/ivalue.h>

#include <limits>
#include <utility>

namespace kforge {

bool needsAutograd(std::initializer_list<const at::Tensor*> tensors)
{
    if (!at::GradMode::is_enabled())
        return false;
    for (const at::Tensor* t : tensors)
        if (t && t->defined() && t->requires_grad())
            return true;
    return false;
}

std::optional<std::vector<std::int64_t>> intList(const c10::IValue& value)
{
    if (value.isIntList())
        return value.toIntVector();
    if (!value.isList())
        return std::nullopt;
    std::vector<std::int64_t> out;
    for (const c10::IValue& e : value.toListRef()) {
        if (e.isInt())
            out.push_back(e.toInt());
        else if (const auto concrete = e.isSymInt() ? e.toSymInt().maybe_as_int() : std::nullopt)
            out.push_back(*concrete);
        else
            return std::nullopt;
    }
    return out;
}

std::optional<std::int64_t> normalizedCols(const at::Tensor& input, const std::vector<std::int64_t>& normalizedShape)
{
    const auto k = static_cast<std::int64_t>(normalizedShape.size());
    if (k < 1 || k > input.dim() || !input.sizes().slice(input.dim() - k).equals(normalizedShape))
        return std::nullopt;
    std::int64_t cols = 1;
    for (std::int64_t d : normalizedShape)
        cols *= d;
    return cols;
}

std::optional<std::int64_t> wrapDim(std::int64_t dim, std::int64_t rank)
{
    rank = std::max<std::int64_t>(rank, 1);
    if (dim < -rank || dim >= rank)
        return std::nullopt;
    return dim < 0 ? dim + rank : dim;
}

// ---- ArgReader -------------------------------------------------------------------------------------------------

ArgReader::ArgReader(const torch::jit::Stack& stack, std::size_t count) : m_stack(stack)
{
    if (stack.size() < count) {
        m_ok = false;
        return;
    }
    m_next = stack.size() - count;
    m_end = stack.size();
}

const c10::IValue* ArgReader::next()
{
    if (!m_ok || m_next >= m_end) {
        m_ok = false;
        return nullptr;
    }
    return &m_stack[m_next++];
}

bool ArgReader::fail()
{
    m_ok = false;
    return false;
}

at::Tensor ArgReader::tensor()
{
    const c10::IValue* v = next();
    if (!v || !v->isTensor() || !v->toTensor().defined())
        return fail(), at::Tensor();
    return v->toTensor();
}

std::optional<at::Tensor> ArgReader::optionalTensor()
{
    const c10::IValue* v = next();
    if (!v || (!v->isNone() && !v->isTensor()))
        return fail(), std::nullopt;
    if (v->isNone() || !v->toTensor().defined())
        return std::nullopt;
    return v->toTensor();
}

std::vector<std::int64_t> ArgReader::intList()
{
    const c10::IValue* v = next();
    auto list = v ? kforge::intList(*v) : std::nullopt;
    if (!list)
        return fail(), std::vector<std::int64_t>();
    return std::move(*list);
}

std::int64_t ArgReader::integer()
{
    const c10::IValue* v = next();
    if (v && v->isInt())
        return v->toInt();
    if (const auto concrete = v && v->isSymInt() ? v->toSymInt().maybe_as_int() : std::nullopt)
        return *concrete;
    return fail(), 0;
}

double ArgReader::floating()
{
    const c10::IValue* v = next();
    if (!v || !v->isDouble())
        return fail(), 0.0;
    return v->toDouble();
}

std::optional<double> ArgReader::optionalFloating()
{
    const c10::IValue* v = next();
    if (v && v->isNone())
        return std::nullopt;
    if (!v || !v->isDouble())
        return fail(), std::nullopt;
    return v->toDouble();
}

bool ArgReader::boolean()
{
    const c10::IValue* v = next();
    if (!v || !v->isBool())
        return fail();
    return v->toBool();
}

std::string ArgReader::string()
{
    const c10::IValue* v = next();
    if (!v || !v->isString())
        return fail(), std::string();
    return v->toStringRef();
}

std::optional<at::ScalarType> ArgReader::optionalScalarType()
{
    const c10::IValue* v = next();
    if (v && v->isNone())
        return std::nullopt;
    if (!v || !v->isInt()) // a ScalarType is boxed as its int
        return fail(), std::nullopt;
    return v->toScalarType();
}

// ---- the normal forms ------------------------------------------------------------------------------------------

namespace {

// Parses into the optional itself (no moves of the tensors), emptied when a read failed.
template <class Args, class Read> std::optional<Args> parseForm(const torch::jit::Stack& stack, Read read)
{
    ArgReader r(stack, Args::kArguments);
    std::optional<Args> out(std::in_place);
    read(r, *out);
    if (!r.ok())
        out.reset();
    return out;
}

} // namespace

std::optional<UnaryArgs> parseUnary(const torch::jit::Stack& stack)
{
    return parseForm<UnaryArgs>(stack, [](ArgReader& r, UnaryArgs& a) { a.self = r.tensor(); });
}

std::optional<GeluArgs> parseGelu(const torch::jit::Stack& stack)
{
    return parseForm<GeluArgs>(stack, [](ArgReader& r, GeluArgs& a) {
        a.self = r.tensor();
        a.approximate = r.string();
    });
}

std::optional<LayerNormArgs> parseLayerNorm(const torch::jit::Stack& stack)
{
    return parseForm<LayerNormArgs>(stack, [](ArgReader& r, LayerNormArgs& a) {
        a.input = r.tensor();
        a.normalizedShape = r.intList();
        a.weight = r.optionalTensor();
        a.bias = r.optionalTensor();
        a.eps = r.floating();
        a.cudnnEnable = r.boolean();
    });
}

double RmsNormArgs::epsOrDefault() const { return eps.value_or(std::numeric_limits<float>::epsilon()); }

std::optional<RmsNormArgs> parseRmsNorm(const torch::jit::Stack& stack)
{
    return parseForm<RmsNormArgs>(stack, [](ArgReader& r, RmsNormArgs& a) {
        a.input = r.tensor();
        a.normalizedShape = r.intList();
        a.weight = r.optionalTensor();
        a.eps = r.optionalFloating();
    });
}

std::optional<SoftmaxArgs> parseSoftmax(const torch::jit::Stack& stack)
{
    return parseForm<SoftmaxArgs>(stack, [](ArgReader& r, SoftmaxArgs& a) {
        a.self = r.tensor();
        a.dim = r.integer();
        a.dtype = r.optionalScalarType();
    });
}

std::optional<ScaledDotProductAttentionArgs> parseScaledDotProductAttention(const torch::jit::Stack& stack)
{
    return parseForm<ScaledDotProductAttentionArgs>(stack, [](ArgReader& r, ScaledDotProductAttentionArgs& a) {
        a.query = r.tensor();
        a.key = r.tensor();
        a.value = r.tensor();
        a.attnMask = r.optionalTensor();
        a.dropoutP = r.floating();
        a.isCausal = r.boolean();
        a.scale = r.optionalFloating();
        a.enableGqa = r.boolean();
    });
}

std::optional<ConvolutionArgs> parseConvolution(const torch::jit::Stack& stack)
{
    return parseForm<ConvolutionArgs>(stack, [](ArgReader& r, ConvolutionArgs& a) {
        a.input = r.tensor();
        a.weight = r.tensor();
        a.bias = r.optionalTensor();
        a.stride = r.intList();
        a.padding = r.intList();
        a.dilation = r.intList();
        a.groups = r.integer();
    });
}

std::optional<LinearArgs> parseLinear(const torch::jit::Stack& stack)
{
    return parseForm<LinearArgs>(stack, [](ArgReader& r, LinearArgs& a) {
        a.input = r.tensor();
        a.weight = r.tensor();
        a.bias = r.optionalTensor();
    });
}

} // namespace kforge
