// SPDX-License-Identifier: Apache-2.0
// kforge diff's pairing of two runs made apart (kforge/run_pairing.h), on runs whose modules and records are set by
// construction: modules renamed between the runs match by structure, ops renamed or split at one place pair by their
// place, and what has no counterpart is listed on its side.
#include <kforge/run_pairing.h>

#include <gtest/gtest.h>

#include <algorithm>

using namespace kforge;

namespace {

ModuleInfo module(const std::string& path, const std::string& type, std::vector<std::string> children = {})
{
    ModuleInfo m;
    m.path = path;
    m.name = path.substr(path.rfind('.') == std::string::npos ? 0 : path.rfind('.') + 1);
    m.typeName = type;
    m.children = std::move(children);
    return m;
}

void addRecord(ProfileRun& run, const std::string& module, const std::string& function, const std::string& name,
               double us, int forwards = 3)
{
    for (int iteration = 0; iteration < forwards; ++iteration) {
        KernelRecord r;
        r.name = name;
        r.modulePath = module;
        r.function = function;
        r.iteration = iteration;
        r.startNs = std::int64_t(iteration) * 1'000'000 + std::int64_t(run.records.size()) * 1000;
        r.durationNs = std::int64_t(us * 1000);
        run.records.push_back(r);
    }
}

// A: encoder (Encoder) holding encoder.0 and encoder.1 (Block), and a head (Linear). B: the same model with the encoder
// named enc, and no head.
std::pair<ProfileRun, ProfileRun> renamedEncoderRuns()
{
    ProfileRun a, b;
    a.iterations = b.iterations = 3;
    a.modules = {module("", "Model", {"encoder", "head"}), module("encoder", "Encoder", {"encoder.0", "encoder.1"}),
                 module("encoder.0", "Block"), module("encoder.1", "Block"), module("head", "Linear")};
    b.modules = {module("", "Model", {"enc"}), module("enc", "Encoder", {"enc.0", "enc.1"}), module("enc.0", "Block"),
                 module("enc.1", "Block")};
    // encoder.0: one convolution whose kernel has another library's name in B.
    addRecord(a, "encoder.0", "conv2d", "cudnn_convolution", 40);
    addRecord(b, "enc.0", "conv2d", "miopen_convolution", 30);
    // encoder.1: a linear made of one addmm in A, an mm then an add in B.
    addRecord(a, "encoder.1", "linear", "aten::addmm", 10);
    addRecord(b, "enc.1", "linear", "aten::mm", 8);
    addRecord(b, "enc.1", "linear", "aten::add", 2);
    // The head runs in A only.
    addRecord(a, "head", "linear", "aten::addmm", 50);
    return {a, b};
}

const RecordPair* pairNamed(const std::vector<RecordPair>& pairs, const std::string& nameA, const std::string& nameB)
{
    const auto it = std::find_if(pairs.begin(), pairs.end(),
                                 [&](const RecordPair& p) { return p.nameA == nameA && p.nameB == nameB; });
    return it == pairs.end() ? nullptr : &*it;
}

} // namespace

TEST(RunPairing, ModulesRenamedBetweenTheRunsMatchByTypeAndPosition)
{
    const auto [a, b] = renamedEncoderRuns();
    const RunPairing p = pairRuns(a, b);
    const auto matched = [&](const std::string& pathA) {
        const auto it =
            std::find_if(p.modules.begin(), p.modules.end(), [&](const ModuleMatch& m) { return m.pathA == pathA; });
        return it == p.modules.end() ? std::string("(none)") : it->pathB;
    };
    EXPECT_EQ(matched(""), "");
    EXPECT_EQ(matched("encoder"), "enc");
    EXPECT_EQ(matched("encoder.0"), "enc.0");
    EXPECT_EQ(matched("encoder.1"), "enc.1");
    EXPECT_EQ(p.modulesOnlyInA, std::vector<std::string>{"head"});
    EXPECT_TRUE(p.modulesOnlyInB.empty());
    for (const ModuleMatch& m : p.modules)
        EXPECT_EQ(m.byStructure, m.pathA != m.pathB) << m.pathA;
}

TEST(RunPairing, RecordsPairByTheirPlaceEvenRenamedAndWhatIsLeftIsListed)
{
    const auto [a, b] = renamedEncoderRuns();
    const RunPairing p = pairRuns(a, b);
    const RecordPair* conv = pairNamed(p.paired, "cudnn_convolution", "miopen_convolution");
    ASSERT_NE(conv, nullptr) << "kernels of two libraries doing one convolution pair up";
    EXPECT_EQ(conv->module, "encoder.0");
    EXPECT_EQ(conv->function, "conv2d");
    EXPECT_DOUBLE_EQ(conv->usA, 40.0);
    EXPECT_DOUBLE_EQ(conv->usB, 30.0);
    const RecordPair* linear = pairNamed(p.paired, "aten::addmm", "aten::mm");
    ASSERT_NE(linear, nullptr);
    EXPECT_EQ(linear->module, "encoder.1");
    ASSERT_EQ(p.onlyInB.size(), 1u);
    EXPECT_EQ(p.onlyInB[0].nameB, "aten::add");
    EXPECT_EQ(p.onlyInB[0].module, "encoder.1"); // in A's names: the module matched
    ASSERT_EQ(p.onlyInA.size(), 1u);
    EXPECT_EQ(p.onlyInA[0].module, "head");
    EXPECT_EQ(p.paired.size(), 2u);
    EXPECT_EQ(p.renamed(), 2);
    EXPECT_DOUBLE_EQ(p.pairedShareA, 50.0 / 100.0);
    EXPECT_DOUBLE_EQ(p.pairedShareB, 38.0 / 40.0);
}

