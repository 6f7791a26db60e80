// SPDX-License-Identifier: Apache-2.0
// Provenance in plan files (docs/design/plan-format.md §5): what is recorded, round trips in both dialects, strict
// reading, and which entries a change of machine or build flags.
#include <kforge/error.h>
#include <kforge/plan.h>
#include <kforge/provenance.h>
#include <kforge/version.h>

#include "test_helpers.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace kforge;
using namespace kforge::test;
using nlohmann::json;

namespace {

Plan measuredPlan()
{
    Plan plan;
    plan.entries.push_back(parseProvideSpec(":gelu:CpuGeluProvider"));
    plan.entries.push_back(parseProvideSpec(":layer_norm:CpuLayerNormProvider"));
    EntryMeasurement m;
    m.signatures = {"float32[8,197,768]", "float32[1,16,256]"};
    m.speedup = 1.31;
    m.speedupLow = 1.2;
    m.speedupHigh = 1.4;
    plan.entries[0].measured = m;
    stampProvenance(plan, "cpu", "kforge optimize");
    return plan;
}

std::string errorOfParse(const std::string& text)
{
    return errorOf([&] { parsePlan(text, "p.json"); });
}

} // namespace

TEST(Provenance, StampRecordsThisMachineAndEachProvidersOrigin)
{
    const Plan plan = measuredPlan();
    ASSERT_TRUE(plan.provenance);
    const Provenance& p = *plan.provenance;
    EXPECT_EQ(p.writtenBy, "kforge optimize");
    EXPECT_EQ(p.createdUtc.size(), 20u) << p.createdUtc; // 2026-12-04T21:05:00Z
    EXPECT_EQ(p.machine.device, "cpu");
    EXPECT_FALSE(p.machine.cpuIsa.empty());
    EXPECT_FALSE(p.machine.torch.empty());
    EXPECT_EQ(p.machine.kforge, KFORGE_VERSION_STRING);
    ASSERT_EQ(p.providers.size(), 2u);
    EXPECT_EQ(p.providers[0].type, "CpuGeluProvider");
    EXPECT_EQ(p.providers[0].origin, "built-in");
    EXPECT_EQ(p.providers[0].version, KFORGE_VERSION_STRING);
    EXPECT_TRUE(p.providers[0].sha256.empty()) << "a built-in provider has no file of its own";
}

TEST(Provenance, RoundTripsThroughTheKforgeDialectAsVersion2)
{
    const Plan plan = measuredPlan();
    const std::string text = toJson(plan);
    EXPECT_EQ(json::parse(text)["version"], 2);
    const Plan back = parsePlan(text, "p.json");
    ASSERT_TRUE(back.provenance);
    EXPECT_EQ(back.provenance->machine.cpuIsa, plan.provenance->machine.cpuIsa);
    EXPECT_EQ(back.provenance->machine.cpuModel, plan.provenance->machine.cpuModel);
    EXPECT_EQ(back.provenance->createdUtc, plan.provenance->createdUtc);
    ASSERT_EQ(back.provenance->providers.size(), 2u);
    EXPECT_EQ(back.provenance->providers[1].type, "CpuLayerNormProvider");
    ASSERT_TRUE(back.entries[0].measured);
    EXPECT_EQ(back.entries[0].measured->signatures, plan.entries[0].measured->signatures);
    EXPECT_DOUBLE_EQ(back.entries[0].measured->speedup, 1.31);
    EXPECT_DOUBLE_EQ(back.entries[0].measured->speedupHigh, 1.4);
    EXPECT_FALSE(back.entries[1].measured);
    EXPECT_EQ(toJson(back), text) << "a second round trip changes nothing";
}

TEST(Provenance, APlanWithoutItStaysVersion1)
{
    Plan plan;
    plan.entries.push_back(parseProvideSpec(":gelu:CpuGeluProvider"));
    EXPECT_EQ(json::parse(toJson(plan))["version"], 1) << "readable by builds that know version 1 only";
    EXPECT_FALSE(parsePlan(toJson(plan), "p.json").provenance);
}

