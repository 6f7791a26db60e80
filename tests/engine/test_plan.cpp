// SPDX-License-Identifier: Apache-2.0
// Plan files (docs/design/plan-format.md): both dialects, round trips, validation, atomic saving.
#include "build_path.h"
#include <kforge/error.h>
#include <kforge/file_hash.h>
#include <kforge/model_session.h>
#include <kforge/plan.h>
#include <kforge/runtime.h>

#include "test_helpers.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>

using namespace kforge;
using namespace kforge::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path kPlans = fs::path(KFORGE_TEST_DATA) / "plans";
const std::string kSdpa = "scaled_dot_product_attention";

std::string readText(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The message of the kforge::Error `body` throws, or a test failure.
template <typename F> std::string errorOf(F&& body)
{
    try {
        body();
    } catch (const Error& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected a kforge::Error";
    return {};
}

std::vector<std::string> filesIn(const fs::path& dir)
{
    std::vector<std::string> names;
    for (const auto& item : fs::directory_iterator(dir))
        names.push_back(item.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

PlanEntry withSettings(PlanEntry e, const json& settings)
{
    for (const auto& [key, value] : settings.items())
        e.provider[key] = value;
    return e;
}

} // namespace

// ---- Reading and writing the kforge dialect --------------------------------------------------------------------

TEST(PlanIo, ReadsTheKforgeSample)
{
    const Plan plan = readPlan((kPlans / "tiny_gpt_ln_block0_sdpa_all.kfplan.json").string());
    EXPECT_EQ(plan.version, 1);
    EXPECT_EQ(plan.dialect, PlanDialect::Kforge);
    EXPECT_EQ(plan.modelName, "tiny-gpt");
    EXPECT_TRUE(plan.modelSha256.empty());
    ASSERT_EQ(plan.entries.size(), 2u);
    EXPECT_EQ(plan.entries[0].scope, "blocks.0");
    EXPECT_EQ(plan.entries[0].function, "layer_norm");
    EXPECT_EQ(plan.entries[0].providerType(), "AtenLayerNormProvider");
    EXPECT_TRUE(plan.entries[0].enabled);
    EXPECT_EQ(plan.entries[0].note, "layer_norm in block 0 only");
    EXPECT_EQ(plan.entries[1].scope, "");
    EXPECT_EQ(plan.entries[1].provider, (json{{"type", "TorchSDPAKernelProvider"}, {"backend", "MATH"}}));
    EXPECT_TRUE(plan.entries[1].enabled); // the default
    EXPECT_TRUE(plan.extra.empty());
}

TEST(PlanIo, UnknownTopLevelKeysSurviveARoundTrip)
{
    const fs::path file = kPlans / "tiny_gpt_with_extras.kfplan.json";
    const Plan plan = readPlan(file.string());
    const json original = json::parse(readText(file));
    EXPECT_EQ(plan.extra, (json{{"studio", original["studio"]}, {"created_by", original["created_by"]}}));
    EXPECT_EQ(plan.modelSha256, std::string(64, '0'));
    ASSERT_EQ(plan.entries.size(), 2u);
    EXPECT_FALSE(plan.entries[0].enabled);
    EXPECT_EQ(plan.entries[0].note, "A/B: off for now");

    TempDir dir;
    const std::string saved = dir.path("saved.kfplan.json").string();
    savePlan(plan, saved);
    const json written = json::parse(readText(saved));
    EXPECT_EQ(written["studio"], original["studio"]);
    EXPECT_EQ(written["created_by"], original["created_by"]);
    EXPECT_EQ(written["model"], original["model"]);
    // Every key of the original is written back with its value (the writer adds "enabled": true where omitted).
    for (size_t i = 0; i < original["entries"].size(); ++i)
        for (const auto& [key, value] : original["entries"][i].items())
            EXPECT_EQ(written["entries"][i][key], value) << "/entries/" << i << "/" << key;
    // And a second round trip changes nothing.
    EXPECT_EQ(toJson(readPlan(saved)), readText(saved));
}

TEST(PlanIo, SavedPlanReadsBackEqual)
{
    Plan plan;
    plan.modelName = "tiny-gpt";
    plan.modelSha256 = "ab12";
    plan.extra = {{"x-tool", {{"answer", 42}}}};
    plan.entries.push_back(entry("blocks.0.attn", kSdpa, "TorchSDPAKernelProvider"));
    plan.entries[0].provider["backend"] = "MATH";
    plan.entries.push_back(entry("", "gelu", "AtenGeluProvider"));
    plan.entries[1].enabled = false;
    plan.entries[1].note = "ünïcode note";

    TempDir dir;
    const std::string path = dir.path("p.kfplan.json").string();
    savePlan(plan, path);
    const std::string text = readText(path);
    EXPECT_EQ(text, toJson(plan));
    EXPECT_EQ(text.rfind("{\n  \"format\": \"kforge-plan\",\n  \"version\": 1,", 0), 0u) << text; // 2-space indent
    EXPECT_EQ(text.back(), '\n');

    const Plan back = readPlan(path);
    EXPECT_EQ(back.modelName, plan.modelName);
    EXPECT_EQ(back.modelSha256, plan.modelSha256);
    EXPECT_EQ(back.extra, plan.extra);
    ASSERT_EQ(back.entries.size(), plan.entries.size());
    for (size_t i = 0; i < plan.entries.size(); ++i) {
        EXPECT_EQ(back.entries[i].scope, plan.entries[i].scope);
        EXPECT_EQ(back.entries[i].function, plan.entries[i].function);
        EXPECT_EQ(back.entries[i].provider, plan.entries[i].provider);
        EXPECT_EQ(back.entries[i].enabled, plan.entries[i].enabled);
        EXPECT_EQ(back.entries[i].note, plan.entries[i].note);
    }
    EXPECT_EQ(filesIn(dir.path("")), std::vector<std::string>{"p.kfplan.json"}); // no temporary file left
}

TEST(PlanIo, ProviderTypeIsWrittenFirst)
{
    Plan plan{{withSettings(entry("", kSdpa, "TorchSDPAKernelProvider"), {{"backend", "MATH"}})}};
    const std::string text = toJson(plan);
    EXPECT_LT(text.find("\"type\""), text.find("\"backend\"")) << text;
}

TEST(PlanIo, MissingFunctionIsTakenFromTheProviderType)
{
    const Plan plan = parsePlan(R"({"format": "kforge-plan", "version": 1, "entries": [
        {"scope": "blocks.0", "provider": {"type": "AtenGeluProvider"}},
        {"provider": {"type": "FlashAttention4KernelProvider"}}]})",
                                "test");
    ASSERT_EQ(plan.entries.size(), 2u);
    EXPECT_EQ(plan.entries[0].function, "gelu");
    EXPECT_EQ(plan.entries[1].function, kSdpa);
    EXPECT_EQ(plan.entries[1].scope, "");
}