// Equal names pair first: an op inserted in B before the ops A has does not shift them onto each other.
TEST(RunPairing, AnInsertedOpDoesNotShiftThePairsAfterIt)
{
    ProfileRun a, b;
    a.iterations = b.iterations = 3;
    a.modules = b.modules = {module("", "Model")};
    for (const char* name : {"aten::matmul", "aten::softmax", "aten::matmul"})
        addRecord(a, "", "scaled_dot_product_attention", name, 5);
    for (const char* name : {"aten::mul", "aten::matmul", "aten::softmax", "aten::matmul"})
        addRecord(b, "", "scaled_dot_product_attention", name, 5);
    const RunPairing p = pairRuns(a, b);
    ASSERT_EQ(p.paired.size(), 3u);
    EXPECT_EQ(p.renamed(), 0);
    ASSERT_EQ(p.onlyInB.size(), 1u);
    EXPECT_EQ(p.onlyInB[0].nameB, "aten::mul");
    EXPECT_DOUBLE_EQ(p.pairedShareA, 1.0);
}

// The same run against itself: everything pairs, no change is detected on any pair.
TEST(RunPairing, ARunAgainstItselfPairsEverythingWithNoChange)
{
    const auto [a, b] = renamedEncoderRuns();
    const RunPairing p = pairRuns(a, a);
    EXPECT_DOUBLE_EQ(p.pairedShareA, 1.0);
    EXPECT_TRUE(p.onlyInA.empty() && p.onlyInB.empty());
    for (const RecordPair& pair : p.paired)
        EXPECT_NE(pair.speed.verdict, SpeedVerdict::Faster) << pair.nameA;
}

// What no place pairs is paired as a group under the lowest module both sides have leftovers in (TraceLens's lowest
// common ancestor): a fused attention op in A against the linears and attention of its decomposition in B, in the same
// module under other function calls. Leftovers of two unrelated top-level modules never meet at the root.
TEST(RunPairing, LeftoversPairAsAGroupUnderTheirLowestCommonModuleButNotAtTheRoot)
{
    ProfileRun a, b;
    a.iterations = b.iterations = 3;
    a.modules = b.modules = {module("", "Model", {"attn", "x", "y"}), module("attn", "MultiheadAttention"),
                             module("x", "Linear"), module("y", "Linear")};
    addRecord(a, "attn", "", "aten::_native_multi_head_attention", 100);
    addRecord(b, "attn", "linear", "aten::linear", 30);
    addRecord(b, "attn", "scaled_dot_product_attention", "aten::scaled_dot_product_attention", 40);
    addRecord(b, "attn", "linear", "aten::linear", 20);
    addRecord(a, "x", "relu", "aten::relu", 5);
    addRecord(b, "y", "gelu", "aten::gelu", 7);
    const RunPairing p = pairRuns(a, b);
    ASSERT_EQ(p.paired.size(), 1u);
    const RecordPair& group = p.paired[0];
    EXPECT_EQ(group.module, "attn");
    EXPECT_EQ(group.ordinal, -1);
    EXPECT_EQ(group.opsA, 1);
    EXPECT_EQ(group.opsB, 3);
    EXPECT_EQ(group.nameA, "aten::_native_multi_head_attention");
    EXPECT_DOUBLE_EQ(group.usA, 100.0);
    EXPECT_DOUBLE_EQ(group.usB, 90.0);
    ASSERT_EQ(p.onlyInA.size(), 1u);
    EXPECT_EQ(p.onlyInA[0].module, "x");
    ASSERT_EQ(p.onlyInB.size(), 1u);
    EXPECT_EQ(p.onlyInB[0].module, "y");
    EXPECT_DOUBLE_EQ(p.pairedShareA, 100.0 / 105.0);
    EXPECT_DOUBLE_EQ(p.pairedShareB, 90.0 / 97.0);
}

// Groups too long for the edit-distance table (here 1,100 records a forward) are aligned in one pass: an extra record
// in B is left out, a renamed one pairs at its place, every other record pairs with its own.
TEST(RunPairing, LongGroupsAreAlignedInOnePassWithTheSameResult)
{
    ProfileRun a, b;
    a.iterations = b.iterations = 1;
    a.modules = b.modules = {module("", "Model")};
    for (int k = 0; k < 1100; ++k) {
        const std::string name = "kernel_" + std::to_string(k % 37);
        addRecord(a, "", "linear", name, 1, 1);
        addRecord(b, "", "linear", k == 700 ? "another_library_kernel" : name, 1, 1);
        if (k == 300)
            addRecord(b, "", "linear", "extra_reduction", 1, 1);
    }
    const RunPairing p = pairRuns(a, b);
    EXPECT_EQ(p.paired.size(), 1100u);
    EXPECT_EQ(p.renamed(), 1);
    ASSERT_EQ(p.onlyInB.size(), 1u);
    EXPECT_EQ(p.onlyInB[0].nameB, "extra_reduction");
    EXPECT_TRUE(p.onlyInA.empty());
}