TEST(Provenance, MalformedProvenanceIsAnErrorAtItsPath)
{
    const std::string head = R"({"format": "kforge-plan", "version": 2, )";
    const std::string entries = R"("entries": [{"function": "gelu", "provider": {"type": "CpuGeluProvider"}}]})";
    EXPECT_NE(errorOfParse(head + R"("provenance": {"machine": {"cpu_isa": 2}}, )" + entries)
                  .find("/provenance/machine/cpu_isa: expected a string"),
              std::string::npos);
    EXPECT_NE(errorOfParse(head + R"("provenance": {"machine": {"isa": "AVX2"}}, )" + entries)
                  .find("/provenance/machine/isa: unknown key 'isa'"),
              std::string::npos);
    EXPECT_NE(errorOfParse(head + R"("provenance": {"providers": {}}, )" + entries)
                  .find("/provenance/providers: expected an array"),
              std::string::npos);
    const std::string badInterval =
        head +
        R"("entries": [{"function": "gelu", "provider": {"type": "CpuGeluProvider"}, "measured": {"interval": [2, 1]}}]})";
    EXPECT_NE(errorOfParse(badInterval).find("/entries/0/measured/interval: expected [low, high]"), std::string::npos)
        << errorOfParse(badInterval);
    const std::string badSpeedup =
        head +
        R"("entries": [{"function": "gelu", "provider": {"type": "CpuGeluProvider"}, "measured": {"speedup": -1}}]})";
    EXPECT_NE(errorOfParse(badSpeedup).find("/entries/0/measured/speedup: expected a positive number"),
              std::string::npos);
}

TEST(Provenance, AnAituneExportCarriesItUnderAKeyAituneIgnoresAndReadsItBack)
{
    Plan plan;
    plan.entries.push_back(parseProvideSpec(":scaled_dot_product_attention:TorchSDPAKernelProvider:"
                                            "{\"backend\": \"MATH\"}"));
    EntryMeasurement m;
    m.signatures = {"float32[1,12,197,64]"};
    m.speedup = 1.1;
    plan.entries[0].measured = m;
    stampProvenance(plan, "cpu", "kforge optimize");
    const json exported = json::parse(exportAitune(plan));
    EXPECT_EQ(exported["providers"], json::parse(R"([{"type": "TorchSDPAKernelProvider", "backend": "MATH"}])"))
        << "AITune's own list is untouched";
    ASSERT_TRUE(exported.contains("kforge_provenance"));
    EXPECT_EQ(exported["kforge_provenance"]["machine"]["cpu_isa"], plan.provenance->machine.cpuIsa);
    EXPECT_EQ(exported["kforge_provenance"]["entries"][0]["signatures"][0], "float32[1,12,197,64]");

    const Plan back = importAitune(exported.dump());
    ASSERT_TRUE(back.provenance);
    EXPECT_EQ(back.provenance->writtenBy, "kforge optimize");
    ASSERT_TRUE(back.entries[0].measured);
    EXPECT_DOUBLE_EQ(back.entries[0].measured->speedup, 1.1);
    EXPECT_FALSE(back.extra.contains("kforge_provenance")) << "read into the provenance, not kept twice";
    EXPECT_EQ(json::parse(exportAitune(back)), exported);
}

TEST(Provenance, TheSameMachineFlagsNothing)
{
    const Plan plan = measuredPlan();
    EXPECT_TRUE(provenanceChanges(plan, machineFingerprint("cpu")).empty());
    Plan none;
    none.entries = plan.entries;
    EXPECT_TRUE(provenanceChanges(none, MachineFingerprint{}).empty()) << "nothing recorded, nothing to compare";
}

TEST(Provenance, AnotherIsaFlagsEveryEnabledEntryAndSaysWhat)
{
    Plan plan = measuredPlan();
    plan.provenance->machine.cpuIsa = "AVX512";
    plan.entries[1].enabled = false;
    MachineFingerprint here = machineFingerprint("cpu");
    here.cpuIsa = "AVX2";
    const auto changes = provenanceChanges(plan, here);
    ASSERT_EQ(changes.size(), 1u) << "the disabled entry never runs";
    EXPECT_EQ(changes[0].entry, 0);
    ASSERT_EQ(changes[0].reasons.size(), 1u);
    EXPECT_EQ(changes[0].reasons[0], "measured with the CPU ISA level AVX512, here AVX2");
    EXPECT_FALSE(changes[0].pluginChanged);
}

