// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs a torch.export program node by node through the dispatcher: every op call reaches the interposer as a
// TorchScript model's do, and the module hooks run where the nodes' module stacks change, so scopes, plans,
// events, stepping and profiles work on .pt2 models as on TorchScript ones. NativeRT is not used here: its static
// CPU kernels bypass the dispatcher (docs/design/pt2-nativert-notes.md). The higher-order ops export emits for
// ordinary code run their subgraphs the same way: wrap_with_autocast, wrap_with_set_grad_enabled and cond.
#include "model/exported_package.h"
#include "model/program_runner.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kforge {

class ExportedRunner final : public ProgramRunner {
public:
    // Compiles the program: resolves every op, binds weights and constants, plans the module boundaries. Throws
    // kforge::Error naming the package and the node that cannot run.
    explicit ExportedRunner(const ExportedPackage& package);
    ~ExportedRunner() override;
    ExportedRunner(const ExportedRunner&) = delete;
    ExportedRunner& operator=(const ExportedRunner&) = delete;

    // One forward. The positional inputs are flattened (tuples and lists, in order); keyword inputs are matched to
    // the program's user inputs by name. Returns the user output, or a tuple of them when there are several.
    c10::IValue run(const std::vector<c10::IValue>& args,
                    const std::unordered_map<std::string, c10::IValue>& kwargs) const override;

    const std::vector<std::string>& inputNames() const override { return m_inputNames; }
    // One placeholder object per module path of the program.
    const std::vector<std::pair<std::string, c10::IValue>>& moduleObjects() const override { return m_moduleObjects; }
    void to(const c10::Device& device) override;
    std::vector<std::pair<std::string, at::Tensor>> stateTensors() const override;
    std::string_view kind() const override { return "exported"; }

    struct Step;  // one node: its op (or higher-order op and subgraphs), argument sources, outputs, module frames
    struct Graph; // the program's graph, or a higher-order op's subgraph: steps and slots of its own
    class Compiler;

private:
    // A user input's sizes as export recorded them, checked on every forward (checkInputShapes).
    struct InputShape {
        struct Dim {
            std::optional<int64_t> fixed; // a static size
            std::string symbol;           // or a symbol ("s27") with its range
            std::optional<int64_t> min, max;
            // or a size derived from the symbol, coef * symbol + offset (torch.export's 2 * Dim("dx")), its range
            // the symbol's
            int64_t coef = 1, offset = 0;
            bool derived() const { return coef != 1 || offset != 0; }
        };
        int input = -1;
        std::vector<Dim> dims;
    };
    void addInputShape(int input, const nlohmann::json& graph, const nlohmann::json& model);
    void checkInputShapes(const std::vector<c10::IValue>& slots) const;

    c10::IValue moduleObject(const std::string& path);
    int frameId(const std::string& key, const std::string& path); // a module call frame, interned
    void runGraph(const Graph& graph, std::vector<c10::IValue>& slots, std::vector<int>& open, bool frameHooks) const;
    void runHigherOrder(const Step& step, std::vector<c10::IValue>& slots, std::vector<int>& open,
                        bool frameHooks) const;
    // Exits the open frames the step is not in and enters those it is in (module hooks); `graph` and `slots` are
    // those of the graph running, which hold what an exited frame returns.
    void enterFrames(const std::vector<int>& frames, std::vector<int>& open, const Graph& graph,
                     const std::vector<c10::IValue>& slots) const;

    std::string m_where;
    std::vector<c10::IValue> m_initialSlots; // weights and constants bound; the rest are filled per forward
    std::vector<std::pair<std::string, int>> m_bufferSlots; // the buffers among them, by name
    std::vector<int> m_inputSlots; // per user input, its slot (-1: a non-tensor input export specialised)
    std::vector<std::string> m_inputNames;
    std::vector<InputShape> m_inputShapes;
    std::vector<int> m_outputSlots;      // the user outputs, flat
    nlohmann::json m_outSpec;            // how they nest (null: one output, or a tuple of them)
    std::vector<std::string> m_keywords; // keyword inputs in the order export flattened them
    std::shared_ptr<const Graph> m_graph;
    std::vector<std::pair<std::string, c10::IValue>> m_moduleObjects;
    std::unordered_map<std::string, size_t> m_objectIndex;
    std::vector<c10::IValue> m_frameObjects;         // per frame id: the module object its hooks take
    std::unordered_map<std::string, int> m_frameIds; // "key\0path" -> frame id (a module called twice: two keys)
};

} // namespace kforge
