// SPDX-License-Identifier: Apache-2.0
#include "model/compiled_inputs.h"

#include "model/model_inputs.h"

#include <map>
#include <regex>
#include <sstream>

namespace kforge {
namespace {

std::string describeExpected(const CompiledInput& in)
{
    std::string text = (in.dtype.empty() ? std::string("tensor") : in.dtype) + "[";
    for (size_t d = 0; d < in.sizes.size(); ++d)
        text += (d ? ", " : "") + (in.sizes[d] ? std::to_string(*in.sizes[d]) : std::string("any"));
    return text + "]";
}

std::string describeGiven(const at::Tensor& t)
{
    std::string text = dtypeName(t.scalar_type()) + "[";
    for (int64_t d = 0; d < t.dim(); ++d)
        text += (d ? ", " : "") + std::to_string(t.size(d));
    return text + "]";
}

} // namespace

std::vector<CompiledInput> compiledInputsOf(const std::string& wrapperSource)
{
    static const std::regex handle(R"(ConstantHandle (\w+) = ConstantHandle\(input_handles\[(\d+)\]\);)");
    static const std::regex dtype(R"((\w+)_expected_dtype = aoti_torch_dtype_(\w+)\(\);)");
    static const std::regex fixed(R"(if \((\d+) != (\w+)_size\[(\d+)\]\))");
    static const std::regex anySize(R"((\w+)_size\[(\d+)\])");
    std::map<std::string, size_t> inputOf; // generated variable -> input index
    std::vector<CompiledInput> out;
    std::istringstream lines(wrapperSource);
    const auto inputFor = [&](const std::string& var) -> CompiledInput* {
        const auto it = inputOf.find(var);
        return it == inputOf.end() ? nullptr : &out[it->second];
    };
    const auto reach = [](CompiledInput& in, size_t dim) {
        if (in.sizes.size() <= dim)
            in.sizes.resize(dim + 1);
    };
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (line.find("input_handles[") != std::string::npos && std::regex_search(line, m, handle)) {
            const size_t index = std::stoul(m[2]);
            if (out.size() <= index)
                out.resize(index + 1);
            inputOf[m[1]] = index;
        } else if (line.find("_expected_dtype = aoti_torch_dtype_") != std::string::npos &&
                   std::regex_search(line, m, dtype)) {
            if (CompiledInput* in = inputFor(m[1]))
                in->dtype = m[2];
        } else if (line.find("_size[") != std::string::npos) {
            if (std::regex_search(line, m, fixed)) {
                if (CompiledInput* in = inputFor(m[2])) {
                    const size_t dim = std::stoul(m[3]);
                    reach(*in, dim);
                    in->sizes[dim] = std::stoll(m[1]);
                }
            } else if (std::regex_search(line, m, anySize)) { // a dynamic dimension's range check
                if (CompiledInput* in = inputFor(m[1]))
                    reach(*in, std::stoul(m[2]));
            }
        }
    }
    return out;
}

std::string compiledInputMismatch(const std::vector<CompiledInput>& expected, const std::vector<at::Tensor>& inputs)
{
    for (size_t i = 0; i < expected.size() && i < inputs.size(); ++i) {
        const CompiledInput& want = expected[i];
        const at::Tensor& given = inputs[i];
        const auto refuse = [&](const std::string& why) {
            return "input " + std::to_string(i + 1) + " is " + describeGiven(given) +
                   "; the package was compiled for " + describeExpected(want) + " (" + why + ")";
        };
        if (!want.dtype.empty() && dtypeName(given.scalar_type()) != want.dtype)
            return refuse("another dtype");
        if (want.sizes.empty())
            continue;
        if (given.dim() != int64_t(want.sizes.size()))
            return refuse("another number of dimensions");
        for (size_t d = 0; d < want.sizes.size(); ++d)
            if (want.sizes[d] && given.size(int64_t(d)) != *want.sizes[d])
                return refuse("dimension " + std::to_string(d) +
                              " is static in the compiled code: export with a "
                              "dynamic dimension, torch.export.Dim, and compile again to vary it");
    }
    return {};
}

} // namespace kforge
