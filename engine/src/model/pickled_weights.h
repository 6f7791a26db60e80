// SPDX-License-Identifier: Apache-2.0
#pragma once
// Weights a .pt2 archive stores pickled (use_pickle in its weights config): tensor subclasses saved with their Python
// class, such as the quantized weights torchao's quantize_ makes. Their ops dispatch in Python, so kforge cannot run
// them; what it can do is say which class it is, which library made it, and how to export a program it can run.
#include <cstddef>
#include <string>

namespace kforge {

// The Python class a pickled tensor was saved as ("torchao.quantization.Int8Tensor"): the class
// torch._utils._rebuild_wrapper_subclass rebuilds in the record's pickle; "" when none is found.
std::string pickledTensorClass(const char* record, std::size_t bytes);

// Why weight `name`, pickled as `className` ("" when unknown), cannot be read, and the way out.
std::string pickledWeightRefusal(const std::string& name, const std::string& className);

} // namespace kforge
