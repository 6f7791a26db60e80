// SPDX-License-Identifier: Apache-2.0
// kforge functions: the function catalog (function_catalog.def): what a plan entry can name, every ATen form a
// function takes in TorchScript graphs, and its reference provider.
#include "commands.h"
#include "output.h"

#include <kforge/functions.h>
#include <kforge/provider_catalog.h>

#include <map>

namespace kforge::cli {
namespace {

nlohmann::ordered_json toJson(const FunctionInfo& f, const std::vector<std::string>& providers)
{
    nlohmann::ordered_json forms = nlohmann::ordered_json::array();
    for (const OpForm& form : f.forms)
        forms.push_back({{"op", std::string(form.op.name)},
                         {"overload", std::string(form.op.overload)},
                         {"kind", std::string(formKindName(form.kind))}});
    nlohmann::ordered_json python = nlohmann::ordered_json::array({"torch.nn.functional." + std::string(f.name)});
    for (std::string_view alias : f.aliases)
        python.push_back("torch.nn.functional." + std::string(alias));
    return {{"name", std::string(f.name)},
            {"category", std::string(f.category)},
            {"normal_form", qualifiedOpName(f.normalForm)},
            {"forms", forms},
            {"python", python},
            {"reference_provider", referenceProviderType(f.function)},
            {"providers", providers}};
}

// Forms several functions share (traced convolutions) and opaque ops, for the notes under the table.
std::string sharedForms(FormKind kind)
{
    std::string out;
    for (const OpForm& form : allOpForms())
        if (!form.function && form.kind == kind)
            out += (out.empty() ? "" : ", ") + qualifiedOpName(form.op);
    return out;
}

} // namespace

Command addFunctionsCommand(CLI::App& app)
{
    auto* cmd = app.add_subcommand(
        "functions", "List the replaceable functions: the ATen forms each takes in graphs and its providers");
    addJsonFlag(cmd);
    return {
        cmd, [](Report& report) {
            std::map<std::string, std::vector<std::string>> providers;
            for (const auto& p : providerCatalog())
                providers[p.function].push_back(p.typeName);
            report.json = nlohmann::ordered_json::array();
            for (Function f : allFunctions())
                report.json.push_back(toJson(functionInfo(f), providers[std::string(functionName(f))]));
            std::vector<std::vector<std::string>> rows;
            for (Function f : allFunctions()) {
                const FunctionInfo& info = functionInfo(f);
                std::string forms; // without "aten::"; --json has them all
                for (size_t i = 1; i < info.forms.size() && i <= 3; ++i)
                    forms += (forms.empty() ? "" : " ") + qualifiedOpName(info.forms[i].op).substr(6);
                if (info.forms.size() > 4)
                    forms += " +" + std::to_string(info.forms.size() - 4) + " more";
                std::string aliases;
                for (std::string_view a : info.aliases)
                    aliases += (aliases.empty() ? "" : " ") + std::string(a);
                rows.push_back({std::string(info.name), std::string(info.category), qualifiedOpName(info.normalForm),
                                forms.empty() ? "-" : forms, aliases.empty() ? "-" : aliases,
                                std::to_string(providers[std::string(info.name)].size())});
            }
            report.text << formatTable({"FUNCTION", "CATEGORY", "NORMAL FORM", "OTHER FORMS", "ALIASES", "PROVIDERS"},
                                       rows);
            report.text << "\n"
                        << allFunctions().size() << " functions. Traced convolutions ("
                        << sharedForms(FormKind::Convolution) << ", " << sharedForms(FormKind::ConvolutionMode)
                        << ") are conv1d/2d/3d or conv_transpose1d/2d/3d by the weight's rank and `transposed`.\n"
                        << "Calls inside " << sharedForms(FormKind::Opaque)
                        << " are not torch.nn.functional calls and are not intercepted.\n";
        }};
}

} // namespace kforge::cli
