// SPDX-License-Identifier: Apache-2.0
#pragma once
// Ops that libraries define in Python (torch.library.custom_op) and that exported programs call by name: outside
// Python nothing registers them, so a program calling one could not run. For the ones users' exports hold, kforge
// has a C++ implementation with the Python definition's semantics, registered the first time a program calls the op
// and LibTorch has none (a library the user loaded that defines it wins).
#include <string>

namespace kforge {

// Registers `op` ("transformers::grouped_mm_fallback") when kforge implements it and nothing registered it yet;
// whether it is registered now.
bool registerPythonDefinedOp(const std::string& op);

// The library that defines `op` in Python, by its namespace ("transformers" -> "Hugging Face transformers"); "" when
// kforge does not know it.
std::string pythonLibraryOf(const std::string& op);

} // namespace kforge