// A NUL byte is not the end of a plan: what follows it would otherwise be ignored without a word.
TEST(PlanIo, ANulByteIsAnErrorNotTheEndOfTheFile)
{
    std::string text = "{\"format\": \"kforge-plan\", \"entries\": []}\n";
    text += '\0';
    text += "{\"scope\": \"x\"}";
    const std::string message = errorOf([&] { parsePlan(text, "nul.kfplan.json"); });
    EXPECT_TRUE(contains(message, "nul.kfplan.json")) << message;
    EXPECT_TRUE(contains(message, "malformed JSON at line 2, column 1: a NUL byte")) << message;
    EXPECT_TRUE(contains(message, "14 more byte(s) after it")) << message;
}

TEST(PlanIo, MalformedJsonNamesLineAndColumn)
{
    const std::string text = "{\n  \"format\": \"kforge-plan\",\n  \"version\": 1,,\n  \"entries\": []\n}\n";
    const std::string message = errorOf([&] { parsePlan(text, "bad.kfplan.json"); });
    EXPECT_TRUE(contains(message, "bad.kfplan.json")) << message;
    EXPECT_TRUE(contains(message, "malformed JSON at line 3, column 16")) << message;
    EXPECT_FALSE(contains(message, "[json.exception")) << message;

    // An unexpected end is reported where the text ends.
    const std::string cut = "{\n  \"format\": \"kforge-plan\",\n  \"entries\": [\n";
    const std::string cutMessage = errorOf([&] { parsePlan(cut, "cut.json"); });
    EXPECT_TRUE(contains(cutMessage, "line 4, column 1")) << cutMessage;

    // And from a file, naming the file.
    TempDir dir;
    writeBytes(dir.path("broken.json"), "{\"providers\": [ {\"type\": 1 ]}");
    const std::string fileMessage = errorOf([&] { readPlan(dir.path("broken.json").string()); });
    EXPECT_TRUE(contains(fileMessage, dir.path("broken.json").string())) << fileMessage;
    EXPECT_TRUE(contains(fileMessage, "line 1, column 28")) << fileMessage;
}

TEST(PlanIo, WrongTypesAreReportedAllAtOnceWithTheirJsonPath)
{
    const std::string text = R"({"format": "kforge-plan", "version": 1, "model": {"name": 7}, "entries": [
        {"scope": "", "function": "gelu", "provider": {"type": "AtenGeluProvider"}},
        {"scope": "", "function": "gelu", "provider": {"type": "AtenGeluProvider"}, "enabled": "yes"},
        {"scope": 5, "function": "gelu", "provider": {"type": "AtenGeluProvider"}},
        {"scope": "", "function": ["gelu"], "provider": "AtenGeluProvider", "note": false},
        {"scope": "", "function": "gelu", "provider": {"type": 3}},
        {"scope": "", "function": "gelu", "provider": {"backend": "MATH"}},
        {"scope": "", "function": "gelu"},
        "not an object",
        {"scope": "", "function": "gelu", "provider": {"type": "AtenGeluProvider"}, "enable": false}]})";
    const std::string message = errorOf([&] { parsePlan(text, "p"); });
    for (const char* path :
         {"/model/name", "/entries/1/enabled", "/entries/2/scope", "/entries/3/function", "/entries/3/provider",
          "/entries/3/note", "/entries/4/provider/type", "/entries/5/provider: missing \"type\"",
          "/entries/6: missing \"provider\"", "/entries/7: expected an object", "/entries/8/enable: unknown key"})
        EXPECT_TRUE(contains(message, path)) << path << " not in: " << message;
    EXPECT_FALSE(contains(message, "/entries/0")) << message;

    EXPECT_TRUE(contains(errorOf([] { parsePlan(R"({"format": "kforge-plan", "entries": {}})", "p"); }),
                         "/entries: expected an array"));
    EXPECT_TRUE(contains(errorOf([] { parsePlan(R"({"format": "kforge-plan", "version": "1"})", "p"); }),
                         "/version: expected an integer"));
    EXPECT_TRUE(contains(errorOf([] { parsePlan(R"({"format": 1})", "p"); }), "/format"));
    EXPECT_TRUE(contains(errorOf([] { parsePlan(R"({"format": "other-plan"})", "p"); }), "unknown plan format"));
    EXPECT_TRUE(contains(errorOf([] { parsePlan(R"([1, 2])", "p"); }), "not a plan"));
    EXPECT_TRUE(contains(errorOf([] { parsePlan(R"({"entries": []})", "p"); }), "not a plan"));
}

