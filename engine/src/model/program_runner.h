// SPDX-License-Identifier: Apache-2.0
#pragma once
// A model that is not a TorchScript module, run by the session through one interface: a torch.export program run
// node by node (ExportedRunner) or an AOTInductor package's compiled code (CompiledRunner).
#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kforge {

class ProgramRunner {
public:
    virtual ~ProgramRunner() = default;

    // One forward: positional inputs (tuples and lists flattened, in order) and keyword inputs by name. Returns the
    // output, or a tuple of them when there are several.
    virtual c10::IValue run(const std::vector<c10::IValue>& args,
                            const std::unordered_map<std::string, c10::IValue>& kwargs) const = 0;
    virtual const std::vector<std::string>& inputNames() const = 0;
    // The module identities the hook table knows (one placeholder object per module path).
    virtual const std::vector<std::pair<std::string, c10::IValue>>& moduleObjects() const = 0;
    // Moves the weights and constants ("cpu", "cuda:0"); kforge::Error where the program cannot run there.
    virtual void to(const c10::Device& device) = 0;
    // What a profile says it measured (ProfileRun::graphExecutor): "exported" or "compiled".
    virtual std::string_view kind() const = 0;
    // The tensors a forward may write to in place and that outlive it (an exported program's buffers: a counter, a
    // cache), by name; SavedForwardState keeps and puts them back.
    virtual std::vector<std::pair<std::string, at::Tensor>> stateTensors() const { return {}; }
    // Why no plan can apply to this program's calls; "" when plans apply.
    virtual std::string planRefusal() const { return {}; }
};

} // namespace kforge
