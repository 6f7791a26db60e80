// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs an AOTInductor package (torch._inductor.aoti_compile_and_package: PyTorch's way to deploy an exported model
// to C++) through LibTorch's AOTIModelPackageLoader, as a C++ deployment of it does. Its kernels are generated code:
// the few ATen ops it still calls reach the dispatcher, the rest never do, so no plan can swap a provider inside it
// (planRefusal) and a CPU profile sees the forward and those ops only.
#include "model/compiled_inputs.h"
#include "model/exported_package.h"
#include "model/program_runner.h"
#include "model/session_impl.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace torch::inductor {
class AOTIModelPackageLoader;
}

namespace kforge {

class CompiledRunner final : public ProgramRunner {
public:
    // Loads `model` of the package at `path` (the loader unpacks its shared library to a temporary folder and
    // loads it). kforge::Error naming the package when the loader refuses it.
    CompiledRunner(const std::string& path, const CompiledModel& model);
    ~CompiledRunner() override;

    c10::IValue run(const std::vector<c10::IValue>& args,
                    const std::unordered_map<std::string, c10::IValue>& kwargs) const override;
    const std::vector<std::string>& inputNames() const override { return m_inputNames; }
    const std::vector<std::pair<std::string, c10::IValue>>& moduleObjects() const override { return m_objects; }
    void to(const c10::Device& device) override;
    std::string_view kind() const override { return "compiled"; }
    std::string planRefusal() const override;

    // The package's metadata: AOTI_DEVICE_KEY ("cpu", "cuda"), AOTI_CPU_ISA, AOTI_PLATFORM, ...
    const std::unordered_map<std::string, std::string>& metadata() const { return m_metadata; }
    // The weights the compiled code holds (its constants: the exported program's parameters and buffers): their
    // element count and bytes, for the module tree's root.
    std::pair<std::int64_t, std::int64_t> constantsSize() const;

private:
    std::string m_where;
    bool m_cuda = false;
    std::unique_ptr<torch::inductor::AOTIModelPackageLoader> m_loader;
    std::unordered_map<std::string, std::string> m_metadata;
    size_t m_positional = 0;             // tensor leaves of the positional inputs (the call spec's)
    std::vector<std::string> m_keywords; // keyword inputs in the order the compiled code takes them
    std::vector<std::string> m_inputNames;
    std::vector<std::pair<std::string, c10::IValue>> m_objects; // the root's placeholder
    std::vector<CompiledInput> m_inputs; // what the compiled code takes (its generated input checks), per input
};

// Opens the package at impl.source holding `models` (compiledModelsIn): the one impl.options.program names, else
// the first. Its module tree is the root alone.
void openCompiledPackage(ModelSession::Impl& impl, const std::vector<CompiledModel>& models);
// The runner of the compiled model named `name` among `models` (a package's), else of the first: the compiled code
// of a package that holds it beside its exported program (OpenOptions::compiled).
std::shared_ptr<CompiledRunner> compiledRunnerFor(const std::string& path, const std::vector<CompiledModel>& models,
                                                  const std::string& name);

} // namespace kforge