TEST(PlanIo, NewerVersionIsRefused)
{
    const std::string message = errorOf([] {
        parsePlan(R"({"format": "kforge-plan", "version": )" + std::to_string(kPlanFormatVersion + 1) +
                      R"(, "entries": "whatever"})",
                  "p");
    });
    EXPECT_TRUE(contains(message, "/version")) << message;
    EXPECT_TRUE(contains(message, "newer than this build understands")) << message;
    EXPECT_TRUE(contains(errorOf([] { parsePlan(R"({"format": "kforge-plan", "version": 0})", "p"); }), "/version"));
}

TEST(PlanIo, ReadingAMissingOrEmptyFileNamesIt)
{
    EXPECT_TRUE(contains(errorOf([] { readPlan("/nonexistent/plan.json"); }), "/nonexistent/plan.json: not found"));
    TempDir dir;
    writeBytes(dir.path("empty.json"), "  \n");
    EXPECT_TRUE(contains(errorOf([&] { readPlan(dir.path("empty.json").string()); }), "empty"));
    fs::create_directories(dir.path("folder.json"));
    EXPECT_TRUE(contains(errorOf([&] { readPlan(dir.path("folder.json").string()); }), "is a directory"));
}

TEST(PlanIo, FileSha256MatchesKnownDigests)
{
    TempDir dir;
    writeBytes(dir.path("empty"), "");
    writeBytes(dir.path("abc"), "abc");
    writeBytes(dir.path("two-blocks"), "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq");
    writeBytes(dir.path("million-a"), std::string(1000000, 'a'));
    EXPECT_EQ(fileSha256(dir.path("empty").string()),
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(fileSha256(dir.path("abc").string()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(fileSha256(dir.path("two-blocks").string()),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(fileSha256(dir.path("million-a").string()),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    EXPECT_THROW(fileSha256(dir.path("missing").string()), Error);
}

// ---- Atomic saving ---------------------------------------------------------------------------------------------

TEST(PlanSave, IntoAMissingFolderFailsAndCreatesNothing)
{
    TempDir dir;
    const std::string path = dir.path("missing/plan.kfplan.json").string();
    const std::string message = errorOf([&] { savePlan(Plan{}, path); });
    EXPECT_TRUE(contains(message, path)) << message;
    EXPECT_TRUE(contains(message, "does not exist")) << message;
    EXPECT_TRUE(filesIn(dir.path("")).empty());
}

TEST(PlanSave, OverADirectoryFailsAndLeavesIt)
{
    TempDir dir;
    fs::create_directories(dir.path("plan.json"));
    EXPECT_TRUE(contains(errorOf([&] { savePlan(Plan{}, dir.path("plan.json").string()); }), "is a directory"));
    EXPECT_TRUE(fs::is_directory(dir.path("plan.json")));
    EXPECT_EQ(filesIn(dir.path("")), std::vector<std::string>{"plan.json"});
}

// The write itself fails half way (the file size limit is hit): the original is untouched and the temporary file,
// which did get created and partly written, is gone.
TEST(PlanSave, AFailedWriteLeavesTheOriginalAndNoTemporaryFile)
{
    TempDir dir;
    const std::string path = dir.path("plan.kfplan.json").string();
    const std::string original = "{\"format\": \"kforge-plan\", \"version\": 1, \"entries\": []}\n";
    writeBytes(path, original);
    Plan big;
    for (int i = 0; i < 200; ++i)
        big.entries.push_back(entry("blocks.0", "gelu", "AtenGeluProvider"));

    rlimit saved{};
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
    const auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = saved;
    small.rlim_cur = 512;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    std::string message;
    try {
        savePlan(big, path);
    } catch (const Error& e) {
        message = e.what();
    }
    setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, oldHandler);

    EXPECT_TRUE(contains(message, "cannot write")) << message;
    EXPECT_TRUE(contains(message, "left as it was")) << message;
    EXPECT_EQ(readText(path), original);
    EXPECT_EQ(filesIn(dir.path("")), std::vector<std::string>{"plan.kfplan.json"});
}

TEST(PlanSave, IntoAReadOnlyFolderFailsAndLeavesTheTarget)
{
    TempDir dir;
    fs::create_directories(dir.path("ro"));
    const std::string path = dir.path("ro/plan.kfplan.json").string();
    writeBytes(path, "old");
    ASSERT_EQ(chmod(dir.path("ro").c_str(), 0555), 0);
    const bool writable = access(dir.path("ro").c_str(), W_OK) == 0; // root ignores permissions
    if (!writable) {
        EXPECT_TRUE(contains(errorOf([&] { savePlan(Plan{}, path); }), "temporary file"));
        EXPECT_EQ(readText(path), "old");
        EXPECT_EQ(filesIn(dir.path("ro")), std::vector<std::string>{"plan.kfplan.json"});
    }
    chmod(dir.path("ro").c_str(), 0755);
    if (writable)
        GTEST_SKIP() << "running as root: a read-only folder is writable (the other PlanSave tests cover failures)";
}

TEST(PlanSave, ReplacingKeepsTheFilePermissions)
{
    TempDir dir;
    const std::string path = dir.path("plan.kfplan.json").string();
    writeBytes(path, "old");
    ASSERT_EQ(chmod(path.c_str(), 0640), 0);
    savePlan(Plan{}, path);
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
    EXPECT_EQ(readPlan(path).entries.size(), 0u);
}

// ---- The AITune dialect ----------------------------------------------------------------------------------------

TEST(PlanAitune, EverySampleImportsAndExportsToEqualJson)
{
    int samples = 0;
    for (const auto& item : fs::directory_iterator(kPlans)) {
        const std::string name = item.path().filename().string();
        if (name.rfind("aitune_", 0) != 0 || name == "aitune_reference_example.json")
            continue;
        ++samples;
        const std::string text = readText(item.path());
        const Plan plan = importAitune(text);
        ASSERT_EQ(plan.entries.size(), 1u) << name;
        EXPECT_EQ(plan.entries[0].scope, "") << name;
        EXPECT_EQ(plan.entries[0].function, kSdpa) << name;
        EXPECT_TRUE(plan.entries[0].enabled) << name;
        EXPECT_EQ(json::parse(exportAitune(plan)), json::parse(text)) << name;
        // readPlan detects the dialect; through a kforge plan file and back gives the same.
        EXPECT_EQ(planDialect(text, name), PlanDialect::Aitune);
        const Plan read = readPlan(item.path().string());
        EXPECT_EQ(read.dialect, PlanDialect::Aitune) << name;
        EXPECT_EQ(json::parse(exportAitune(parsePlan(toJson(read), name))), json::parse(text)) << name;
    }
    EXPECT_EQ(samples, 8);
}

TEST(PlanAitune, SettingsOfProvidersWeCannotRunAreKeptIntact)
{
    const Plan fa4 = readPlan((kPlans / "aitune_flash_attention4_keyword.json").string());
    ASSERT_EQ(fa4.entries.size(), 1u);
    EXPECT_EQ(fa4.entries[0].provider,
              (json{{"type", "FlashAttention4KernelProvider"},
                    {"qkv_source", "keyword_qkv"},
                    {"flash_kwargs", {{"causal", true}, {"softmax_scale", 0.125}, {"pack_gqa", false}}},
                    {"copy_free_layout", true}}));
    EXPECT_TRUE(isKnownAituneOnlyType("FlashAttention4KernelProvider"));
    EXPECT_TRUE(isKnownAituneOnlyType("SageAttentionKernelProvider"));
    EXPECT_TRUE(isKnownAituneOnlyType("DiffusersAttentionKernelProvider"));
    EXPECT_FALSE(isKnownAituneOnlyType("TorchSDPAKernelProvider")); // this one we run
    const Plan sage = readPlan((kPlans / "aitune_sage_attention.json").string());
    EXPECT_EQ(sage.entries[0].provider["use_diffusers_native_hnd_view"], true);
    const Plan diffusers = readPlan((kPlans / "aitune_diffusers_attention.json").string());
    EXPECT_EQ(diffusers.entries[0].provider["backend"], "_flash_3_hub");
    // A type nobody knows is kept too, with no function.
    const Plan unknown = importAitune(R"({"providers": [{"type": "MyTritonGeluProvider", "block": 128}]})");
    ASSERT_EQ(unknown.entries.size(), 1u);
    EXPECT_EQ(unknown.entries[0].function, "");
    EXPECT_EQ(unknown.entries[0].provider["block"], 128);
    EXPECT_EQ(json::parse(exportAitune(unknown)),
              json::parse(R"({"providers": [{"type": "MyTritonGeluProvider", "block": 128}]})"));
}

TEST(PlanAitune, TheReferenceExampleImportsButCannotExportBack)
{
    const Plan plan = readPlan((kPlans / "aitune_reference_example.json").string());
    ASSERT_EQ(plan.entries.size(), 4u);
    EXPECT_EQ(plan.entries[1].providerType(), "FlashAttention4KernelProvider");
    const std::string message = errorOf([&] { exportAitune(plan); });
    EXPECT_TRUE(contains(message, "entries 0 and 1 both replace 'scaled_dot_product_attention'")) << message;
    EXPECT_TRUE(contains(message, "entries 0 and 3")) << message;
    // Keeping one of them (the others disabled) exports that one.
    Plan one = plan;
    for (size_t i = 0; i < one.entries.size(); ++i)
        one.entries[i].enabled = i == 1;
    EXPECT_EQ(json::parse(exportAitune(one)), (json{{"providers", {plan.entries[1].provider}}}));
}

TEST(PlanAitune, ExportRefusesScopesAndSharedFunctionsListingEveryReason)
{
    Plan plan{{entry("blocks.0", "gelu", "AtenGeluProvider"), entry("", kSdpa, "TorchSDPAKernelProvider"),
               entry("", kSdpa, "TorchSDPAKernelProvider"), entry("", "layer_norm", "TorchSDPAKernelProvider")}};
    const std::string message = errorOf([&] { exportAitune(plan); });
    EXPECT_TRUE(contains(message, "refused")) << message;
    EXPECT_TRUE(contains(message, "entry 0 (scope 'blocks.0', function 'gelu') is scoped to 'blocks.0'")) << message;
    EXPECT_TRUE(contains(message, "entries 1 and 2 both replace 'scaled_dot_product_attention'")) << message;
    EXPECT_TRUE(contains(message, "provider 'TorchSDPAKernelProvider' replaces 'scaled_dot_product_attention'"))
        << message;

    // Disabled entries are left out, and then nothing is in the way.
    plan.entries[0].enabled = false;
    plan.entries[2].enabled = false;
    plan.entries[3].enabled = false;
    EXPECT_EQ(json::parse(exportAitune(plan)), (json{{"providers", {{{"type", "TorchSDPAKernelProvider"}}}}}));
}

TEST(PlanAitune, ImportIntoAScope)
{
    const Plan plan = importAitune(readText(kPlans / "aitune_sdpa_math.json"), "blocks.1");
    ASSERT_EQ(plan.entries.size(), 1u);
    EXPECT_EQ(plan.entries[0].scope, "blocks.1");
    EXPECT_TRUE(contains(errorOf([&] { exportAitune(plan); }), "scoped to 'blocks.1'"));
}

TEST(PlanAitune, MalformedAitunePlansNameThePath)
{
    EXPECT_TRUE(contains(errorOf([] { importAitune(R"({"providers": {}})"); }), "/providers: expected an array"));
    const std::string message = errorOf([] {
        importAitune(R"({"providers": [{"type": "TorchSDPAKernelProvider"}, {"backend": "MATH"}, 3, {"type": 1}]})");
    });
    EXPECT_TRUE(contains(message, "/providers/1: missing \"type\"")) << message;
    EXPECT_TRUE(contains(message, "/providers/2: expected an object")) << message;
    EXPECT_TRUE(contains(message, "/providers/3/type: expected a string")) << message;
    EXPECT_TRUE(contains(errorOf([] { importAitune(R"({"format": "kforge-plan", "entries": []})"); }), "kforge plan"));
    EXPECT_TRUE(contains(errorOf([] { importAitune("{\"providers\": [\n  {\"type\": }]}"); }), "line 2, column 12"));
}

// ---- Validation against builtin:tiny-gpt -----------------------------------------------------------------------

class PlanValidation : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        registerTestProviders();
        s_session = ModelSession::open("builtin:tiny-gpt").release();
    }
    static void TearDownTestSuite()
    {
        delete s_session;
        s_session = nullptr;
    }
    std::vector<PlanProblem> validate(const Plan& plan, const std::string& device = "cpu")
    {
        return validatePlan(plan, *s_session, device);
    }
    static ModelSession* s_session;
};
ModelSession* PlanValidation::s_session = nullptr;

TEST_F(PlanValidation, TheSamplePlanIsValid)
{
    EXPECT_TRUE(validate(readPlan((kPlans / "tiny_gpt_ln_block0_sdpa_all.kfplan.json").string())).empty());
    EXPECT_TRUE(validate(readPlan((kPlans / "tiny_gpt_with_extras.kfplan.json").string()), "cuda").empty());
    EXPECT_TRUE(validate(Plan{}).empty());
}

TEST_F(PlanValidation, UnknownScopeNamesTheNearestModulePaths)
{
    const auto problems = validate(Plan{{entry("blocks.0.atn", kSdpa, "TorchSDPAKernelProvider")}});
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].entry, 0);
    EXPECT_EQ(problems[0].jsonPath, "/entries/0/scope");
    EXPECT_EQ(problems[0].kind, "unknown-scope");
    EXPECT_TRUE(contains(problems[0].message, "'blocks.0.atn'")) << problems[0].message;
    EXPECT_TRUE(contains(problems[0].fix, "'blocks.0.attn'")) << problems[0].fix;
    // A last component alone finds the full paths that end with it.
    const auto bare = validate(Plan{{entry("mlp", "gelu", "AtenGeluProvider")}});
    ASSERT_EQ(bare.size(), 1u);
    EXPECT_TRUE(contains(bare[0].fix, "'blocks.0.mlp', 'blocks.1.mlp'")) << bare[0].fix;
}

