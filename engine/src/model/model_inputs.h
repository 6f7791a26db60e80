// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/input_spec.h>

#include <torch/script.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace kforge {

// A deterministic example tensor for a spec: normal floats, small non-negative integers (valid indices).
at::Tensor makeInputTensor(const TensorSpec& spec);
// "float32", "bfloat16", "int64", ... (Python's names); LibTorch's name for the rest.
std::string dtypeName(at::ScalarType type);
std::string describeIValue(const c10::IValue& value); // "float32[1,16]" for a tensor, the tag otherwise

struct LoadedInputs {
    std::vector<c10::IValue> args;
    std::unordered_map<std::string, c10::IValue> kwargs;
    std::vector<std::string> descriptions;
};
// A file written by torch.save: a tensor, a tuple/list (positional) or a dict of str (keyword arguments).
LoadedInputs loadInputsFile(const std::string& path);
// The same from a value already loaded; `where` names its origin in errors.
LoadedInputs inputsFromValue(const c10::IValue& value, const std::string& where);

// `value` as an argument of type `type`: a pickle gives untyped containers (a list of tensors is a List[Any]) where a
// Python caller's would be converted to the forward's schema (detection models take List[Tensor]); lists, dicts,
// tuples and optionals are rebuilt with the schema's element types where every element fits, else left as they are.
c10::IValue typedAs(const c10::IValue& value, const c10::TypePtr& type);

} // namespace kforge
