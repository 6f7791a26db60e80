#include "model/output_digest.h"

#include "model/model_inputs.h"

namespace kforge {
namespace {

void digestInto(const c10::IValue& value, const std::string& path, std::vector<TensorDigest>& out)
{
    if (value.isTensor()) {
        const at::Tensor t = value.toTensor().detach();
        TensorDigest d;
        d.path = path;
        d.dtype = describeIValue(value).substr(0, describeIValue(value).find('['));
        d.device = t.device().str();
        d.shape = t.sizes().vec();
        // Reductions in double without copying the tensor to double first (this runs after every forward).
        if (t.numel() && !t.is_complex()) {
            const at::Tensor v = t.scalar_type() == at::kBool ? t.to(at::kByte) : t;
            d.sum = v.sum(at::kDouble).item<double>();
            d.maxAbs = v.abs().max().to(at::kDouble).item<double>();
        }
        out.push_back(std::move(d));
    } else if (value.isTuple() || value.isList()) {
        const auto elements = value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
        for (size_t i = 0; i < elements.size(); ++i)
            digestInto(elements[i], path.empty() ? std::to_string(i) : path + "." + std::to_string(i), out);
    } else if (value.isGenericDict()) {
        for (const auto& item : value.toGenericDict()) {
            const std::string key = item.key().isString() ? item.key().toStringRef() : item.key().tagKind();
            digestInto(item.value(), path.empty() ? key : path + "." + key, out);
        }
    }
}

} // namespace

std::vector<TensorDigest> digestOutput(const c10::IValue& output)
{
    std::vector<TensorDigest> digests;
    digestInto(output, "", digests);
    return digests;
}

} // namespace kforge