TEST_F(PlanValidation, FunctionNotCalledUnderTheScopeListsWhatIs)
{
    const auto problems = validate(Plan{{entry("blocks.0.attn", "gelu", "AtenGeluProvider")}});
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].kind, "function-not-called");
    EXPECT_EQ(problems[0].jsonPath, "/entries/0/function");
    EXPECT_TRUE(contains(problems[0].fix, "linear x2, scaled_dot_product_attention")) << problems[0].fix;
    EXPECT_TRUE(contains(problems[0].fix, "'blocks.0.mlp'")) << problems[0].fix; // where gelu is called
}

TEST_F(PlanValidation, UnknownFunctionName)
{
    const auto problems = validate(Plan{{entry("", "gelux", "AtenGeluProvider")}});
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].kind, "unknown-function");
    EXPECT_EQ(problems[0].jsonPath, "/entries/0/function");
    EXPECT_TRUE(contains(problems[0].fix, "use 'gelu'")) << problems[0].fix;
}

TEST_F(PlanValidation, UnknownProviderTypeIsKeptAndReported)
{
    const auto problems = validate(Plan{{entry("", "gelu", "AtenGeluProvidr")}});
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].kind, "unknown-provider");
    EXPECT_EQ(problems[0].jsonPath, "/entries/0/provider/type");
    EXPECT_TRUE(contains(problems[0].fix, "'AtenGeluProvider'")) << problems[0].fix;
}

