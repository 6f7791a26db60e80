// SPDX-License-Identifier: Apache-2.0
#include "model/exported_metadata.h"

#include <string_view>

namespace kforge {
namespace {

// Splits at `separator` outside brackets and parentheses (module paths may hold "[0]", types "(...)").
std::vector<std::string> splitTopLevel(std::string_view text, char separator)
{
    std::vector<std::string> parts;
    int depth = 0;
    std::string part;
    for (char c : text) {
        if (c == '[' || c == '(')
            ++depth;
        else if ((c == ']' || c == ')') && depth > 0)
            --depth;
        if (c == separator && depth == 0) {
            parts.push_back(std::move(part));
            part.clear();
        } else {
            part += c;
        }
    }
    parts.push_back(std::move(part));
    return parts;
}

} // namespace

std::optional<ExportedTarget> exportedTarget(const std::string& target)
{
    if (target.rfind("torch.ops.", 0) != 0)
        return std::nullopt;
    const std::string rest = target.substr(10);
    const auto first = rest.find('.'), last = rest.rfind('.');
    if (first == std::string::npos || first == last)
        return std::nullopt;
    const std::string overload = rest.substr(last + 1);
    return ExportedTarget{rest.substr(0, first) + "::" + rest.substr(first + 1, last - first - 1),
                          overload == "default" ? std::string() : overload};
}

std::vector<ExportedFrame> exportedModuleStack(const std::string& text)
{
    std::vector<ExportedFrame> stack;
    if (text.empty())
        return stack;
    // export gives the nodes it makes from tensor metadata (sym_size of a dynamic dimension) a placeholder frame
    // of this name in every field: no module of the model, so the node is the root's.
    constexpr std::string_view placeholder = "_empty_nn_module_stack_from_metadata_hook";
    for (const std::string& entry : splitTopLevel(text, ';')) {
        const auto fields = splitTopLevel(entry, ',');
        if (fields.size() >= 3 && fields[1] != placeholder)
            stack.push_back({fields[0], fields[1], fields[2]});
    }
    return stack;
}

bool isCatalogFormOf(const std::string& op, const std::string& overload, std::optional<Function> function)
{
    for (const OpForm& form : allOpForms())
        if (form.op.name == op && form.op.overload == overload &&
            (!function || !form.function || *form.function == *function))
            return true;
    return false;
}

std::pair<std::string, std::string> exportedTorchFn(const std::string& text)
{
    const auto semicolon = text.find(';');
    if (semicolon == std::string::npos)
        return {};
    const std::string qualified = text.substr(semicolon + 1);
    const auto dot = qualified.rfind('.');
    return {text.substr(0, semicolon), dot == std::string::npos ? qualified : qualified.substr(dot + 1)};
}

} // namespace kforge
