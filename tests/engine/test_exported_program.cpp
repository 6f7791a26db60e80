// SPDX-License-Identifier: Apache-2.0
// torch.export packages (.pt2): the module tree, functions and nodes read from the serialized program, compared
// with what Python says of the same model (tests/data/models/make_exported_block.py).
#include <kforge/error.h>
#include <kforge/exported_program.h>
#include <kforge/model_session.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>

using namespace kforge;

namespace {

const std::string kModels = std::string(KFORGE_TEST_DATA) + "/models/";

nlohmann::json expected()
{
    std::ifstream in(kModels + "exported_block.expected.json");
    return nlohmann::json::parse(in);
}

} // namespace

TEST(ExportedProgram, ModuleTreeIsPythonsNamedModulesWithTypesAndParameters)
{
    const ExportedProgramInfo info = readExportedProgram(kModels + "exported_block.pt2");
    std::map<std::string, const ModuleInfo*> byPath;
    for (const ModuleInfo& m : info.modules)
        byPath[m.path] = &m;
    const nlohmann::json python = expected().at("modules");
    ASSERT_EQ(info.modules.size(), python.size());
    for (size_t i = 0; i < python.size(); ++i) // named_modules() order
        EXPECT_EQ(info.modules[i].path, python[i].at("path").get<std::string>()) << i;
    EXPECT_EQ(info.modules.front().path, "");
    for (const auto& m : python) {
        const std::string path = m.at("path");
        ASSERT_TRUE(byPath.count(path)) << "missing module '" << path << "'";
        const ModuleInfo& ours = *byPath[path];
        if (ours.forwardCalled) // a module that never runs has no type in the package
            EXPECT_EQ(ours.typeName, m.at("type").get<std::string>()) << path;
        else
            EXPECT_EQ(ours.typeName, "") << path;
        EXPECT_EQ(ours.parameterCount, m.at("parameters").get<std::int64_t>()) << path;
    }
    // The ModuleList is never called: a container, as TorchScript reports one.
    EXPECT_FALSE(byPath.at("blocks")->forwardCalled);
    EXPECT_TRUE(byPath.at("blocks.0")->forwardCalled);
    EXPECT_EQ(byPath.at("blocks.0")->depth, 2);
    EXPECT_EQ(byPath.at("blocks.0.mlp")->children,
              (std::vector<std::string>{"blocks.0.mlp.up", "blocks.0.mlp.act", "blocks.0.mlp.down"}));
    std::int64_t parameters = 0;
    for (const auto& m : python)
        parameters += m.at("parameters").get<std::int64_t>();
    EXPECT_EQ(info.modules.front().subtreeParameterCount, parameters);
}

TEST(ExportedProgram, FunctionsPerModuleAreTheCallsItsForwardMakes)
{
    const ExportedProgramInfo info = readExportedProgram(kModels + "exported_block.pt2");
    std::map<std::string, std::map<std::string, int>> ours;
    for (const ModuleInfo& m : info.modules)
        ours[m.path] = m.functions;
    for (const auto& m : expected().at("modules")) {
        const std::map<std::string, int> python = m.at("functions").get<std::map<std::string, int>>();
        EXPECT_EQ(ours[m.at("path").get<std::string>()], python) << "module '" << m.at("path") << "'";
    }
    // Summed over the tree: 2 blocks x (layer_norm, 2 linear, relu), shared linear twice, gelu and softmax.
    const auto& total = info.modules.front().subtreeFunctions;
    EXPECT_EQ(total.at("linear"), 6);
    EXPECT_EQ(total.at("layer_norm"), 2);
    EXPECT_EQ(total.at("relu"), 2);
}

TEST(ExportedProgram, EveryNodeNamesItsOpModuleAndFunction)
{
    const ExportedProgramInfo info = readExportedProgram(kModels + "exported_block.pt2");
    ASSERT_FALSE(info.nodes.empty());
    EXPECT_EQ(info.inputNames, std::vector<std::string>{"x"});
    const ExportedNode& first = info.nodes.front();
    EXPECT_EQ(first.op, "aten::gelu");
    EXPECT_EQ(first.function, "gelu");
    EXPECT_EQ(first.modulePath, "");
    std::multiset<std::string> linearModules;
    for (const ExportedNode& n : info.nodes)
        if (n.function == "linear")
            linearModules.insert(n.modulePath);
    EXPECT_EQ(linearModules.count("shared"), 2u);
    EXPECT_EQ(linearModules.count("blocks.1.mlp.down"), 1u);
}

TEST(ExportedProgram, BadPackagesAreClearErrors)
{
    try {
        readExportedProgram(kModels + "missing.pt2");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("file not found"), std::string::npos) << e.what();
    }
    try {
        readExportedProgram(kModels + "exported_block.pt2", "decode");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("has no exported program 'decode' (it has: forward)"), std::string::npos)
            << e.what();
    }
    try {
        readExportedProgram(kModels + "forked_gelu.pt"); // a TorchScript zip
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("not a torch.export package"), std::string::npos) << e.what();
    }
    // Running one is refused in one line that says what works instead.
    try {
        ModelSession::open(kModels + "exported_block.pt2");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("torch.export package (.pt2)"), std::string::npos) << e.what();
    }
}
