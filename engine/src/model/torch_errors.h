// SPDX-License-Identifier: Apache-2.0
#pragma once
// The LibTorch error edge: where LibTorch's exceptions (c10::Error, TorchScript tracebacks) become kforge::Error
// messages of one line that name the file and the cause.
#include <torch/script.h>

#include <string>

namespace kforge {

// torch::jit::load with every failure turned into a kforge::Error naming the file and the cause.
torch::jit::Module loadTorchScriptFile(const std::string& path);

// First line of a LibTorch error, without its C++ backtrace.
std::string firstLine(const std::string& message);
std::string describeTorchError(const c10::Error& error);
// The same for any exception text that may carry a TorchScript traceback.
std::string describeErrorMessage(std::string message);

} // namespace kforge
