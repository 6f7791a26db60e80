#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kforge {

// One line of an optimization plan: in module `scope` ("" = root) and below, `function` runs `provider`.
struct PlanEntry {
    std::string scope;
    std::string function;
    nlohmann::json provider; // the provider's settings, "type" included
    bool enabled = true;
    std::string note;

    std::string providerType() const { return provider.value("type", std::string{}); }
};

struct Plan {
    std::vector<PlanEntry> entries; // plan order matters (R3/R4)
};

// "blocks.0:scaled_dot_product_attention:TorchSDPAKernelProvider" -> an entry with default settings;
// "SCOPE:FUNCTION:PROVIDER:{json settings}" adds settings. Throws kforge::Error on a malformed spec.
PlanEntry parseProvideSpec(const std::string& spec);

} // namespace kforge
