// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <torch/script.h>

#include <optional>
#include <string>
#include <vector>

namespace kforge::builtin {

struct BuiltinModel {
    torch::jit::Module module;
    std::vector<c10::IValue> exampleInputs;
    std::vector<std::string> inputDescriptions;
};

std::vector<std::string> names(); // "tiny-gpt", "convnet"
// nullopt when no builtin has that name.
std::optional<BuiltinModel> create(const std::string& name);

} // namespace kforge::builtin
