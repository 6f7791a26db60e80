// SPDX-License-Identifier: Apache-2.0
#include "model/python_defined_ops.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <map>
#include <memory>
#include <mutex>
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
