// SPDX-License-Identifier: Apache-2.0
#pragma once
// Values of a serialized torch.export program (torch/_export/serde/schema.py): stored weights and constants, and
// op arguments turned into sources the interpreter reads per forward (exported_runner.h).
#include "model/exported_package.h"

#include <ATen/core/ivalue.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kforge {

// Where an op argument's value comes from: a constant, or values the graph computed (slots).
struct ExportedSource {
    enum class Kind { Constant, Slot, TensorList, OptionalTensorList, IntList } kind = Kind::Constant;
    c10::IValue constant;
    int slot = -1;
    std::vector<int> slots;    // lists: a slot per element, -1 for a constant (None, or an int in ints)
    std::vector<int64_t> ints; // IntList: the constant elements

    static ExportedSource ofConstant(c10::IValue value)
    {
        ExportedSource s;
        s.constant = std::move(value);
        return s;
    }
    static ExportedSource ofSlot(int slot)
    {
        ExportedSource s;
        s.kind = Kind::Slot;
        s.slot = slot;
        return s;
    }
};

// Every weight and constant of the package, by fully qualified name. Throws kforge::Error for a record it cannot
// read (pickled entries, sizes that do not match).
std::unordered_map<std::string, at::Tensor> exportedStoredTensors(const ExportedPackage& package);

// `slotOf` names a graph value's slot. Throws kforge::Error (with `where`) for an argument kind it cannot run.
ExportedSource exportedSource(const nlohmann::json& argument, const std::string& where,
                              const std::function<int(const std::string&)>& slotOf);
c10::IValue exportedValue(const ExportedSource& source, const std::vector<c10::IValue>& slots);

// A pytree spec (module_call_graph's in_spec and out_spec, a JSON text: [version, {type, context, children_spec}]).
nlohmann::json parseTreeSpec(const std::string& text, const std::string& where);
// The output as the Python forward returned it: the flat values put back into tuples, lists and dicts.
c10::IValue unflattenTreeSpec(const nlohmann::json& spec, const std::vector<c10::IValue>& flat);
// The keyword names of an in_spec ((args, kwargs) at its top), in the order export flattened them.
std::vector<std::string> treeSpecKeywords(const nlohmann::json& inSpec);

} // namespace kforge
