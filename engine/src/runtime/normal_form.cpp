// SPDX-License-Identifier: Apache-2.0
#include "runtime/normal_form.h"

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace kforge::runtime {
namespace {

// _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, ...flags) and
// convolution(...) share their first nine arguments.
constexpr size_t kTransposed = 6, kOutputPadding = 7, kGroups = 8;

std::optional<std::vector<std::int64_t>> ints(const c10::IValue& v)
{
    if (!v.isList())
        return std::nullopt;
    std::vector<std::int64_t> out;
    for (const c10::IValue& e : v.toListRef()) {
        if (e.isInt())
            out.push_back(e.toInt());
        else if (e.isSymInt() && e.toSymInt().maybe_as_int())
            out.push_back(*e.toSymInt().maybe_as_int());
        else
            return std::nullopt;
    }
    return out;
}

// padding="valid" or "same" as the int padding conv*d takes (what ATen's _convolution_mode computes), for
// spatial dims of kernel sizes `kernel` and dilations `dilation` (length 1: all dims).
const char* resolvePaddingString(const std::string& mode, const std::vector<std::int64_t>& kernel,
                                 const std::vector<std::int64_t>& dilation, const std::vector<std::int64_t>& stride,
                                 std::vector<std::int64_t>& padding)
{
    padding.assign(kernel.size(), 0);
    if (mode == "valid")
        return nullptr;
    if (mode != "same")
        return "a padding string other than \"valid\" and \"same\"";
    for (std::int64_t s : stride)
        if (s != 1)
            return "padding=\"same\" with a stride other than 1 (ATen refuses it)";
    for (size_t i = 0; i < kernel.size(); ++i) {
        const std::int64_t d = dilation.size() == 1 ? dilation[0] : dilation.at(i);
        const std::int64_t total = d * (kernel[i] - 1);
        if (total % 2 != 0)
            return "padding=\"same\" that needs asymmetric padding (an even kernel), which int padding cannot express";
        padding[i] = total / 2;
    }
    return nullptr;
}

std::optional<int> weightRank(c10::ArrayRef<c10::IValue> args)
{
    if (args.size() < 2 || !args[1].isTensor())
        return std::nullopt;
    return int(args[1].toTensor().dim());
}

} // namespace

std::optional<Function> functionOfCall(const OpForm& form, c10::ArrayRef<c10::IValue> args)
{
    if (form.function)
        return form.function;
    const auto rank = weightRank(args);
    if (form.kind == FormKind::Convolution && rank && args.size() > kTransposed && args[kTransposed].isBool())
        return classifyConvolution(*rank, args[kTransposed].toBool());
    if (form.kind == FormKind::ConvolutionMode && rank)
        return classifyConvolution(*rank, false);
    return std::nullopt;
}

const char* toNormalForm(const OpForm& form, torch::jit::Stack& args)
{
    switch (form.kind) {
    case FormKind::Normal:
    case FormKind::InPlace:
    case FormKind::Variant:
    case FormKind::Opaque:
        return nullptr;
    case FormKind::Convolution: {
        // -> conv{N}d(input, weight, bias, stride, padding, dilation, groups) or
        //    conv_transpose{N}d(input, weight, bias, stride, padding, output_padding, groups, dilation).
        // _convolution's flags (benchmark, deterministic, cudnn_enabled, allow_tf32) are the global context's at
        // run time, as for F.conv2d.
        torch::jit::Stack out(args.begin(), args.begin() + 5);
        const bool transposed = args[kTransposed].toBool();
        if (transposed) {
            out.push_back(args[kOutputPadding]);
            out.push_back(args[kGroups]);
            out.push_back(args[5]);
        } else {
            out.push_back(args[5]);
            out.push_back(args[kGroups]);
        }
        args = std::move(out);
        return nullptr;
    }
    case FormKind::PaddingString:
    case FormKind::ConvolutionMode: {
        // (input, weight, bias, stride, str padding, dilation, groups) -> conv{N}d with int padding.
        if (args.size() != 7 || !args[4].isString() || !args[1].isTensor())
            return "a convolution call with arguments this form does not have";
        const at::Tensor& weight = args[1].toTensor();
        const auto stride = ints(args[3]);
        const auto dilation = ints(args[5]);
        if (!stride || !dilation || dilation->empty())
            return "symbolic stride or dilation";
        const std::vector<std::int64_t> kernel(weight.sizes().begin() + 2, weight.sizes().end());
        std::vector<std::int64_t> padding;
        if (const char* why = resolvePaddingString(args[4].toStringRef(), kernel, *dilation, *stride, padding))
            return why;
        args[4] = c10::IValue(padding);
        return nullptr;
    }
    }
    return "an unknown form";
}

const c10::OperatorHandle* normalOp(Function function)
{
    static const std::vector<std::optional<c10::OperatorHandle>> handles = [] {
        std::vector<std::optional<c10::OperatorHandle>> out;
        for (Function f : allFunctions()) {
            const OpOverload& o = functionInfo(f).normalForm;
            out.push_back(c10::Dispatcher::singleton().findSchema({std::string(o.name), std::string(o.overload)}));
        }
        return out;
    }();
    const auto& h = handles[static_cast<size_t>(function)];
    return h ? &*h : nullptr;
}

} // namespace kforge::runtime
