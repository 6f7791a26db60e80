// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the runtime needs of a loaded model: the object its module hooks see for a scope's path (R2), and the
// TorchScript module whose fused graphs binding a plan drops (R1). The model layer implements it (ModelSession's
// state), so the runtime names no session.
#include <string>

namespace c10::ivalue {
struct Object;
} // namespace c10::ivalue
namespace torch::jit {
struct Module;
}

namespace kforge::runtime {

class ModuleDirectory {
public:
    virtual ~ModuleDirectory() = default;
    // The module object at `path`, null when there is none.
    virtual const c10::ivalue::Object* objectOf(const std::string& path) const = 0;
    // The TorchScript module, null for a .pt2 program (it runs node by node: nothing fuses).
    virtual const torch::jit::Module* scriptModule() const = 0;
};

} // namespace kforge::runtime
