// SPDX-License-Identifier: Apache-2.0
#include "model/exported_session.h"

#include <kforge/error.h>

#include "model/exported_cond_branches.h"
#include "model/exported_package.h"
#include "model/compiled_runner.h"
#include "model/exported_runner.h"
#include "model/model_inputs.h"
#include "model/torch_errors.h"

#include <torch/serialize.h>

#include <filesystem>

namespace kforge {
namespace {

// data/sample_inputs/<program>.pt: torch.save((args, kwargs)), written by package_pt2 when export had examples.
void loadSampleInputs(const ExportedPackage& package, ModelSession::Impl& impl)
{
    const std::string record = "data/sample_inputs/" + package.program + ".pt";
    if (!package.has(record))
        return;
    const std::string where = package.path + ": " + record;
    const std::string text = package.text(record);
    c10::IValue value;
    try {
        value = torch::pickle_load(std::vector<char>(text.begin(), text.end()));
    } catch (const c10::Error& e) {
        throw Error(where, "cannot read the sample inputs (" + describeTorchError(e) + ")");
    }
    if (!value.isTuple() || value.toTupleRef().elements().size() != 2)
        throw Error(where, "expected the sample inputs as (args, kwargs)");
    const auto& parts = value.toTupleRef().elements();
    LoadedInputs args = inputsFromValue(parts[0], where);
    if (parts[1].isGenericDict() && !parts[1].toGenericDict().empty()) {
        LoadedInputs kwargs = inputsFromValue(parts[1], where);
        args.kwargs = std::move(kwargs.kwargs);
        args.descriptions.insert(args.descriptions.end(), kwargs.descriptions.begin(), kwargs.descriptions.end());
    }
    impl.inputs = std::move(args.args);
    impl.kwargs = std::move(args.kwargs);
    impl.inputDescriptions = std::move(args.descriptions);
}

} // namespace

void openExportedProgram(ModelSession::Impl& impl)
{
    const ExportedPackage package = openExportedPackage(impl.source, impl.options.program);
    ExportedProgramInfo described = describeExportedProgram(package);
    impl.decompositions = exportedDecompositions(described);
    impl.modules = std::move(described.modules);
    impl.condBranches = condBranchModules(package, impl.modules);
    for (std::string& note : condBranchNotes(impl.condBranches))
        impl.warnings.push_back(std::move(note));
    impl.displayName = std::filesystem::path(impl.source).filename().string();
    loadSampleInputs(package, impl);
    const std::vector<CompiledModel> compiled = compiledModelsBeside(package);
    if (impl.options.compiled) {
        if (compiled.empty())
            throw Error(impl.source, "holds no AOTInductor compiled code to run (--compiled): it is a torch.export "
                                     "package; open it without --compiled to run its exported program");
        impl.program = compiledRunnerFor(impl.source, compiled, package.program);
        impl.warnings.push_back("running the AOTInductor compiled code (--compiled) with the exported program's module "
                                "tree: the compiled code has no module frames, so the root holds every module's time, "
                                "and no plan applies");
        return;
    }
    impl.program = std::make_shared<ExportedRunner>(package);
    if (!compiled.empty()) {
        std::string names;
        for (const CompiledModel& model : compiled)
            names += (names.empty() ? "'" : ", '") + model.name + "'";
        impl.warnings.push_back("the package also holds AOTInductor compiled code (" + names +
                                "): kforge runs its exported program, node by node, where plans apply; --compiled (in "
                                "kforge-studio: its compiled code, when opening) runs the compiled code instead (with "
                                "this program's module tree)");
    }
}

} // namespace kforge