TEST_F(PlanValidation, AituneProvidersWeCannotRunAreUnavailable)
{
    const Plan plan = readPlan((kPlans / "aitune_reference_example.json").string());
    const auto problems = validate(plan);
    std::vector<std::string> kinds;
    for (const auto& p : problems)
        kinds.push_back(std::to_string(p.entry) + ":" + p.kind);
    // Entries 1-3 cannot run; all four share the function at the root.
    EXPECT_EQ(kinds, (std::vector<std::string>{"1:unavailable-provider", "1:duplicate", "2:unavailable-provider",
                                               "2:duplicate", "3:unavailable-provider", "3:duplicate"}));
    EXPECT_TRUE(contains(problems[0].message, "FlashAttention4KernelProvider")) << problems[0].message;
    EXPECT_TRUE(contains(problems[0].fix, "'TorchSDPAKernelProvider'")) << problems[0].fix;
}

TEST_F(PlanValidation, ProviderThatDoesNotReplaceTheFunction)
{
    const auto problems = validate(Plan{{entry("blocks.0", "layer_norm", "TorchSDPAKernelProvider")}});
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].kind, "wrong-function");
    EXPECT_TRUE(contains(problems[0].message, "replaces 'scaled_dot_product_attention', not 'layer_norm'"))
        << problems[0].message;
    EXPECT_TRUE(contains(problems[0].fix, "'AtenLayerNormProvider'")) << problems[0].fix;
}

