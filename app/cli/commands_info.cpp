// SPDX-License-Identifier: Apache-2.0
// kforge modules, kforge doctor.
#include "commands.h"
#include "output.h"

#include <kforge/doctor.h>
#include <kforge/module_path.h>

namespace kforge::cli {

Command addModulesCommand(CLI::App& app)
{
    struct Options {
        ModelOptions model; // MODEL and --program: no forward runs
    };
    auto options = std::make_shared<Options>();
    auto* cmd = app.add_subcommand("modules", "Print the module tree with parameters and replaceable functions");
    cmd->add_option("MODEL", options->model.source,
                    "TorchScript file, torch.export package (.pt2) or builtin:NAME (builtin:tiny-gpt, builtin:convnet)")
        ->required();
    addProgramOption(cmd, options->model.open);
    addJsonFlag(cmd, "JSON array of modules");
    return {cmd, [options](Report& report) {
                const std::vector<ModuleInfo> modules = openModel(options->model, report)->modules();
                report.json = modules;
                std::vector<std::vector<std::string>> rows;
                for (const auto& m : modules)
                    rows.push_back({std::string(size_t(m.depth) * 2, ' ') + module_path::displayName(m.path),
                                    m.typeName, withThousands(m.parameterCount), functionsSummary(m.functions)});
                report.text << formatTable({"MODULE", "TYPE", "PARAMS", "FUNCTIONS"}, rows);
                const auto& root = modules.front();
                report.text << modules.size() << " modules, " << withThousands(root.subtreeParameterCount)
                            << " parameters; functions in the model: " << functionsSummary(root.subtreeFunctions)
                            << '\n';
            }};
}

Command addDoctorCommand(CLI::App& app)
{
    auto* cmd = app.add_subcommand("doctor", "Report LibTorch, CUDA, CUPTI and the interposer self-test");
    addJsonFlag(cmd);
    return {cmd, [](Report& report) {
                const SystemReport r = systemReport();
                report.json = nlohmann::ordered_json{{"kforge", r.kforgeVersion},
                                                     {"torch", r.torchVersion},
                                                     {"torch_cuda_build", r.torchCudaBuild},
                                                     {"torch_cuda_version", r.torchCudaVersion},
                                                     {"cuda_devices", r.cudaDevices},
                                                     {"cupti_linked", r.cuptiLinked},
                                                     {"cupti_version", r.cuptiVersion},
                                                     {"can_trace", r.canTrace},
                                                     {"trace_status", r.traceStatus},
                                                     {"interposer",
                                                      {{"dispatch_key", r.interposer.dispatchKey},
                                                       {"self_test_passed", r.interposer.selfTestPassed},
                                                       {"self_test", r.interposer.selfTestMessage},
                                                       {"intercepted_ops", r.interposer.interceptedOps},
                                                       {"missing_ops", r.interposer.missingOps}}}};
                std::ostringstream& text = report.text;
                text << "kforge        " << r.kforgeVersion << '\n'
                     << "LibTorch      " << r.torchVersion
                     << (r.torchCudaBuild ? " (CUDA build, CUDA " + r.torchCudaVersion + ")" : " (CPU build)") << '\n'
                     << "CUDA devices  " << (r.cudaDevices.empty() ? "none" : "") << '\n';
                for (const auto& d : r.cudaDevices)
                    text << "  " << d << '\n';
                text << "CUPTI         " << (r.cuptiLinked ? "version " + r.cuptiVersion : "not linked") << '\n'
                     << "can trace     " << r.traceStatus << '\n'
                     << "interposer    key " << r.interposer.dispatchKey << ", self-test "
                     << (r.interposer.selfTestPassed ? "passed" : "FAILED") << ": " << r.interposer.selfTestMessage
                     << '\n'
                     << "intercepted   " << r.interposer.interceptedOps.size() << " op overloads";
                if (!r.interposer.missingOps.empty()) {
                    text << "; missing from this LibTorch:";
                    for (const auto& op : r.interposer.missingOps)
                        text << ' ' << op;
                }
                text << '\n';
            }};
}

} // namespace kforge::cli
