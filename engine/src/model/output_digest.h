#pragma once
#include <kforge/tensor_digest.h>

#include <ATen/core/ivalue.h>

#include <vector>

namespace kforge {

// One digest per tensor in a forward's output (tensors, tuples, lists, dicts), named by position/key.
std::vector<TensorDigest> digestOutput(const c10::IValue& output);

} // namespace kforge
