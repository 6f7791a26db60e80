// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/tensor_digest.h>

#include <ATen/core/ivalue.h>

#include <string>
#include <utility>
#include <vector>

namespace kforge {

// One digest per tensor in a forward's output (tensors, tuples, lists, dicts), named by position/key.
std::vector<TensorDigest> digestOutput(const c10::IValue& output);
// The tensors of a forward's output in the same order, each with the path its digest has.
std::vector<std::pair<std::string, at::Tensor>> flattenOutput(const c10::IValue& output);
// Every leaf of a forward's output (anything that is not a tuple, list or dict: tensors, numbers, bools, strings,
// None) in the same order, with the same paths: what verify judges.
std::vector<std::pair<std::string, c10::IValue>> flattenOutputLeaves(const c10::IValue& output);

} // namespace kforge
