// SPDX-License-Identifier: Apache-2.0
// kforge modules, kforge doctor.
#include "commands.h"
#include "output.h"

#include <kforge/doctor.h>
#include <kforge/module_path.h>

#include <iostream>

namespace kforge::cli {

Command addModulesCommand(CLI::App& app)
{
    struct Options {
        ModelOptions model; // MODEL and --program: no forward runs
        bool json = false;
    };
    auto options = std::make_shared<Options>();
    auto* cmd = app.add_subcommand("modules", "Print the module tree with parameters and replaceable functions");
    cmd->add_option("MODEL", options->model.source,
                    "TorchScript file, torch.export package (.pt2) or builtin:NAME (builtin:tiny-gpt, builtin:convnet)")
        ->required();
    addProgramOption(cmd, options->model.open.program);
    cmd->add_flag("--json", options->json, "JSON array of modules");
    return {cmd, [options] {
                const std::vector<ModuleInfo> modules = openModel(options->model)->modules();
                if (options->json) {
                    std::cout << nlohmann::ordered_json(modules).dump(2) << '\n';
                    return 0;
                }
                std::vector<std::vector<std::string>> rows;
                for (const auto& m : modules)
                    rows.push_back({std::string(size_t(m.depth) * 2, ' ') + module_path::displayName(m.path),
                                    m.typeName, withThousands(m.parameterCount), functionsSummary(m.functions)});
                std::cout << formatTable({"MODULE", "TYPE", "PARAMS", "FUNCTIONS"}, rows);
                const auto& root = modules.front();
                std::cout << modules.size() << " modules, " << withThousands(root.subtreeParameterCount)
                          << " parameters; functions in the model: " << functionsSummary(root.subtreeFunctions) << '\n';
                return 0;
            }};
}

Command addDoctorCommand(CLI::App& app)
{
    auto json = std::make_shared<bool>(false);
    auto* cmd = app.add_subcommand("doctor", "Report LibTorch, CUDA, CUPTI and the interposer self-test");
    cmd->add_flag("--json", *json, "JSON output");
    return {cmd, [json] {
                const SystemReport r = systemReport();
                if (*json) {
                    std::cout << nlohmann::ordered_json{{"kforge", r.kforgeVersion},
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
                                                          {"missing_ops", r.interposer.missingOps}}}}
                                     .dump(2)
                              << '\n';
                    return 0;
                }
                std::cout << "kforge        " << r.kforgeVersion << '\n'
                          << "LibTorch      " << r.torchVersion
                          << (r.torchCudaBuild ? " (CUDA build, CUDA " + r.torchCudaVersion + ")" : " (CPU build)")
                          << '\n'
                          << "CUDA devices  " << (r.cudaDevices.empty() ? "none" : "") << '\n';
                for (const auto& d : r.cudaDevices)
                    std::cout << "  " << d << '\n';
                std::cout << "CUPTI         " << (r.cuptiLinked ? "version " + r.cuptiVersion : "not linked") << '\n'
                          << "can trace     " << r.traceStatus << '\n'
                          << "interposer    key " << r.interposer.dispatchKey << ", self-test "
                          << (r.interposer.selfTestPassed ? "passed" : "FAILED") << ": " << r.interposer.selfTestMessage
                          << '\n'
                          << "intercepted   " << r.interposer.interceptedOps.size() << " op overloads";
                if (!r.interposer.missingOps.empty()) {
                    std::cout << "; missing from this LibTorch:";
                    for (const auto& op : r.interposer.missingOps)
                        std::cout << ' ' << op;
                }
                std::cout << '\n';
                return 0;
            }};
}

} // namespace kforge::cli
