// SPDX-License-Identifier: Apache-2.0
#pragma once
// The provider registry as plain values, for the CLI and the GUI (no LibTorch here).
#include <kforge/functions.h>

#include <string>
#include <vector>

namespace kforge {

struct ProviderCatalogEntry {
    std::string typeName;
    std::string function;
    std::vector<std::string> devices;
    std::string description;
    std::string settingsSchemaJson; // see ProviderTypeInfo::settingsSchema
    std::string plugin;             // the plugin's path, "" for built-in types
};

std::vector<ProviderCatalogEntry> providerCatalog();

// The kernel generators (kforge/generator_sdk.h) make_plan can ask, as plain values.
struct GeneratorCatalogEntry {
    std::string name;
    std::vector<std::string> functions;
    std::vector<std::string> devices;
    std::string description;
};

std::vector<GeneratorCatalogEntry> generatorCatalog();

// The reference provider every catalog function has: "Aten" + the name in PascalCase + "Provider"
// (scaled_dot_product_attention -> AtenScaledDotProductAttentionProvider). It runs the normal form's ATen op.
std::string referenceProviderType(Function function);

} // namespace kforge