TEST(Provenance, AnotherTorchOrDeviceOrKforgeBuildFlagsTheEntries)
{
    Plan plan = measuredPlan();
    plan.provenance->machine.torch = "2.9.0";
    plan.provenance->providers[1].version = "0.0.1";
    const auto changes = provenanceChanges(plan, machineFingerprint("cpu"));
    ASSERT_EQ(changes.size(), 2u);
    EXPECT_NE(changes[0].reasons[0].find("measured with torch 2.9.0, here"), std::string::npos);
    ASSERT_EQ(changes[1].reasons.size(), 2u);
    EXPECT_NE(changes[1].reasons[1].find("measured with kforge 0.0.1, here"), std::string::npos);

    Plan cuda = measuredPlan();
    cuda.provenance->machine.device = "cuda:0";
    cuda.provenance->machine.gpuName = "NVIDIA H200";
    const auto moved = provenanceChanges(cuda, machineFingerprint("cpu"));
    ASSERT_EQ(moved.size(), 2u);
    EXPECT_EQ(moved[0].reasons[0], "measured on cuda:0, running on cpu");
}

namespace {
ProviderOrigin changedPlugin(const std::string& type)
{
    return {type, "plugin", "/opt/p/libgelu.so", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
            "1.0"};
}
} // namespace

TEST(Provenance, APluginWhoseShaDiffersIsMarkedForRefusal)
{
    Plan plan = measuredPlan();
    plan.provenance->providers[0] = {"CpuGeluProvider", "plugin", "/opt/p/libgelu.so",
                                     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "1.0"};
    plan.provenance->providers[1] = changedPlugin("CpuLayerNormProvider");
    const auto changes = provenanceChanges(plan, machineFingerprint("cpu"), changedPlugin);
    ASSERT_EQ(changes.size(), 1u) << "the layer_norm plugin is the one recorded";
    EXPECT_EQ(changes[0].entry, 0);
    EXPECT_TRUE(changes[0].pluginChanged);
    EXPECT_NE(changes[0].reasons[0].find("differs from the one measured (SHA-256 aaaaaaaaaaaa..., here bbbbbbbbbbbb"),
              std::string::npos)
        << changes[0].reasons[0];
}

// A plugin recorded without a SHA-256 cannot be matched with the file here: its entries are re-validated (not
// refused: the plan claims nothing about the file).
TEST(Provenance, APluginRecordedWithoutAShaIsReValidated)
{
    Plan plan = measuredPlan();
    plan.provenance->providers[0] = {"CpuGeluProvider", "plugin", "/opt/p/libgelu.so", "", "1.0"};
    plan.provenance->providers[1] = changedPlugin("CpuLayerNormProvider");
    const auto changes = provenanceChanges(plan, machineFingerprint("cpu"), changedPlugin);
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].entry, 0);
    EXPECT_FALSE(changes[0].pluginChanged);
    ASSERT_EQ(changes[0].reasons.size(), 1u);
    EXPECT_EQ(changes[0].reasons[0],
              "plugin /opt/p/libgelu.so was recorded without a SHA-256: it cannot be matched with the one measured");
}

TEST(PlanVerifyThresholds, APlansOwnThresholdsRoundTripAndAreReadStrictly)
{
    Plan plan;
    plan.entries.push_back(parseProvideSpec(":gelu:CpuGeluProvider"));
    VerifyThresholds t;
    t.minCosine = 0.9999;
    t.absolute = 1e-5;
    t.minTop1Agreement = 0.99;
    plan.verifyThresholds = t;
    const std::string text = toJson(plan);
    EXPECT_EQ(json::parse(text)["version"], 2);
    EXPECT_EQ(json::parse(text)["verify"]["min_cosine"], 0.9999);
    const Plan back = parsePlan(text, "p.json");
    ASSERT_TRUE(back.verifyThresholds);
    EXPECT_DOUBLE_EQ(back.verifyThresholds->minCosine, 0.9999);
    EXPECT_DOUBLE_EQ(*back.verifyThresholds->absolute, 1e-5);
    EXPECT_FALSE(back.verifyThresholds->relative);
    EXPECT_DOUBLE_EQ(*back.verifyThresholds->minTop1Agreement, 0.99);
    EXPECT_EQ(toJson(back), text);

    const std::string head = R"({"format": "kforge-plan", "version": 2, "verify": )";
    const std::string tail = R"(, "entries": []})";
    EXPECT_NE(errorOfParse(head + R"({"cosine": 1})" + tail).find("/verify/cosine: unknown key 'cosine'"),
              std::string::npos);
    EXPECT_NE(errorOfParse(head + R"({"min_top1_agreement": 3})" + tail)
                  .find("/verify/min_top1_agreement: expected a number from 0"),
              std::string::npos);
    EXPECT_NE(errorOfParse(head + R"({"allow_new_non_finite": 1})" + tail)
                  .find("/verify/allow_new_non_finite: expected true or false"),
              std::string::npos);
}
