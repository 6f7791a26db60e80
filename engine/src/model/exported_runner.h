// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs a torch.export program node by node through the dispatcher: every op call reaches the interposer as a
// TorchScript model's do, and the module hooks run where the nodes' module stacks change, so scopes, plans,
// events, stepping and profiles work on .pt2 models as on TorchScript ones (issue 18). NativeRT is not used here:
// its static CPU kernels bypass the dispatcher (docs/design/pt2-nativert-notes.md).
#include "model/exported_package.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace kforge {

class ExportedRunner {
public:
    // Compiles the program: resolves every op, binds weights and constants, plans the module boundaries. Throws
    // kforge::Error naming the package and the node that cannot run.
    explicit ExportedRunner(const ExportedPackage& package);
    ~ExportedRunner();
    ExportedRunner(const ExportedRunner&) = delete;
    ExportedRunner& operator=(const ExportedRunner&) = delete;

    // One forward. The positional inputs are flattened (tuples and lists, in order); keyword inputs are matched to
    // the program's user inputs by name. Returns the user output, or a tuple of them when there are several.
    c10::IValue run(const std::vector<c10::IValue>& args,
                    const std::unordered_map<std::string, c10::IValue>& kwargs) const;

    const std::vector<std::string>& inputNames() const { return m_inputNames; }
    // The module identities the hook table knows (one placeholder object per module path of the program).
    const std::vector<std::pair<std::string, c10::IValue>>& moduleObjects() const { return m_moduleObjects; }
    // Moves the weights and constants ("cpu", "cuda:0").
    void to(const c10::Device& device);

    struct Step; // one node: its op, argument sources, output slots and module boundary

private:
    c10::IValue moduleObject(const std::string& path);
    void planReleases(size_t slotCount); // each value freed after its last reader
    void markDecomposedCalls();          // where each decomposed function call opens and closes

    std::string m_where;
    std::vector<c10::IValue> m_initialSlots; // weights and constants bound; the rest are filled per forward
    std::vector<int> m_inputSlots;           // per user input, its slot (-1: a non-tensor input export specialised)
    std::vector<std::string> m_inputNames;
    std::vector<int> m_outputSlots;      // the user outputs, flat
    nlohmann::json m_outSpec;            // how they nest (null: one output, or a tuple of them)
    std::vector<std::string> m_keywords; // keyword inputs in the order export flattened them
    std::vector<Step> m_steps;
    std::vector<std::pair<std::string, c10::IValue>> m_moduleObjects;
    std::unordered_map<std::string, size_t> m_objectIndex;
};

} // namespace kforge
