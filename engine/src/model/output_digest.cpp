// SPDX-License-Identifier: Apache-2.0
#include "model/output_digest.h"

#include "model/model_inputs.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

namespace kforge {
namespace {

template <typename Visit> void visitTensors(const c10::IValue& value, const std::string& path, Visit&& visit)
{
    if (value.isTensor()) {
        visit(path, value.toTensor());
    } else if (value.isTuple() || value.isList()) {
        const auto elements = value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
        for (size_t i = 0; i < elements.size(); ++i)
            visitTensors(elements[i], path.empty() ? std::to_string(i) : path + "." + std::to_string(i), visit);
    } else if (value.isGenericDict()) {
        for (const auto& item : value.toGenericDict()) {
            const std::string key = item.key().isString() ? item.key().toStringRef() : item.key().tagKind();
            visitTensors(item.value(), path.empty() ? key : path + "." + key, visit);
        }
    }
}

TensorDigest digestOf(const std::string& path, const at::Tensor& tensor)
{
    const at::Tensor t = tensor.detach();
    TensorDigest d;
    d.path = path;
    const std::string description = describeIValue(tensor);
    d.dtype = description.substr(0, description.find('['));
    d.device = t.device().str();
    d.shape = t.sizes().vec();
    // Reductions in double without copying the tensor to double first (this runs after every forward).
    if (t.numel() && !t.is_complex()) {
        const at::Tensor v = t.scalar_type() == at::kBool ? t.to(at::kByte) : t;
        d.sum = v.sum(at::kDouble).item<double>();
        // max |x| from one min/max pass: no |x| copy of the output (bench_forward: session_inactive - no_digest).
        const auto [low, high] = at::aminmax(v);
        d.maxAbs = std::max(std::abs(low.item<double>()), std::abs(high.item<double>()));
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

} // namespace kforge
