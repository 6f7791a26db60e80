// SPDX-License-Identifier: Apache-2.0
// ModelSession: built-in models, module tree, function inventory, inputs.
#include <kforge/error.h>
#include <kforge/model_session.h>

#include "test_helpers.h"

#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <algorithm>

using namespace kforge;

namespace {

const ModuleInfo& moduleAt(const ModelSession& s, const std::string& path)
{
    const ModuleInfo* m = s.findModule(path);
    if (!m)
        throw std::runtime_error("no module " + path);
    return *m;
}

} // namespace

TEST(ModelSession, TinyGptTreeFollowsNamedModules)
{
    auto s = ModelSession::open("builtin:tiny-gpt");
    std::vector<std::string> paths;
    for (const auto& m : s->modules())
        paths.push_back(m.path);
    const std::vector<std::string> expected{"",
                                            "embed",
                                            "blocks",
                                            "blocks.0",
                                            "blocks.0.ln1",
                                            "blocks.0.attn",
                                            "blocks.0.attn.qkv",
                                            "blocks.0.attn.proj",
                                            "blocks.0.ln2",
                                            "blocks.0.mlp",
                                            "blocks.0.mlp.fc",
                                            "blocks.0.mlp.proj",
                                            "blocks.1",
                                            "blocks.1.ln1",
                                            "blocks.1.attn",
                                            "blocks.1.attn.qkv",
                                            "blocks.1.attn.proj",
                                            "blocks.1.ln2",
                                            "blocks.1.mlp",
                                            "blocks.1.mlp.fc",
                                            "blocks.1.mlp.proj",
                                            "ln_f",
                                            "head"};
    EXPECT_EQ(paths, expected);
    EXPECT_EQ(moduleAt(*s, "blocks.0").children,
              (std::vector<std::string>{"blocks.0.ln1", "blocks.0.attn", "blocks.0.ln2", "blocks.0.mlp"}));
    EXPECT_EQ(moduleAt(*s, "blocks.0.attn.qkv").depth, 4);
}

TEST(ModelSession, TypeNamesAreReadableAndQualifiedKept)
{
    auto s = ModelSession::open("builtin:tiny-gpt");
    const ModuleInfo& block = moduleAt(*s, "blocks.1");
    EXPECT_EQ(block.typeName, "Block");
    EXPECT_NE(block.qualifiedTypeName.find("__torch__"), std::string::npos);
    EXPECT_EQ(moduleAt(*s, "").typeName, "TinyGPT");
}

TEST(ModelSession, ParametersCountedPerModuleAndSubtree)
{
    auto s = ModelSession::open("builtin:tiny-gpt");
    const ModuleInfo& qkv = moduleAt(*s, "blocks.0.attn.qkv");
    EXPECT_EQ(qkv.parameterCount, 64 * 192 + 192);
    EXPECT_EQ(qkv.parameterBytes, qkv.parameterCount * 4);
    const ModuleInfo& root = moduleAt(*s, "");
    EXPECT_EQ(root.parameterCount, 16 * 64); // pos only
    long long sum = 0;
    for (const auto& m : s->modules())
        sum += m.parameterCount;
    EXPECT_EQ(root.subtreeParameterCount, sum);
}

TEST(ModelSession, FunctionInventoryPerModule)
{
    auto s = ModelSession::open("builtin:tiny-gpt");
    EXPECT_EQ(moduleAt(*s, "blocks.0.attn").functions,
              (std::map<std::string, int>{{"scaled_dot_product_attention", 1}}));
    EXPECT_EQ(moduleAt(*s, "blocks.0.mlp").functions, (std::map<std::string, int>{{"gelu", 1}}));
    EXPECT_EQ(moduleAt(*s, "blocks.0.ln1").functions, (std::map<std::string, int>{{"layer_norm", 1}}));
    EXPECT_EQ(moduleAt(*s, "").functions, (std::map<std::string, int>{{"softmax", 1}}));
    const auto& all = moduleAt(*s, "").subtreeFunctions;
    EXPECT_EQ(all.at("linear"), 2 * 4 + 1);
    EXPECT_EQ(all.at("layer_norm"), 2 * 2 + 1);
    EXPECT_EQ(all.at("scaled_dot_product_attention"), 2);
}

TEST(ModelSession, ConvNetHasItsFunctions)
{
    auto s = ModelSession::open("builtin:convnet");
    const auto& all = moduleAt(*s, "").subtreeFunctions;
    for (const char* f : {"conv2d", "group_norm", "silu", "relu", "linear"})
        EXPECT_GT(all.count(f), 0u) << f;
}

TEST(ModelSession, BuiltinForwardIsDeterministic)
{
    auto a = ModelSession::open("builtin:tiny-gpt");
    auto b = ModelSession::open("builtin:tiny-gpt");
    const auto da = a->forward();
    const auto db = b->forward();
    ASSERT_EQ(da.size(), 1u);
    EXPECT_EQ(da[0].shape, (std::vector<int64_t>{1, 16, 256}));
    EXPECT_EQ(da[0].dtype, "float32");
    EXPECT_NEAR(da[0].sum, 16.0, 1e-3); // softmax rows sum to one
    EXPECT_DOUBLE_EQ(da[0].maxAbs, db[0].maxAbs);
}

TEST(ModelSession, FileModelWithInputSpecs)
{
    test::TempDir dir;
    test::saveModule(test::twoLevelModel("torch.relu(x)"), dir.path("m.pt"));
    auto s = ModelSession::open(dir.path("m.pt").string());
    EXPECT_FALSE(s->hasInputs());
    EXPECT_THROW(s->forward(), Error);
    s->setInputSpecs({"float32[2,3]"});
    const auto out = s->forward();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(s->forwardArgumentNames(), std::vector<std::string>{"x"});
}

TEST(ModelSession, InputsFromTorchSaveFile)
{
    test::TempDir dir;
    test::saveModule(test::twoLevelModel("torch.relu(x)"), dir.path("m.pt"));
    // torch::pickle_save writes the same zip format as Python's torch.save.
    const auto bytes = torch::jit::pickle_save(c10::ivalue::Tuple::create({torch::ones({4, 5})}));
    test::writeBytes(dir.path("in.pt"), std::string(bytes.begin(), bytes.end()));
    auto s = ModelSession::open(dir.path("m.pt").string());
    s->loadInputsFile(dir.path("in.pt").string());
    EXPECT_EQ(s->describeInputs(), std::vector<std::string>{"float32[4,5]"});
    EXPECT_DOUBLE_EQ(s->forward()[0].sum, 20.0);
}
