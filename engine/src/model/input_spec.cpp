// SPDX-License-Identifier: Apache-2.0
#include <kforge/error.h>
#include <kforge/input_spec.h>

#include <charconv>
#include <utility>

namespace kforge {
namespace {

// Accepted spellings, canonical name first; PyTorch's aliases are accepted too.
const std::vector<std::pair<std::string, std::vector<std::string>>>& dtypeAliases()
{
    static const std::vector<std::pair<std::string, std::vector<std::string>>> aliases{
        {"float32", {"float32", "float", "f32"}},
        {"float16", {"float16", "half", "f16"}},
        {"bfloat16", {"bfloat16", "bf16"}},
        {"float64", {"float64", "double", "f64"}},
        {"int64", {"int64", "long", "i64"}},
        {"int32", {"int32", "int", "i32"}},
        {"int16", {"int16", "short", "i16"}},
        {"int8", {"int8", "i8"}},
        {"uint8", {"uint8", "u8"}},
        {"bool", {"bool"}},
    };
    return aliases;
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

constexpr std::int64_t kMaxElements = std::int64_t{1} << 40; // far beyond any real input; stops overflow
// Far beyond any real input too (PyTorch's CUDA kernels index at most 25); bounds what a generated spec costs.
constexpr size_t kMaxDims = 64;

} // namespace

std::vector<std::string> supportedDtypes()
{
    std::vector<std::string> names;
    for (const auto& [canonical, _] : dtypeAliases())
        names.push_back(canonical);
    return names;
}

TensorSpec parseTensorSpec(std::string_view text)
{
    const std::string where = "input spec '" + std::string(text) + "'";
    const auto fail = [&](const std::string& why) -> TensorSpec { throw Error(where, why); };
    const std::string_view s = trim(text);
    const auto open = s.find('[');
    if (open == std::string_view::npos || s.back() != ']')
        return fail("expected DTYPE[D0,D1,...], e.g. float32[1,3,224,224]");

    TensorSpec spec;
    spec.text = std::string(text);
    const std::string_view dtype = trim(s.substr(0, open));
    for (const auto& [canonical, names] : dtypeAliases())
        for (const auto& name : names)
            if (name == dtype)
                spec.dtype = canonical;
    if (spec.dtype.empty()) {
        std::string list;
        for (const auto& name : supportedDtypes())
            list += (list.empty() ? "" : ", ") + name;
        return fail("unknown dtype '" + std::string(dtype) + "' (supported: " + list + ")");
    }

    std::string_view dims = trim(s.substr(open + 1, s.size() - open - 2));
    std::int64_t elements = 1;
    while (!dims.empty()) {
        const auto comma = dims.find(',');
        const std::string_view token = trim(dims.substr(0, comma));
        std::int64_t value = 0;
        const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
        if (ec == std::errc::result_out_of_range)
            return fail("dimension '" + std::string(token) + "' is too large");
        if (token.empty() || ec != std::errc() || end != token.data() + token.size())
            return fail("dimension '" + std::string(token) + "' is not a whole number");
        if (value < 0)
            return fail("dimension " + std::to_string(value) + " is negative");
        if (value > 0 && elements > kMaxElements / value)
            return fail("the tensor would have more than 2^40 elements");
        elements *= value;
        if (spec.shape.size() == kMaxDims)
            return fail("more than " + std::to_string(kMaxDims) + " dimensions");
        spec.shape.push_back(value);
        if (comma == std::string_view::npos)
            break;
        dims = dims.substr(comma + 1);
        if (trim(dims).empty())
            return fail("trailing comma in the shape");
    }
    return spec;
}

std::string formatTensorSpec(const TensorSpec& spec)
{
    std::string out = spec.dtype + "[";
    for (size_t i = 0; i < spec.shape.size(); ++i) {
        if (i)
            out += ',';
        out += std::to_string(spec.shape[i]); // (not `"," + to_string`: GCC 12 warns -Wrestrict on that form)
    }
    return out + "]";
}

} // namespace kforge