TEST_F(PlanValidation, ProviderNotAvailableOnTheDevice)
{
    const Plan plan{{entry("blocks.0", "gelu", "TestSlowGeluProvider")}}; // registered for cpu only
    EXPECT_TRUE(validate(plan, "cpu").empty());
    const auto problems = validate(plan, "cuda:0");
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].kind, "device-unavailable");
    EXPECT_TRUE(contains(problems[0].message, "does not run on cuda")) << problems[0].message;
    EXPECT_THROW(validate(plan, "tpu"), Error);
}

TEST_F(PlanValidation, DuplicateScopeAndFunctionAmongEnabledEntries)
{
    Plan plan{{entry("blocks.0", "gelu", "AtenGeluProvider"), entry("blocks.0", "gelu", "TestTagGeluProvider")}};
    auto problems = validate(plan);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].kind, "duplicate");
    EXPECT_EQ(problems[0].entry, 1);
    EXPECT_EQ(problems[0].jsonPath, "/entries/1");
    EXPECT_TRUE(contains(problems[0].message, "as entry 0")) << problems[0].message;
    plan.entries[0].enabled = false; // the GUI's A/B toggle
    EXPECT_TRUE(validate(plan).empty());
}

TEST_F(PlanValidation, UnknownSettingsNameTheProviderAndTheKey)
{
    const auto problems =
        validate(Plan{{withSettings(entry("", kSdpa, "TorchSDPAKernelProvider"), {{"bogus", 1}}),
                       withSettings(entry("blocks.1", kSdpa, "TorchSDPAKernelProvider"), {{"backend", "FAST"}}),
                       withSettings(entry("blocks.0", "gelu", "AtenGeluProvider"), {{"x", 1}})}});
    ASSERT_EQ(problems.size(), 3u);
    for (const auto& p : problems) {
        EXPECT_EQ(p.kind, "bad-settings");
        EXPECT_EQ(p.jsonPath, "/entries/" + std::to_string(p.entry) + "/provider");
    }
    EXPECT_TRUE(contains(problems[0].message, "TorchSDPAKernelProvider")) << problems[0].message;
    EXPECT_TRUE(contains(problems[0].message, "'bogus'")) << problems[0].message;
    EXPECT_TRUE(contains(problems[1].message, "FAST")) << problems[1].message;
    EXPECT_TRUE(contains(problems[2].message, "'x'")) << problems[2].message;
}

TEST_F(PlanValidation, EveryProblemOfEveryEntryIsReportedInOrder)
{
    const Plan plan{{entry("nowhere", "gelux", "NoSuchProvider"),                     // scope, function, type
                     entry("blocks.0.attn", "gelu", "FlashAttention4KernelProvider"), // not called, unavailable, wrong
                     entry("", "layer_norm", "AtenLayerNormProvider"),                // fine
                     entry("", "layer_norm", "AtenLayerNormProvider")}};              // duplicate
    std::vector<std::string> got;
    for (const auto& p : validate(plan))
        got.push_back(std::to_string(p.entry) + ":" + p.kind);
    EXPECT_EQ(got, (std::vector<std::string>{"0:unknown-scope", "0:unknown-function", "0:unknown-provider",
                                             "1:function-not-called", "1:unavailable-provider", "1:wrong-function",
                                             "3:duplicate"}));
}

// One resolver: each entry the runtime refuses, it refuses with the message validation gives for it.
TEST_F(PlanValidation, TheRuntimeRefusesAnEntryInTheWordsOfValidation)
{
    PlanEntry badSettings = entry("", "gelu", "AtenGeluProvider");
    badSettings.provider["x"] = 1;
    const std::vector<PlanEntry> refused{
        entry("nowhere", "gelu", "AtenGeluProvider"), entry("", "gelux", "AtenGeluProvider"),
        entry("", "gelu", "NoSuchGeluProvider"),      entry("", "gelu", "FlashAttention4KernelProvider"),
        entry("", "layer_norm", "AtenGeluProvider"),  badSettings};
    const std::set<std::string> runtimeKinds{"unknown-scope",        "unknown-function", "unknown-provider",
                                             "unavailable-provider", "wrong-function",   "bad-settings"};
    for (const PlanEntry& e : refused) {
        const Plan plan{{e}};
        std::vector<std::string> messages;
        for (const PlanProblem& p : validate(plan))
            if (runtimeKinds.count(p.kind))
                messages.push_back(p.message);
        ASSERT_FALSE(messages.empty()) << e.scope << " " << e.function << " " << e.provider.dump();
        try {
            KernelProviderRuntime runtime(*s_session, plan);
            ADD_FAILURE() << "the runtime accepted " << e.provider.dump();
        } catch (const Error& error) {
            for (const std::string& message : messages)
                EXPECT_TRUE(contains(error.what(), message)) << error.what() << "\nlacks: " << message;
        }
    }
}

