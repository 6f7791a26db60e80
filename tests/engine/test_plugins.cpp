// SPDX-License-Identifier: Apache-2.0
// Provider plugins: the example plugin loads and its provider runs; faulty plugins are refused with a clear
// error and leave the registry as it was.
#include "build_path.h"
#include <kforge/error.h>
#include <kforge/events.h>
#include <kforge/file_hash.h>
#include <kforge/model_session.h>
#include <kforge/plugins.h>
#include <kforge/provider_catalog.h>
#include <kforge/provider_sdk.h>
#include <kforge/revalidate.h>
#include <kforge/runtime.h>

#include "test_helpers.h"

#include <ATen/ATen.h>

#include <gtest/gtest.h>

using namespace kforge;
using namespace kforge::test;

namespace {

std::string faulty(int n)
{
    return std::string(KFORGE_FAULTY_PLUGIN_DIR) + "/libkforge_faulty_plugin_" + std::to_string(n) + ".so";
}

size_t registeredTypes() { return ProviderRegistry::instance().list().size(); }

void expectRefused(const std::string& path, const std::string& cause)
{
    const size_t before = registeredTypes();
    try {
        loadProviderPlugin(path);
        FAIL() << path << " was accepted";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(path.substr(path.rfind('/') + 1)), std::string::npos) << what;
        EXPECT_NE(what.find(cause), std::string::npos) << what;
    }
    EXPECT_EQ(registeredTypes(), before);
}

} // namespace

TEST(Plugins, ExamplePluginRegistersAndRuns)
{
    const PluginInfo info = loadProviderPlugin(KFORGE_EXAMPLE_PLUGIN);
    EXPECT_EQ(info.providerTypes, std::vector<std::string>{"ExampleReluProvider"});
    EXPECT_EQ(info.abi, providerPluginAbi());
    const auto catalog = providerCatalog();
    const auto it =
        std::find_if(catalog.begin(), catalog.end(), [](const auto& e) { return e.typeName == "ExampleReluProvider"; });
    ASSERT_NE(it, catalog.end());
    EXPECT_EQ(it->function, "relu");
    EXPECT_EQ(it->plugin, info.path);

    auto session = ModelSession::open("builtin:convnet");
    const auto baseline = session->forward();
    KernelProviderRuntime runtime(*session, planOf({entry("stage", "relu", "ExampleReluProvider")}));
    auto stream = EventStream::attach(1024);
    auto applied = runtime.applied();
    const auto out = session->forward();
    EXPECT_NEAR(out[0].sum, baseline[0].sum, 1e-5);
    std::vector<Event> log;
    stream->drain(log);
    EXPECT_TRUE(std::any_of(log.begin(), log.end(), [](const Event& e) {
        return e.kind == EventKind::ProviderCall && e.provider == "ExampleReluProvider";
    }));

    // Loading it again is refused: its type is already there.
    expectRefused(KFORGE_EXAMPLE_PLUGIN, "already loaded");
}

// The example provider reads relu's normal form with the SDK's argument layer (kforge/provider_args.h): it serves
// a floating-point call, and declines an integer tensor or a stack that is not that form, leaving it untouched.
TEST(Plugins, ExamplePluginParsesWithTheArgumentLayer)
{
    if (!ProviderRegistry::instance().find("ExampleReluProvider"))
        loadProviderPlugin(KFORGE_EXAMPLE_PLUGIN);
    const auto provider = ProviderRegistry::instance().create({{"type", "ExampleReluProvider"}});
    const c10::OperatorHandle relu = c10::Dispatcher::singleton().findSchemaOrThrow("aten::relu", "");

    const at::Tensor x = at::tensor({-1.0f, 2.0f});
    EXPECT_TRUE(provider->prepare({torch::jit::Stack{x}}));
    torch::jit::Stack stack{x};
    ASSERT_TRUE(provider->call(relu, stack).wasServed());
    ASSERT_EQ(stack.size(), 1u);
    EXPECT_TRUE(at::equal(stack.back().toTensor(), at::tensor({0.0f, 2.0f})));

    const at::Tensor ints = at::tensor({-1, 2});
    torch::jit::Stack integer{ints};
    const CallResult declined = provider->call(relu, integer);
    ASSERT_FALSE(declined.wasServed());
    EXPECT_STREQ(declined.declined, "an integer tensor");
    ASSERT_EQ(integer.size(), 1u);
    EXPECT_TRUE(integer.back().toTensor().is_same(ints));

    torch::jit::Stack notTheForm{c10::IValue(1.5)};
    const CallResult wrong = provider->call(relu, notTheForm);
    ASSERT_FALSE(wrong.wasServed());
    EXPECT_STREQ(wrong.declined, "not relu's normal form");
    EXPECT_EQ(notTheForm.size(), 1u);
    EXPECT_FALSE(provider->prepare({torch::jit::Stack{ints}})); // supports() parses with the layer too
}

