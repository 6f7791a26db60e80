// SPDX-License-Identifier: Apache-2.0
#include "model/output_digest.h"

#include "model/model_inputs.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace kforge {
namespace {

// A dict entry's path part: its key when it is a string or an int ("0", "7" for Dict[int, Tensor]), else its type.
std::string keyName(const c10::IValue& key)
{
    if (key.isString())
        return key.toStringRef();
    if (key.isInt())
        return std::to_string(key.toInt());
    return key.tagKind();
}

template <typename Visit> void visitLeaves(const c10::IValue& value, const std::string& path, Visit&& visit)
{
    if (value.isTuple() || value.isList()) {
        const auto elements = value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
        for (size_t i = 0; i < elements.size(); ++i)
            visitLeaves(elements[i], path.empty() ? std::to_string(i) : path + "." + std::to_string(i), visit);
    } else if (value.isGenericDict()) {
        for (const auto& item : value.toGenericDict()) {
            const std::string key = keyName(item.key());
            visitLeaves(item.value(), path.empty() ? key : path + "." + key, visit);
        }
    } else {
        visit(path, value);
    }
}

template <typename Visit> void visitTensors(const c10::IValue& value, const std::string& path, Visit&& visit)
{
    visitLeaves(value, path, [&](const std::string& at, const c10::IValue& leaf) {
        if (leaf.isTensor())
            visit(at, leaf.toTensor());
    });
}

// max |x| of float32 values without NaN: the largest and the smallest value, four lanes at a time (GCC vector
// extensions of SSE's width, which every x86-64 has: maxps/minps; wider ones without ISA flags are split into scalar
// code). A maximum does not depend on the order it is taken in, so this is Python's
// t.double().abs().max() bit for bit, for a fraction of aminmax's cost with its two scalar reads on a small output.
double maxAbsOfFloats(const float* data, int64_t n)
{
    using Lanes = float __attribute__((vector_size(16)));
    constexpr float inf = std::numeric_limits<float>::infinity();
    Lanes high = {-inf, -inf, -inf, -inf}, low = -high;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        Lanes v;
        std::memcpy(&v, data + i, sizeof v);
        high = v > high ? v : high;
        low = v < low ? v : low;
    }
    float top = -inf, bottom = inf;
    for (int lane = 0; lane < 4; ++lane) {
        top = std::max(top, high[lane]);
        bottom = std::min(bottom, low[lane]);
    }
    for (; i < n; ++i) {
        top = std::max(top, data[i]);
        bottom = std::min(bottom, data[i]);
    }
    return std::max(std::abs(double(top)), std::abs(double(bottom)));
}

// `sum` is the tensor's sum: NaN when it holds a NaN (or both infinities), which ATen's aminmax propagates as
// Python's max does.
double maxAbsOf(const at::Tensor& t, double sum)
{
    if (t.scalar_type() == at::kFloat && t.device().is_cpu() && t.layout() == at::kStrided && t.is_contiguous() &&
        !std::isnan(sum))
        return maxAbsOfFloats(t.const_data_ptr<float>(), t.numel());
    const auto [low, high] = at::aminmax(t);
    return std::max(std::abs(low.item<double>()), std::abs(high.item<double>()));
}

// The sum in double, as ATen reduces it (the same order as Python's t.double().sum(), which the corpus compares bit
// for bit), without copying the tensor to double first; on the CPU the result is read without a dispatch.
double sumOf(const at::Tensor& t)
{
    const at::Tensor sum = t.sum(at::kDouble);
    return sum.device().is_cpu() && sum.layout() == at::kStrided ? *sum.const_data_ptr<double>() : sum.item<double>();
}

// Runs after every ModelSession::forward (not forwardDiscardingOutputs): one ATen reduction and no string work beyond
// the digest's own fields (bench_forward: uninstr_digest against uninstrumented).
TensorDigest digestOf(const std::string& path, const at::Tensor& t)
{
    at::NoGradGuard noGrad; // the reductions record nothing, so the output needs no detached view
    TensorDigest d;
    d.path = path;
    d.dtype = dtypeName(t.scalar_type());
    d.device = t.device().str();
    d.shape = t.sizes().vec();
    if (t.numel() && !t.is_complex()) {
        const at::Tensor v = t.scalar_type() == at::kBool ? t.to(at::kByte) : t; // bools reduced as 0/1 bytes
        d.sum = sumOf(v);
        d.maxAbs = maxAbsOf(v, d.sum);
    }
    return d;
}

} // namespace

std::vector<TensorDigest> digestOutput(const c10::IValue& output)
{
    std::vector<TensorDigest> digests;
    visitTensors(output, "",
                 [&](const std::string& path, const at::Tensor& t) { digests.push_back(digestOf(path, t)); });
    return digests;
}

std::vector<std::pair<std::string, at::Tensor>> flattenOutput(const c10::IValue& output)
{
    std::vector<std::pair<std::string, at::Tensor>> tensors;
    visitTensors(output, "", [&](const std::string& path, const at::Tensor& t) { tensors.emplace_back(path, t); });
    return tensors;
}

std::vector<std::pair<std::string, c10::IValue>> flattenOutputLeaves(const c10::IValue& output)
{
    std::vector<std::pair<std::string, c10::IValue>> leaves;
    visitLeaves(output, "", [&](const std::string& path, const c10::IValue& leaf) { leaves.emplace_back(path, leaf); });
    return leaves;
}

} // namespace kforge