// 100,000 entries: validation is linear (no timing is asserted; a quadratic scan would not finish in time).
TEST_F(PlanValidation, HundredThousandEntries)
{
    Plan plan;
    plan.entries.reserve(100000);
    int unknownScopes = 0;
    for (int i = 0; i < 100000; ++i) {
        if (i % 1000 == 999) {
            plan.entries.push_back(entry("nowhere." + std::to_string(i), "gelu", "AtenGeluProvider"));
            ++unknownScopes;
        } else {
            plan.entries.push_back(entry(i % 2 ? "blocks.0.mlp" : "blocks.1.mlp", "gelu", "AtenGeluProvider"));
        }
    }
    const auto problems = validate(plan);
    const int duplicates = 100000 - unknownScopes - 2; // every valid entry after the first of each scope
    ASSERT_EQ(problems.size(), size_t(duplicates + unknownScopes));
    int counted = 0;
    for (const auto& p : problems)
        counted += p.kind == "unknown-scope";
    EXPECT_EQ(counted, unknownScopes);
    EXPECT_EQ(problems.back().entry, 99999);
}

// ---- Warnings: enabled entries the runtime accepts that can never fire ----------------------------------------

namespace {

// Root iterates the children of `seq` (a module with a forward of its own) and of `list` (no forward, like a
// ModuleList), calls `side` only through another method, `helped` through a method of its own, and `branch`
// under a branch that is never taken.
fs::path saveContainerModel(const TempDir& dir)
{
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    const auto module = [&](const std::string& type, const std::string& methods) {
        torch::jit::Module m(c10::QualifiedName("__torch__." + type), cu, true);
        if (!methods.empty())
            m.define(methods);
        return m;
    };
    const std::string gelu = "def forward(self, x: Tensor) -> Tensor:\n    return torch.gelu(x)\n";
    torch::jit::Module seq = module("Seq", "");
    seq.register_module("0", module("Act", gelu));
    seq.register_module("1", module("Act", "def forward(self, x: Tensor) -> Tensor:\n    return torch.relu(x)\n"));
    seq.define("def forward(self, x: Tensor) -> Tensor:\n"
               "    return getattr(self, \"1\").forward(getattr(self, \"0\").forward(x))\n");
    torch::jit::Module list = module("List", "");
    list.register_module("0", module("Act", gelu));
    torch::jit::Module root = module("Root", "");
    root.register_module("seq", seq);
    root.register_module("list", list);
    root.register_module("side",
                         module("Act", gelu + "def other(self, x: Tensor) -> Tensor:\n    return torch.gelu(x)\n"));
    root.register_module("helped", module("Act", gelu));
    root.register_module("branch", module("Act", gelu));
    root.define(R"(
def forward(self, x: Tensor) -> Tensor:
    y = getattr(self.seq, "1").forward(getattr(self.seq, "0").forward(x))
    y = getattr(self.list, "0").forward(y)
    y = self.side.other(y)
    y = self.helper(y)
    if bool(y.sum() > 1.0e9):
        y = self.branch.forward(y)
    return y

def helper(self, x: Tensor) -> Tensor:
    return self.helped.forward(x)
)");
    root.eval();
    const fs::path path = dir.path("containers.pt");
    saveModule(root, path);
    return path;
}

std::vector<std::string> kindsOf(const std::vector<PlanWarning>& warnings)
{
    std::vector<std::string> out;
    for (const auto& w : warnings)
        out.push_back(std::to_string(w.entry) + ":" + w.kind);
    return out;
}

// gelu calls the tagging provider serves in one forward of `session` with `plan` active.
long taggedGeluCalls(ModelSession& session, const Plan& plan)
{
    KernelProviderRuntime runtime(session, plan);
    auto applied = runtime.applied();
    const long before = tagCalls();
    session.forward();
    return tagCalls() - before;
}

} // namespace

TEST_F(PlanValidation, ModuleListScopeIsNeverEntered)
{
    const ModuleInfo* blocks = s_session->findModule("blocks");
    ASSERT_NE(blocks, nullptr);
    EXPECT_FALSE(blocks->hasForward);
    EXPECT_FALSE(blocks->forwardCalled);
    EXPECT_TRUE(s_session->findModule("")->forwardCalled);
    EXPECT_TRUE(s_session->findModule("blocks.0")->forwardCalled);
    EXPECT_TRUE(s_session->findModule("blocks.1.mlp.fc")->forwardCalled);

    const auto problems = validate(Plan{{entry("blocks", "gelu", "AtenGeluProvider")}});
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].kind, "scope-not-called");
    EXPECT_EQ(problems[0].jsonPath, "/entries/0/scope");
    EXPECT_EQ(problems[0].message, "'blocks' (ModuleList) has no forward of its own: the model calls its children "
                                   "directly, so the scope is never entered");
    EXPECT_EQ(problems[0].fix, "use a scope whose forward runs: its children 'blocks.0', 'blocks.1', or the module "
                               "around it \"\" (the root)");
}