TEST(Plugins, DuplicateTypeRefusesTheWholePlugin)
{
    expectRefused(faulty(1), "already registered");
    EXPECT_EQ(ProviderRegistry::instance().find("FaultyNewProvider"), nullptr);
}

TEST(Plugins, ThrowingRegistrationRegistersNothing)
{
    expectRefused(faulty(2), "planted registration failure");
    EXPECT_EQ(ProviderRegistry::instance().find("FaultyThrowingProvider"), nullptr);
}

TEST(Plugins, AbiMismatchIsRefused)
{
    expectRefused(faulty(3), "rebuild the plugin");
    EXPECT_EQ(ProviderRegistry::instance().find("FaultyAbiProvider"), nullptr);
}

TEST(Plugins, NotAPluginIsRefused)
{
    TempDir dir;
    writeBytes(dir.path("random.so"), "definitely not an ELF file");
    expectRefused(dir.path("random.so").string(), "cannot be loaded");
    expectRefused(dir.path("missing.so").string(), "file not found");
    // A real shared library without the entry points.
    expectRefused(std::string(KFORGE_FAULTY_PLUGIN_DIR) + "/../lib/libkforge_engine.so",
                  "not a kforge provider plugin");
}

TEST(Plugins, ProviderPathLoadsFoldersAndReportsFailures)
{
    TempDir dir;
    writeBytes(dir.path("broken.so"), "nope");
    setenv("KFORGE_PROVIDER_PATH", (dir.path("").string() + ":/nonexistent-folder").c_str(), 1);
    std::vector<std::string> errors;
    const auto loaded = loadProviderPluginsFromEnvironment(errors);
    unsetenv("KFORGE_PROVIDER_PATH");
    EXPECT_TRUE(loaded.empty());
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_NE(errors[0].find("broken.so"), std::string::npos);
    EXPECT_NE(errors[1].find("/nonexistent-folder"), std::string::npos);
}

namespace {

// The example plugin, loaded once per process whichever test comes first.
void loadExamplePlugin()
{
    for (const PluginInfo& p : loadedProviderPlugins())
        if (std::find(p.providerTypes.begin(), p.providerTypes.end(), "ExampleReluProvider") != p.providerTypes.end())
            return;
    loadProviderPlugin(KFORGE_EXAMPLE_PLUGIN);
}

} // namespace

// Item 4/5 of the trust issue: a plugin's origin is its file's SHA-256 and its own version; a plan measured with
// another build of the plugin is refused until the user accepts it, then re-validated.
TEST(PluginProvenance, APlanMeasuredWithAnotherBuildOfThePluginIsRefusedUnlessAccepted)
{
    loadExamplePlugin();
    const ProviderOrigin origin = providerOrigin("ExampleReluProvider");
    EXPECT_EQ(origin.origin, "plugin");
    EXPECT_EQ(origin.sha256, fileSha256(origin.path));
    EXPECT_EQ(origin.version, "example-relu 1.0");

    auto session = ModelSession::open("builtin:convnet");
    Plan plan = planOf({entry("stage", "relu", "ExampleReluProvider")});
    stampProvenance(plan, "cpu", "kforge plan new");
    ASSERT_TRUE(plan.provenance);
    ASSERT_EQ(plan.provenance->providers.size(), 1u);
    EXPECT_EQ(plan.provenance->providers[0].sha256, origin.sha256);
    EXPECT_TRUE(revalidatePlan(*session, plan).entries.empty()) << "the same plugin file: nothing to re-validate";

    plan.provenance->providers[0].sha256 = std::string(64, 'a');
    const std::string refused = errorOf([&] { revalidatePlan(*session, plan); });
    EXPECT_NE(refused.find("refused: a provider plugin differs"), std::string::npos) << refused;
    EXPECT_NE(refused.find("entry 0"), std::string::npos) << refused;
    EXPECT_NE(refused.find("--accept-changed-plugins"), std::string::npos) << refused;
    EXPECT_TRUE(plan.entries[0].enabled) << "a refusal changes nothing";

    RevalidateOptions accept;
    accept.acceptChangedPlugins = true;
    const RevalidationReport report = revalidatePlan(*session, plan, accept);
    ASSERT_EQ(report.entries.size(), 1u);
    EXPECT_TRUE(report.entries[0].kept) << report.entries[0].verdict;
    EXPECT_NE(report.entries[0].verdict.find("correct on"), std::string::npos) << report.entries[0].verdict;

    plan.provenance->providers[0].sha256 = origin.sha256;
    plan.provenance->providers[0].version = "example-relu 0.9";
    const auto changes = provenanceChanges(plan, machineFingerprint("cpu"));
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_FALSE(changes[0].pluginChanged) << "another version of the same file is re-validated, not refused";
    EXPECT_EQ(changes[0].reasons[0], "measured with plugin version 'example-relu 0.9', here 'example-relu 1.0'");
}
