// SPDX-License-Identifier: Apache-2.0
#include "model/pickled_weights.h"

#include <string_view>

namespace kforge {

std::string pickledTensorClass(const char* record, std::size_t bytes)
{
    // torch.save writes pickle protocol 2, stored uncompressed in its zip: a class is a GLOBAL opcode, "c" then
    // "module\nname\n". The subclass is the first class after the rebuild function that makes it.
    const std::string_view text(record, bytes);
    const std::string_view rebuild = "_rebuild_wrapper_subclass\n";
    const auto after = text.find(rebuild);
    if (after == std::string_view::npos)
        return {};
    const auto global = text.find('c', after + rebuild.size());
    if (global == std::string_view::npos)
        return {};
    const auto moduleEnd = text.find('\n', global + 1);
    const auto nameEnd = moduleEnd == std::string_view::npos ? moduleEnd : text.find('\n', moduleEnd + 1);
    if (nameEnd == std::string_view::npos || moduleEnd - global > 200 || nameEnd - moduleEnd > 200)
        return {};
    return std::string(text.substr(global + 1, moduleEnd - global - 1)) + "." +
           std::string(text.substr(moduleEnd + 1, nameEnd - moduleEnd - 1));
}

std::string pickledWeightRefusal(const std::string& name, const std::string& className)
{
    const bool torchao = className.rfind("torchao.", 0) == 0;
    std::string why = "'" + name + "' is stored pickled";
    if (!className.empty())
        why += ": a " + className + ", a tensor subclass saved with its Python class";
    if (torchao)
        why += " (torchao's quantize_ makes it, with a config such as Int8WeightOnlyConfig or "
               "Int8DynamicActivationInt8WeightConfig)";
    why += ". Its ops run in Python, which kforge cannot do: export a program of plain tensors instead, ";
    why += torchao ? "torchao.utils.unwrap_tensor_subclass(model) before torch.export.export (kforge runs it with "
                     "Python's outputs), or compile "
                   : "or compile ";
    why += "an AOTInductor package (torch._inductor.aoti_compile_and_package) and open it with --compiled";
    return why;
}

} // namespace kforge