TEST_F(PlanValidation, WarningsNameTheEntryAndTheReasonItCanNeverFire)
{
    const Plan plan{{entry("blocks.0", "gelu", "TestSlowGeluProvider"),  // fine on cpu, never on cuda
                     entry("blocks", "gelu", "AtenGeluProvider"),        // a ModuleList: never entered
                     entry("blocks.0.attn", "gelu", "AtenGeluProvider"), // gelu is not called there
                     entry("", "layer_norm", "AtenLayerNormProvider")}}; // fine
    const auto cpu = planWarnings(plan, *s_session, "cpu");
    EXPECT_EQ(kindsOf(cpu), (std::vector<std::string>{"1:scope-not-called", "2:function-not-called"}));
    ASSERT_EQ(cpu.size(), 2u);
    EXPECT_EQ(cpu[0].scope, "blocks");
    EXPECT_EQ(cpu[0].function, "gelu");
    EXPECT_EQ(cpu[0].providerType, "AtenGeluProvider");
    EXPECT_EQ(cpu[0].text(), "plan entry 1 (scope 'blocks', gelu -> AtenGeluProvider) can never fire: 'blocks' "
                             "(ModuleList) has no forward of its own: the model calls its children directly, so the "
                             "scope is never entered");
    EXPECT_EQ(cpu[1].text(), "plan entry 2 (scope 'blocks.0.attn', gelu -> AtenGeluProvider) can never fire: 'gelu' is "
                             "not called in 'blocks.0.attn' or below");
    EXPECT_TRUE(contains(cpu[1].fix, "'blocks.0.mlp'")) << cpu[1].fix;

    const auto cuda = planWarnings(plan, *s_session, "cuda:0");
    EXPECT_EQ(kindsOf(cuda),
              (std::vector<std::string>{"0:device-unavailable", "1:scope-not-called", "2:function-not-called"}));
    EXPECT_EQ(cuda[0].text(), "plan entry 0 (scope 'blocks.0', gelu -> TestSlowGeluProvider) can never fire: provider "
                              "'TestSlowGeluProvider' does not run on cuda (it runs on: cpu)");
    EXPECT_THROW(planWarnings(plan, *s_session, "tpu"), Error);
}

TEST_F(PlanValidation, WarningsLeaveOutDisabledEntriesAndWhatTheRuntimeRefuses)
{
    Plan plan{{entry("blocks", "gelu", "AtenGeluProvider"), entry("", "softmax", "AtenSoftmaxProvider")}};
    plan.entries[0].enabled = false;
    EXPECT_TRUE(planWarnings(plan, *s_session).empty());
    // Errors of KernelProviderRuntime, not warnings: unknown scope, function or provider; wrong function.
    const Plan refused{{entry("blocks.7", "gelu", "AtenGeluProvider"), entry("", "gelux", "AtenGeluProvider"),
                        entry("", "gelu", "NoSuchProvider"), entry("", "gelu", "AtenLayerNormProvider")}};
    EXPECT_TRUE(planWarnings(refused, *s_session).empty());
    EXPECT_TRUE(planWarnings(Plan{}, *s_session).empty());
    // The root scope reads as such.
    const auto root = planWarnings(Plan{{entry("", "relu", "AtenReluProvider")}}, *s_session);
    ASSERT_EQ(root.size(), 1u);
    EXPECT_EQ(root[0].text(), "plan entry 0 (root scope, relu -> AtenReluProvider) can never fire: 'relu' is not "
                              "called in the model or below");
}

TEST_F(PlanValidation, ModuleListScopeServesNoCallAtRunTime)
{
    ModelSession& session = *s_session;
    tagCalls() = 0;
    EXPECT_EQ(taggedGeluCalls(session, Plan{{entry("blocks", "gelu", "TestTagGeluProvider")}}), 0);
    EXPECT_EQ(taggedGeluCalls(session, Plan{{entry("blocks.1", "gelu", "TestTagGeluProvider")}}), 1);
}

// Which forwards run, statically: called through getattr chains, other methods and branches; not the forward of a
// module whose children the parent calls directly, nor one reached only through another method.
TEST(PlanWarnings, ForwardsCalledFollowTheCallGraphFromTheRootForward)
{
    registerTestProviders();
    TempDir dir;
    auto session = ModelSession::open(saveContainerModel(dir).string());
    std::vector<std::string> notCalled, withoutForward;
    for (const ModuleInfo& m : session->modules()) {
        if (!m.forwardCalled)
            notCalled.push_back(m.path);
        if (!m.hasForward)
            withoutForward.push_back(m.path);
    }
    EXPECT_EQ(notCalled, (std::vector<std::string>{"seq", "list", "side"}));
    EXPECT_EQ(withoutForward, (std::vector<std::string>{"list"}));

    const Plan plan{{entry("seq", "gelu", "TestTagGeluProvider"), entry("list", "gelu", "TestTagGeluProvider"),
                     entry("side", "gelu", "TestTagGeluProvider"), entry("helped", "gelu", "TestTagGeluProvider"),
                     entry("branch", "gelu", "TestTagGeluProvider"), entry("seq.0", "gelu", "TestTagGeluProvider")}};
    const auto warnings = planWarnings(plan, *session);
    EXPECT_EQ(kindsOf(warnings),
              (std::vector<std::string>{"0:scope-not-called", "1:scope-not-called", "2:scope-not-called"}));
    ASSERT_EQ(warnings.size(), 3u);
    EXPECT_EQ(warnings[0].reason, "the forward of 'seq' (Seq) is never called: its parent uses its children, "
                                  "methods or parameters directly, so the scope is never entered");
    EXPECT_EQ(warnings[0].fix, "use a scope whose forward runs: its children 'seq.0', 'seq.1', or the module around "
                               "it \"\" (the root)");
    EXPECT_TRUE(contains(warnings[1].reason, "'list' (List) has no forward of its own")) << warnings[1].reason;

    // The static rule agrees with the runtime: the entries it warns about serve nothing, the others do.
    session->setInputSpecs({"float32[2,3]"});
    tagCalls() = 0;
    for (size_t i = 0; i < plan.entries.size(); ++i) {
        const bool warned = i < 3;
        EXPECT_EQ(taggedGeluCalls(*session, Plan{{plan.entries[i]}}) > 0, !warned && plan.entries[i].scope != "branch")
            << plan.entries[i].scope;
    }
}
