// SPDX-License-Identifier: Apache-2.0
#include "model/python_defined_ops.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace kforge {
namespace {

// transformers.integrations.moe._grouped_mm_fallback: rows of `input` sorted by expert, `offs` the running count of
// rows per expert; expert i's rows are multiplied by weight[i] (input_dim x output_dim). The checks are those of its
// fake (shape) function, so a program that traced in Python is refused here for the same reasons only.
at::Tensor groupedMmFallback(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& offs)
{
    TORCH_CHECK(input.dim() == 2, "grouped_mm_fallback: input must be 2D (S, input_dim), got ", input.sizes());
    TORCH_CHECK(weight.dim() == 3, "grouped_mm_fallback: weight must be 3D (num_experts, input_dim, output_dim), got ",
                weight.sizes());
    TORCH_CHECK(offs.dim() == 1, "grouped_mm_fallback: offs must be 1D (num_experts,), got ", offs.sizes());
    TORCH_CHECK(offs.size(0) == weight.size(0), "grouped_mm_fallback: offs length ", offs.size(0),
                " must match the number of experts ", weight.size(0));
    TORCH_CHECK(input.size(1) == weight.size(1), "grouped_mm_fallback: input_dim mismatch: input has ", input.size(1),
                ", weight has ", weight.size(1));
    TORCH_CHECK(offs.scalar_type() == at::kInt || offs.scalar_type() == at::kLong,
                "grouped_mm_fallback: offs must be an integer tensor, got ", offs.scalar_type());
    at::Tensor output = at::zeros({input.size(0), weight.size(2)}, input.options());
    const at::Tensor ends = offs.to(at::kCPU, at::kLong).contiguous(); // one device sync, as in Python
    const int64_t* end = ends.data_ptr<int64_t>();
    int64_t start = 0;
    for (int64_t expert = 0; expert < ends.numel(); ++expert) {
        if (end[expert] == start)
            continue;
        at::Tensor rows = output.slice(0, start, end[expert]);
        at::mm_out(rows, input.slice(0, start, end[expert]), weight.select(0, expert));
        start = end[expert];
    }
    return output;
}

// torchao's affine quantization primitives (torchao.quantization.quant_primitives), which programs exported after
// unwrap_tensor_subclass of a dynamic-activation config call on every forward: the integer-domain forms.

// The integer range of `dtype`, narrowed by the given bounds (_get_and_check_qmin_qmax).
std::pair<double, double> quantRange(at::ScalarType dtype, const std::optional<at::Scalar>& quantMin,
                                     const std::optional<at::Scalar>& quantMax)
{
    std::pair<double, double> bounds;
    switch (dtype) {
    case at::kChar:
        bounds = {-128, 127};
        break;
    case at::kByte:
        bounds = {0, 255};
        break;
    case at::kShort:
        bounds = {-32768, 32767};
        break;
    case at::kInt:
        bounds = {-2147483648.0, 2147483647.0};
        break;
    default:
        TORCH_CHECK(false, "torchao affine quantization to ", dtype,
                    ": kforge implements the int8, uint8, int16 and int32 forms only");
    }
    const double low = quantMin ? quantMin->toDouble() : bounds.first;
    const double high = quantMax ? quantMax->toDouble() : bounds.second;
    TORCH_CHECK(low >= bounds.first && high <= bounds.second && low <= high, "torchao quant range [", low, ", ", high,
                "] is outside ", dtype, "'s");
    return {low, high};
}

// The view that puts each block in dimensions of its own, and those dimensions (_get_reduction_params).
std::pair<std::vector<int64_t>, std::vector<int64_t>> blockReduction(c10::IntArrayRef block, c10::IntArrayRef sizes)
{
    TORCH_CHECK(block.size() == sizes.size(), "torchao block_size ", block, " does not match the input's sizes ",
                sizes);
    std::vector<int64_t> shape, dims;
    int64_t dim = 0;
    for (size_t i = 0; i < block.size(); ++i) {
        if (block[i] != sizes[i] && block[i] > 1) {
            TORCH_CHECK(sizes[i] % block[i] == 0, "torchao block_size ", block, " does not divide the input's sizes ",
                        sizes);
            shape.insert(shape.end(), {sizes[i] / block[i], block[i]});
            dims.push_back(dim + 1);
            dim += 2;
        } else {
            shape.push_back(sizes[i]);
            if (block[i] != 1)
                dims.push_back(dim);
            dim += 1;
        }
    }
    return {shape, dims};
}

std::tuple<at::Tensor, at::Tensor>
chooseQParamsAffine(const std::optional<at::Tensor>& maybeInput, c10::string_view mapping,
                    c10::SymIntArrayRef blockSize, at::ScalarType targetDtype,
                    const std::optional<at::Scalar>& quantMin, const std::optional<at::Scalar>& quantMax,
                    std::optional<double> eps, std::optional<at::ScalarType> scaleDtype,
                    std::optional<at::ScalarType> zeroPointDtype, bool keepdim)
{
    TORCH_CHECK(maybeInput.has_value(), "torchao choose_qparams_affine without an input");
    const at::Tensor& input = *maybeInput;
    const auto [low, high] = quantRange(targetDtype, quantMin, quantMax);
    const bool symmetric = mapping == "SYMMETRIC" || mapping == "SYMMETRIC_NO_CLIPPING_ERR";
    TORCH_CHECK(symmetric || mapping == "ASYMMETRIC", "torchao mapping type ", mapping, " is not supported");
    const double smallest = eps ? *eps : (input.scalar_type() == at::kFloat ? 1.1754943508222875e-38 : 6.103515625e-05);
    const c10::IntArrayRef block = C10_AS_INTARRAYREF_SLOW(blockSize);
    const auto [shape, dims] = blockReduction(block, input.sizes());
    const at::Tensor blocks = input.view(shape);
    const at::Tensor minNeg = at::minimum(at::amin(blocks, dims, keepdim), at::zeros({}, input.options()));
    at::Tensor maxPos = at::maximum(at::amax(blocks, dims, keepdim), at::zeros({}, input.options()));
    at::Tensor scale, zeroPoint;
    if (symmetric) {
        if (mapping == "SYMMETRIC") {
            maxPos = at::maximum(-minNeg, maxPos);
            scale = maxPos / ((high - low) / 2);
        } else {
            const at::Tensor smin = minNeg / low, smax = maxPos / high;
            scale = at::where(smin > smax, smin, smax);
        }
        zeroPoint = at::full_like(scale, int64_t((high + low + 1) / 2));
        scale = at::clamp(scale, smallest);
    } else {
        scale = at::clamp((maxPos - minNeg) / (high - low), smallest);
        zeroPoint = at::clamp(low - at::round(minNeg / scale), low, high);
        if (!zeroPointDtype)
            zeroPointDtype = at::kInt;
    }
    if (keepdim) {
        std::vector<int64_t> out;
        for (size_t i = 0; i < block.size(); ++i)
            out.push_back(input.size(int64_t(i)) / block[i]);
        scale = scale.reshape(out);
        zeroPoint = zeroPoint.reshape(out);
    }
    return {scale.to(scaleDtype.value_or(input.scalar_type())),
            zeroPointDtype ? zeroPoint.to(*zeroPointDtype) : zeroPoint};
}

at::Tensor quantizeAffine(const at::Tensor& input, c10::SymIntArrayRef blockSize, const at::Tensor& scale,
                          const std::optional<at::Tensor>& zeroPoint, at::ScalarType outputDtype,
                          const std::optional<at::Scalar>& quantMin, const std::optional<at::Scalar>& quantMax)
{
    TORCH_CHECK(input.scalar_type() == at::kFloat || input.scalar_type() == at::kHalf ||
                    input.scalar_type() == at::kBFloat16,
                "torchao quantize_affine of ", input.scalar_type(), ": float32, float16 or bfloat16 only");
    const auto [low, high] = quantRange(outputDtype, quantMin, quantMax);
    auto [shape, dims] = blockReduction(C10_AS_INTARRAYREF_SLOW(blockSize), input.sizes());
    const at::Tensor blocks = input.view(shape);
    for (const int64_t d : dims)
        shape[size_t(d)] = 1;
    at::Tensor quant = at::round(blocks * (1.0 / scale.view(shape)));
    if (zeroPoint && zeroPoint->numel() > 0)
        quant = quant + zeroPoint->view(shape);
    return at::clamp(quant, low, high).view(input.sizes()).to(outputDtype);
}

// Each op kforge implements, with what defines it in a fragment of its namespace.
using DefineOp = void (*)(torch::Library&);
const std::map<std::string, DefineOp>& knownOps()
{
    static const std::map<std::string, DefineOp> ops{
        {"transformers::grouped_mm_fallback",
         [](torch::Library& library) {
             library.def("grouped_mm_fallback(Tensor input, Tensor weight, Tensor offs) -> Tensor",
                         TORCH_FN(groupedMmFallback));
         }},
        {"torchao::choose_qparams_affine",
         [](torch::Library& library) {
             library.def("choose_qparams_affine(Tensor? input, str mapping_type, SymInt[] block_size, ScalarType "
                         "target_dtype, Scalar? quant_min=None, Scalar? quant_max=None, float? eps=None, ScalarType? "
                         "scale_dtype=None, ScalarType? zero_point_dtype=None, bool keepdim=False) -> (Tensor, Tensor)",
                         TORCH_FN(chooseQParamsAffine));
         }},
        {"torchao::quantize_affine",
         [](torch::Library& library) {
             library.def("quantize_affine(Tensor input, SymInt[] block_size, Tensor scale, Tensor? zero_point, "
                         "ScalarType output_dtype, Scalar? quant_min=None, Scalar? quant_max=None) -> Tensor",
                         TORCH_FN(quantizeAffine));
         }},
    };
    return ops;
}

} // namespace

bool registerPythonDefinedOp(const std::string& op)
{
    static std::mutex mutex;
    static std::vector<std::unique_ptr<torch::Library>> libraries; // registrations live as long as the process
    const std::lock_guard lock(mutex);
    const auto separator = op.find("::");
    const c10::OperatorName name(op, "");
    if (c10::Dispatcher::singleton().findSchema(name))
        return true;
    const auto known = knownOps().find(op);
    if (known == knownOps().end() || separator == std::string::npos)
        return false;
    // A fragment: a library the user loads later with TORCH_LIBRARY for this namespace is not refused because of it.
    libraries.push_back(std::make_unique<torch::Library>(torch::Library::FRAGMENT, op.substr(0, separator),
                                                         std::nullopt, __FILE__, __LINE__));
    known->second(*libraries.back());
    return c10::Dispatcher::singleton().findSchema(name).has_value();
}

std::string pythonLibraryOf(const std::string& op)
{
    static const std::map<std::string, std::string> libraries{{"transformers", "Hugging Face transformers"},
                                                              {"torchao", "torchao"},
                                                              {"diffusers", "diffusers"},
                                                              {"vllm", "vLLM"},
                                                              {"fbgemm", "FBGEMM GPU"}};
    const auto separator = op.find("::");
    if (separator == std::string::npos)
        return {};
    const auto it = libraries.find(op.substr(0, separator));
    return it == libraries.end() ? std::string() : it->second;
}

} // namespace kforge
