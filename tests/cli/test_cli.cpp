// SPDX-License-Identifier: Apache-2.0
// The kforge command line, run as a separate process: exit codes, stdout (human and --json) and stderr.
#include "build_path.h"
#include "kforge_process.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

extern char** environ; // CtrlCStopsWithAPartialResult spawns kforge itself, to signal it

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using kforge::clitest::Result;
using kforge::clitest::runKforge;
using kforge::clitest::TerminalCapture;

std::string readFile(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<std::string> linesOf(const std::string& text)
{
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < text.size()) {
        const size_t end = text.find('\n', start);
        lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos)
            break;
        start = end + 1;
    }
    return lines;
}

// The stdout of a --json command parsed, or a test failure (and null) when it is not JSON.
json parseJson(const Result& r)
{
    try {
        return json::parse(r.out);
    } catch (const json::exception& e) {
        ADD_FAILURE() << "stdout is not JSON (" << e.what() << ")\n" << r;
        return nullptr;
    }
}

const json* moduleAt(const json& modules, const std::string& path)
{
    for (const auto& m : modules)
        if (m.value("path", std::string("<none>")) == path)
            return &m;
    return nullptr;
}

// The "calls" rows of `kforge run --json` for `function`.
std::vector<json> callsOf(const json& run, const std::string& function)
{
    std::vector<json> rows;
    for (const auto& c : run.at("calls"))
        if (c.at("function") == function)
            rows.push_back(c);
    return rows;
}

const std::string kSdpaEntry = "blocks.0:scaled_dot_product_attention:TorchSDPAKernelProvider";

} // namespace

// ---- kforge --version, doctor --------------------------------------------------------------------------------

TEST(Cli, VersionPrintsKforgeAndTheVersion)
{
    const Result r = runKforge({"--version"});
    EXPECT_EQ(r.exitCode, 0) << r;
    EXPECT_EQ(r.out.rfind("kforge 0.", 0), 0u) << r;
}

// A command line that does not parse exits 2, as getopt tools do; --help exits 0.
TEST(Cli, NoSubcommandIsAUsageError)
{
    EXPECT_EQ(runKforge({}).exitCode, 2);
    EXPECT_EQ(runKforge({"run"}).exitCode, 2); // MODEL missing
    EXPECT_EQ(runKforge({"run", "builtin:tiny-gpt", "--bogus"}).exitCode, 2);
    EXPECT_EQ(runKforge({"bench", "builtin:tiny-gpt", "--iterations", "0"}).exitCode, 2); // out of range
    EXPECT_EQ(runKforge({"run", "--help"}).exitCode, 0);
}

TEST(Cli, DoctorExitsZeroAndSelfTestPasses)
{
    const Result r = runKforge({"doctor"});
    EXPECT_EQ(r.exitCode, 0) << r;
    EXPECT_TRUE(contains(r.out, "self-test passed")) << r;
}

TEST(Cli, DoctorJsonReportsTheInterposerSelfTest)
{
    const Result r = runKforge({"doctor", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json report = parseJson(r);
    ASSERT_TRUE(report.is_object()) << r;
    EXPECT_EQ(report.at("kforge").get<std::string>().rfind("0.", 0), 0u) << r;
    EXPECT_TRUE(report.at("interposer").at("self_test_passed").get<bool>()) << r;
}

// ---- kforge modules ------------------------------------------------------------------------------------------

TEST(Cli, ModulesJsonIsAnArrayOfModuleObjects)
{
    const Result r = runKforge({"modules", "builtin:tiny-gpt", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json modules = parseJson(r);
    ASSERT_TRUE(modules.is_array()) << r;
    ASSERT_FALSE(modules.empty());
    for (const auto& m : modules) {
        ASSERT_TRUE(m.is_object()) << m;
        EXPECT_TRUE(m.contains("path") && m["path"].is_string()) << m;
        EXPECT_TRUE(m.contains("type") && m["type"].is_string()) << m;
        EXPECT_TRUE(m.contains("parameters") && m["parameters"].is_number_integer()) << m;
        EXPECT_TRUE(m.contains("functions") && m["functions"].is_object()) << m;
    }
}

TEST(Cli, ModulesJsonStartsWithTheRootAtEmptyPath)
{
    const Result r = runKforge({"modules", "builtin:tiny-gpt", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json modules = parseJson(r);
    ASSERT_TRUE(modules.is_array() && !modules.empty()) << r;
    EXPECT_EQ(modules[0].at("path"), "");
    EXPECT_EQ(modules[0].at("type"), "TinyGPT");
}

TEST(Cli, ModulesJsonShowsAttentionFunctionInBlock0Attn)
{
    const Result r = runKforge({"modules", "builtin:tiny-gpt", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json modules = parseJson(r);
    const json* attn = moduleAt(modules, "blocks.0.attn");
    ASSERT_NE(attn, nullptr) << r;
    EXPECT_EQ(attn->at("functions"), (json{{"scaled_dot_product_attention", 1}})) << *attn;
}

TEST(Cli, ModulesJsonSaysWhichForwardsRun)
{
    const Result r = runKforge({"modules", "builtin:tiny-gpt", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json modules = parseJson(r);
    const json* blocks = moduleAt(modules, "blocks");
    const json* block = moduleAt(modules, "blocks.0");
    ASSERT_TRUE(blocks && block) << r;
    EXPECT_EQ(blocks->at("has_forward"), false) << *blocks; // a ModuleList: the root calls its children
    EXPECT_EQ(blocks->at("forward_called"), false) << *blocks;
    EXPECT_EQ(block->at("has_forward"), true) << *block;
    EXPECT_EQ(block->at("forward_called"), true) << *block;
}

TEST(Cli, ModulesHumanTableShowsConvNetModulesAndFunctions)
{
    const Result r = runKforge({"modules", "builtin:convnet"});
    EXPECT_EQ(r.exitCode, 0) << r;
    EXPECT_TRUE(contains(r.out, "stem")) << r;
    EXPECT_TRUE(contains(r.out, "group_norm")) << r;
    EXPECT_TRUE(r.err.empty()) << r;
}

TEST(Cli, ModulesOfMissingFileFailsWithOneLineNamingTheFile)
{
    const Result r = runKforge({"modules", "/nonexistent.pt"});
    EXPECT_NE(r.exitCode, 0) << r;
    EXPECT_NE(r.exitCode, -1) << r;
    const auto lines = linesOf(r.err);
    ASSERT_EQ(lines.size(), 1u) << r;
    EXPECT_TRUE(contains(lines[0], "/nonexistent.pt")) << r;
    EXPECT_TRUE(contains(lines[0], "not found")) << r;
    EXPECT_TRUE(r.out.empty()) << r;
}

TEST(Cli, ModulesOfNonModelFilesFailWithOneLineNamingFileAndCause)
{
    const fs::path dir = fs::temp_directory_path() / ("kforge-cli-bad-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir / "folder.pt");
    std::ofstream(dir / "empty.pt").close();
    std::ofstream(dir / "noise.pt", std::ios::binary) << "\x01\x02 not a zip archive \xff"; // no NUL inside
    const std::vector<std::pair<std::string, std::string>> cases{
        {"empty.pt", "file is empty"}, {"noise.pt", "not a zip archive"}, {"folder.pt", "is a directory"}};
    for (const auto& [name, cause] : cases) {
        const std::string path = (dir / name).string();
        const Result r = runKforge({"modules", path});
        EXPECT_EQ(r.exitCode, 1) << r;
        const auto lines = linesOf(r.err);
        ASSERT_EQ(lines.size(), 1u) << r;
        EXPECT_TRUE(contains(lines[0], path)) << r;
        EXPECT_TRUE(contains(lines[0], cause)) << r;
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
}

TEST(Cli, ModulesOfUnknownBuiltinFailsListingTheBuiltins)
{
    const Result r = runKforge({"modules", "builtin:nope"});
    EXPECT_EQ(r.exitCode, 1) << r;
    EXPECT_TRUE(contains(r.err, "builtin:nope")) << r;
    EXPECT_TRUE(contains(r.err, "builtin:tiny-gpt")) << r;
}

// ---- kforge run ----------------------------------------------------------------------------------------------

TEST(Cli, RunWithScopedSdpaProviderServesBlock0AndLeavesBlock1Original)
{
    const Result r = runKforge({"run", "builtin:tiny-gpt", "--provide", kSdpaEntry, "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json run = parseJson(r);
    ASSERT_TRUE(run.is_object()) << r;
    EXPECT_FALSE(run.contains("error")) << r;
    const auto calls = callsOf(run, "scaled_dot_product_attention");
    ASSERT_EQ(calls.size(), 2u) << run.at("calls").dump(2);
    int byProvider = 0, byOriginal = 0;
    for (const auto& c : calls) {
        const std::string provider = c.at("provider");
        if (provider.rfind("TorchSDPAKernelProvider", 0) == 0) {
            ++byProvider;
            EXPECT_EQ(c.at("scope"), "blocks.0") << c;
            EXPECT_EQ(c.at("calls"), 1) << c;
        } else if (provider == "original") {
            ++byOriginal;
            EXPECT_EQ(c.at("calls"), 1) << c;
        } else {
            ADD_FAILURE() << "unexpected provider " << c;
        }
    }
    EXPECT_EQ(byProvider, 1);
    EXPECT_EQ(byOriginal, 1);
}

TEST(Cli, RunJsonReportsOutputsAndNoLeftovers)
{
    const Result r = runKforge({"run", "builtin:tiny-gpt", "--provide", kSdpaEntry, "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json run = parseJson(r);
    ASSERT_TRUE(run.is_object()) << r;
    EXPECT_EQ(run.at("model"), "tiny-gpt");
    ASSERT_EQ(run.at("outputs").size(), 1u) << r;
    EXPECT_EQ(run.at("outputs")[0].at("shape"), (json{1, 16, 256}));
    EXPECT_TRUE(run.at("leftovers").empty()) << r;
    EXPECT_EQ(run.at("events_dropped"), 0) << r;
}

// A forward failing inside a scope of many entries for one function: one leftover line for them with their count, not
// one per entry; --json keeps one report per entry.
TEST(Cli, RunPrintsALeftoverLinePerScopeNotPerEntry)
{
    std::vector<std::string> args{"run", "builtin:tiny-gpt", "--input", "int64[1,4096]"}; // beyond its 16 positions
    for (int i = 0; i < 3; ++i)
        args.insert(args.end(), {"--provide", ":gelu:AtenGeluProvider"});
    const Result r = runKforge(args);
    EXPECT_EQ(r.exitCode, 1) << r;
    int lines = 0;
    for (const auto& line : linesOf(r.out))
        lines += contains(line, "gelu -> AtenGeluProvider");
    EXPECT_EQ(lines, 1) << r;
    EXPECT_TRUE(contains(r.out, ", 3 entries (unwound): ")) << r;
    args.push_back("--json");
    const Result json = runKforge(args);
    EXPECT_EQ(parseJson(json).at("leftovers").size(), 3u) << json;
}

TEST(Cli, RunWithUnknownScopeFailsNamingTheScope)
{
    const Result r = runKforge({"run", "builtin:tiny-gpt", "--provide", "nope:gelu:AtenGeluProvider"});
    EXPECT_EQ(r.exitCode, 1) << r;
    EXPECT_TRUE(contains(r.err, "'nope'")) << r;
    EXPECT_EQ(linesOf(r.err).size(), 1u) << r;
}

TEST(Cli, RunWithMalformedProvideFails)
{
    const Result r = runKforge({"run", "builtin:tiny-gpt", "--provide", "bad"});
    EXPECT_EQ(r.exitCode, 1) << r;
    EXPECT_TRUE(contains(r.err, "--provide 'bad'")) << r;
    EXPECT_TRUE(contains(r.err, "SCOPE:FUNCTION:PROVIDER")) << r;
}

TEST(Cli, RunWithUnknownProviderFails)
{
    const Result r = runKforge({"run", "builtin:tiny-gpt", "--provide", ":gelu:NoSuchProvider"});
    EXPECT_EQ(r.exitCode, 1) << r;
    EXPECT_TRUE(contains(r.err, "NoSuchProvider")) << r;
}

TEST(Cli, RunOnThreadsCountsEveryGeluCallByTheRootProvider)
{
    const Result r = runKforge({"run", "builtin:tiny-gpt", "--iterations", "3", "--concurrency", "2", "--provide",
                                ":gelu:AtenGeluProvider", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json run = parseJson(r);
    ASSERT_TRUE(run.is_object()) << r;
    EXPECT_EQ(run.at("iterations"), 3);
    EXPECT_EQ(run.at("concurrency"), 2);
    long long total = 0;
    for (const auto& c : callsOf(run, "gelu")) {
        EXPECT_EQ(c.at("provider"), "AtenGeluProvider") << c;
        total += c.at("calls").get<long long>();
    }
    EXPECT_EQ(total, 2 * 3 * 2) << run.at("calls").dump(2); // 2 blocks x 3 iterations x 2 threads
}

// --threads means LibTorch's intra-op threads in every command that runs the model (run, profile, compare, bench,
// verify, optimize, capture): one meaning per flag; run's concurrent forwards are --concurrency.
TEST(Cli, ThreadsMeansIntraOpThreadsInEveryCommand)
{
    for (const char* threads : {"1", "3"}) {
        const Result r = runKforge({"run", "builtin:tiny-gpt", "--threads", threads, "--json"});
        ASSERT_EQ(r.exitCode, 0) << r;
        EXPECT_EQ(parseJson(r).at("intra_op_threads"), std::stoi(threads)) << r;
    }
    for (const char* command : {"run", "profile", "compare", "bench", "verify", "optimize", "capture"}) {
        const Result help = runKforge({command, "--help"});
        EXPECT_TRUE(contains(help.out, "--threads")) << command;
        EXPECT_TRUE(contains(help.out, "intra-op")) << command;
    }
    EXPECT_TRUE(contains(runKforge({"run", "--help"}).out, "--device")); // run measures on a device like the others
}

TEST(Cli, RunWithBadInputSpecFailsNamingTheSpec)
{
    const Result r = runKforge({"run", "builtin:tiny-gpt", "--input", "float32[1,x]"});
    EXPECT_EQ(r.exitCode, 1) << r;
    EXPECT_TRUE(contains(r.err, "float32[1,x]")) << r;
    EXPECT_TRUE(contains(r.err, "not a whole number")) << r;
}

TEST(Cli, RunWithMissingInputsFileFailsNamingTheFile)
{
    const Result r = runKforge({"run", "builtin:tiny-gpt", "--inputs-file", "/nonexistent-inputs.pt"});
    EXPECT_EQ(r.exitCode, 1) << r;
    EXPECT_TRUE(contains(r.err, "/nonexistent-inputs.pt")) << r;
    EXPECT_TRUE(contains(r.err, "not found")) << r;
}

TEST(Cli, RunWithZeroIterationsIsAUsageError)
{
    const Result r = runKforge({"run", "builtin:tiny-gpt", "--iterations", "0"});
    EXPECT_NE(r.exitCode, 0) << r;
    EXPECT_NE(r.exitCode, -1) << r;
}

// ---- kforge plan, kforge run --plan ----------------------------------------------------------------------------

namespace {

// A temporary folder for plan files, removed at destruction.
class PlanDir {
public:
    PlanDir() : m_dir(fs::temp_directory_path() / ("kforge-cli-plan-" + std::to_string(std::random_device{}())))
    {
        fs::create_directories(m_dir);
    }
    ~PlanDir()
    {
        std::error_code ec;
        fs::remove_all(m_dir, ec);
    }
    std::string write(const std::string& name, const std::string& text) const
    {
        std::ofstream(m_dir / name, std::ios::binary) << text;
        return (m_dir / name).string();
    }
    std::string path(const std::string& name) const { return (m_dir / name).string(); }

private:
    fs::path m_dir;
};

// layer_norm replaced in block 0 only, SDPA everywhere.
const std::string kLayerNormBlock0SdpaEverywhere = R"({
  "format": "kforge-plan",
  "version": 1,
  "model": {"name": "tiny-gpt"},
  "entries": [
    {"scope": "blocks.0", "function": "layer_norm", "provider": {"type": "AtenLayerNormProvider"}},
    {"scope": "", "function": "scaled_dot_product_attention",
     "provider": {"type": "TorchSDPAKernelProvider", "backend": "MATH"}}
  ]
})";

long long callsBy(const json& run, const std::string& function, const std::string& providerPrefix,
                  const std::string& scope = "*")
{
    long long n = 0;
    for (const auto& c : callsOf(run, function))
        if (c.at("provider").get<std::string>().rfind(providerPrefix, 0) == 0 &&
            (scope == "*" || c.at("scope") == scope))
            n += c.at("calls").get<long long>();
    return n;
}

} // namespace

TEST(CliPlan, RunWithPlanFileServesLayerNormInBlock0AndSdpaEverywhere)
{
    PlanDir dir;
    const std::string plan = dir.write("p.kfplan.json", kLayerNormBlock0SdpaEverywhere);
    const Result r = runKforge({"run", "builtin:tiny-gpt", "--plan", plan, "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json run = parseJson(r);
    ASSERT_TRUE(run.is_object()) << r;
    EXPECT_FALSE(run.contains("error")) << r;
    EXPECT_EQ(callsBy(run, "layer_norm", "AtenLayerNormProvider", "blocks.0"), 2) << run.at("calls").dump(2);
    EXPECT_EQ(callsBy(run, "layer_norm", "AtenLayerNormProvider"), 2) << run.at("calls").dump(2);
    EXPECT_EQ(callsBy(run, "layer_norm", "original"), 3) << run.at("calls").dump(2); // block 1 and ln_f
    EXPECT_EQ(callsBy(run, "scaled_dot_product_attention", "TorchSDPAKernelProvider(backend=MATH)"), 2)
        << run.at("calls").dump(2);
    EXPECT_EQ(callsBy(run, "scaled_dot_product_attention", "original"), 0) << run.at("calls").dump(2);
    EXPECT_TRUE(run.at("leftovers").empty()) << r;
}

TEST(CliPlan, RunAppendsProvideEntriesAfterThePlan)
{
    PlanDir dir;
    const std::string plan = dir.write("p.kfplan.json", kLayerNormBlock0SdpaEverywhere);
    const Result r =
        runKforge({"run", "builtin:tiny-gpt", "--plan", plan, "--provide", "blocks.1:gelu:AtenGeluProvider", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json run = parseJson(r);
    ASSERT_TRUE(run.is_object()) << r;
    EXPECT_EQ(callsBy(run, "gelu", "AtenGeluProvider", "blocks.1"), 1) << run.at("calls").dump(2);
    EXPECT_EQ(callsBy(run, "layer_norm", "AtenLayerNormProvider", "blocks.0"), 2) << run.at("calls").dump(2);
}

TEST(CliPlan, RunWithAnAitunePlanFile)
{
    PlanDir dir;
    const std::string plan =
        dir.write("aitune.json", R"({"providers": [{"type": "TorchSDPAKernelProvider", "backend": "MATH"}]})");
    const Result r = runKforge({"run", "builtin:tiny-gpt", "--plan", plan, "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    EXPECT_EQ(callsBy(parseJson(r), "scaled_dot_product_attention", "TorchSDPAKernelProvider"), 2) << r;
}

TEST(CliPlan, RunWithAMissingOrMalformedPlanFailsNamingIt)
{
    const Result missing = runKforge({"run", "builtin:tiny-gpt", "--plan", "/nonexistent.kfplan.json"});
    EXPECT_EQ(missing.exitCode, 1) << missing;
    EXPECT_TRUE(contains(missing.err, "/nonexistent.kfplan.json: not found")) << missing;
    PlanDir dir;
    const std::string plan = dir.write("bad.json", "{\n  \"format\": \"kforge-plan\",\n  \"entries\": [}\n");
    const Result bad = runKforge({"run", "builtin:tiny-gpt", "--plan", plan});
    EXPECT_EQ(bad.exitCode, 1) << bad;
    EXPECT_TRUE(contains(bad.err, "line 3, column 15")) << bad;
}

TEST(CliPlan, NewShowAndValidate)
{
    PlanDir dir;
    const std::string plan = dir.path("new.kfplan.json");
    const Result created = runKforge({"plan", "new", plan, "--model", "builtin:tiny-gpt", "--provide",
                                      "blocks.0:layer_norm:AtenLayerNormProvider", "--provide",
                                      ":scaled_dot_product_attention:TorchSDPAKernelProvider:{\"backend\":\"MATH\"}"});
    ASSERT_EQ(created.exitCode, 0) << created;
    EXPECT_TRUE(created.err.empty()) << created;
    const json file = json::parse(readFile(plan));
    EXPECT_EQ(file.at("format"), "kforge-plan");
    EXPECT_EQ(file.at("version"), 2) << "it carries its provenance";
    EXPECT_EQ(file.at("provenance").at("written_by"), "kforge plan new");
    EXPECT_EQ(file.at("provenance").at("machine").at("device"), "cpu");
    EXPECT_EQ(file.at("provenance").at("providers").size(), 2u);
    EXPECT_EQ(file.at("model").at("name"), "tiny-gpt");
    ASSERT_EQ(file.at("entries").size(), 2u);
    EXPECT_EQ(file.at("entries")[1].at("provider"), (json{{"type", "TorchSDPAKernelProvider"}, {"backend", "MATH"}}));

    const Result shown = runKforge({"plan", "show", plan});
    EXPECT_EQ(shown.exitCode, 0) << shown;
    EXPECT_TRUE(contains(shown.out, "TorchSDPAKernelProvider backend=MATH")) << shown;
    EXPECT_TRUE(contains(shown.out, "blocks.0")) << shown;
    const Result shownJson = runKforge({"plan", "show", plan, "--json"});
    EXPECT_EQ(shownJson.exitCode, 0) << shownJson;
    EXPECT_EQ(parseJson(shownJson), file);

    const Result valid = runKforge({"plan", "validate", plan, "--model", "builtin:tiny-gpt"});
    EXPECT_EQ(valid.exitCode, 0) << valid;
    EXPECT_TRUE(contains(valid.out, "valid")) << valid;
    const Result validJson = runKforge({"plan", "validate", plan, "--model", "builtin:tiny-gpt", "--json"});
    EXPECT_EQ(validJson.exitCode, 0) << validJson;
    EXPECT_EQ(parseJson(validJson).at("valid"), true) << validJson;
}

// A plan file without "version" is version 1, the format's default, and plan show says so.
TEST(CliPlan, ShowSaysVersionOneForAFileWithoutAVersion)
{
    PlanDir dir;
    const std::string plan = dir.write("old.kfplan.json", R"({"format": "kforge-plan", "entries": [
        {"scope": "", "function": "gelu", "provider": {"type": "AtenGeluProvider"}}]})");
    const Result shown = runKforge({"plan", "show", plan});
    ASSERT_EQ(shown.exitCode, 0) << shown;
    EXPECT_TRUE(contains(shown.out, "kforge dialect version 1,")) << shown;
}

TEST(CliPlan, ValidateListsEveryProblemOnePerLineWithWhereAndFix)
{
    PlanDir dir;
    const std::string plan = dir.write("bad.kfplan.json", R"({"format": "kforge-plan", "version": 1, "entries": [
        {"scope": "blocks.0.atn", "function": "scaled_dot_product_attention",
         "provider": {"type": "TorchSDPAKernelProvider"}},
        {"scope": "blocks.0.attn", "function": "gelu", "provider": {"type": "AtenGeluProvider"}},
        {"scope": "", "function": "scaled_dot_product_attention",
         "provider": {"type": "FlashAttention4KernelProvider", "copy_free_layout": true}},
        {"scope": "", "function": "layer_norm", "provider": {"type": "AtenLayerNormProvider", "eps": 1}}]})");
    const Result r = runKforge({"plan", "validate", plan, "--model", "builtin:tiny-gpt"});
    EXPECT_EQ(r.exitCode, 1) << r;
    const auto lines = linesOf(r.out);
    ASSERT_EQ(lines.size(), 4u) << r;
    const char* paths[] = {"/entries/0/scope", "/entries/1/function", "/entries/2/provider/type",
                           "/entries/3/provider"};
    const char* kinds[] = {"unknown-scope", "function-not-called", "unavailable-provider", "bad-settings"};
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_TRUE(contains(lines[i], paths[i])) << lines[i];
        EXPECT_TRUE(contains(lines[i], kinds[i])) << lines[i];
        EXPECT_TRUE(contains(lines[i], "fix: ")) << lines[i];
    }
    EXPECT_TRUE(contains(lines[0], "'blocks.0.attn'")) << lines[0];

    const Result j = runKforge({"plan", "validate", plan, "--model", "builtin:tiny-gpt", "--json"});
    EXPECT_EQ(j.exitCode, 1) << j;
    const json report = parseJson(j);
    ASSERT_TRUE(report.is_object()) << j;
    EXPECT_EQ(report.at("valid"), false);
    ASSERT_EQ(report.at("problems").size(), 4u) << j;
    EXPECT_EQ(report.at("problems")[2].at("entry"), 2);
    EXPECT_EQ(report.at("problems")[2].at("kind"), "unavailable-provider");
}

TEST(CliPlan, ValidateReportsMalformedJsonWithLineAndColumn)
{
    PlanDir dir;
    const std::string plan =
        dir.write("broken.kfplan.json", "{\n  \"format\": \"kforge-plan\"\n  \"entries\": []\n}\n");
    const Result r = runKforge({"plan", "validate", plan, "--model", "builtin:tiny-gpt"});
    EXPECT_EQ(r.exitCode, 1) << r;
    EXPECT_TRUE(contains(r.out, "line 3, column 3")) << r;
}

TEST(CliPlan, ExportToAituneAndImportBack)
{
    PlanDir dir;
    const std::string aituneText =
        R"({"providers": [{"type": "FlashAttention4KernelProvider", "qkv_source": "keyword_qkv",
            "flash_kwargs": {"causal": true, "softmax_scale": 0.125, "pack_gqa": false}, "copy_free_layout": true}]})";
    const std::string aitune = dir.write("aitune.json", aituneText);
    const std::string plan = dir.path("imported.kfplan.json");
    const Result imported = runKforge({"plan", "import", aitune, "--out", plan});
    ASSERT_EQ(imported.exitCode, 0) << imported;
    EXPECT_TRUE(contains(imported.out, "kept, unavailable")) << imported;
    const json file = json::parse(readFile(plan));
    EXPECT_EQ(file.at("format"), "kforge-plan");
    EXPECT_EQ(file.at("entries")[0].at("function"), "scaled_dot_product_attention");

    const Result shown = runKforge({"plan", "show", plan});
    EXPECT_EQ(shown.exitCode, 0) << shown;
    EXPECT_TRUE(contains(shown.out, "[unavailable]")) << shown;

    const Result exported = runKforge({"plan", "export", plan, "--aitune"});
    ASSERT_EQ(exported.exitCode, 0) << exported;
    EXPECT_EQ(parseJson(exported), json::parse(aituneText));
    const std::string out = dir.path("out.json");
    const Result toFile = runKforge({"plan", "export", plan, "--aitune", "--out", out});
    ASSERT_EQ(toFile.exitCode, 0) << toFile;
    EXPECT_EQ(json::parse(readFile(out)), json::parse(aituneText));
}

TEST(CliPlan, ExportRefusesAScopedPlanWithTheReason)
{
    PlanDir dir;
    const std::string plan = dir.write("p.kfplan.json", kLayerNormBlock0SdpaEverywhere);
    const Result r = runKforge({"plan", "export", plan, "--aitune"});
    EXPECT_EQ(r.exitCode, 1) << r;
    EXPECT_TRUE(r.out.empty()) << r;
    EXPECT_TRUE(contains(r.err, "scoped to 'blocks.0'")) << r;
    const Result noDialect = runKforge({"plan", "export", plan});
    EXPECT_NE(noDialect.exitCode, 0) << noDialect;
    EXPECT_NE(noDialect.exitCode, -1) << noDialect;
}

TEST(CliPlan, ImportIntoAScope)
{
    PlanDir dir;
    const std::string aitune =
        dir.write("aitune.json", R"({"providers": [{"type": "TorchSDPAKernelProvider", "backend": "MATH"}]})");
    const std::string plan = dir.path("p.kfplan.json");
    const Result r = runKforge({"plan", "import", aitune, "--out", plan, "--scope", "blocks.1"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const Result run = runKforge({"run", "builtin:tiny-gpt", "--plan", plan, "--json"});
    ASSERT_EQ(run.exitCode, 0) << run;
    EXPECT_EQ(callsBy(parseJson(run), "scaled_dot_product_attention", "TorchSDPAKernelProvider", "blocks.1"), 1) << run;
}

TEST(CliPlan, NewIntoAMissingFolderFailsAndWritesNothing)
{
    PlanDir dir;
    const std::string plan = dir.path("missing/p.kfplan.json");
    const Result r = runKforge({"plan", "new", plan});
    EXPECT_EQ(r.exitCode, 1) << r;
    EXPECT_TRUE(contains(r.err, "does not exist")) << r;
    EXPECT_FALSE(fs::exists(dir.path("missing"))) << r;
}

// ---- kforge profile, kforge compare, kforge report --------------------------------------------------------------

#include <chrono>
#include <csignal>
#include <thread>

namespace {

// A temporary folder for profile outputs, removed at destruction.
class ProfileDir {
public:
    ProfileDir() : m_dir(fs::temp_directory_path() / ("kforge-cli-profile-" + std::to_string(std::random_device{}())))
    {
        fs::create_directories(m_dir);
    }
    ~ProfileDir()
    {
        std::error_code ec;
        fs::remove_all(m_dir, ec);
    }
    std::string path(const std::string& name) const { return (m_dir / name).string(); }

private:
    fs::path m_dir;
};

size_t csvDataRows(const std::string& text)
{
    size_t rows = 0;
    for (const auto& line : linesOf(text))
        rows += !line.empty() && line != "\r";
    return rows - 1; // the header
}

} // namespace

TEST(CliProfile, ProfileWritesTraceCsvAndSavedRunThatReportOpens)
{
    ProfileDir dir;
    const std::string trace = dir.path("t.json"), csv = dir.path("t.csv"), saved = dir.path("r.kfprof");
    const Result r =
        runKforge({"profile", "builtin:tiny-gpt", "--trace", trace, "--csv", csv, "--save", saved, "--quiet"});
    ASSERT_EQ(r.exitCode, 0) << r;
    EXPECT_TRUE(r.err.empty()) << r; // --quiet: no progress
    EXPECT_TRUE(contains(r.out, "cpu: timing ATen op executions")) << r;
    for (const char* column : {"NAME", "CALLS", "TOTAL ms", "MEAN µs", "MEDIAN µs", "P95 µs", "MAX µs", "SHARE %"})
        EXPECT_TRUE(contains(r.out, column)) << column << '\n' << r;
    EXPECT_TRUE(contains(r.out, "aten::linear")) << r;
    EXPECT_TRUE(contains(r.out, "functions by total time")) << r;
    EXPECT_TRUE(contains(r.out, "modules (own records")) << r;
    EXPECT_TRUE(contains(r.out, "scaled_dot_product_attention")) << r;

    const json t = json::parse(readFile(trace));
    ASSERT_TRUE(t.at("traceEvents").is_array());
    EXPECT_EQ(t.at("displayTimeUnit"), "ns");
    size_t slices = 0;
    for (const json& e : t.at("traceEvents"))
        slices += e.at("ph") == "X";
    EXPECT_GT(slices, 0u);

    const json k = json::parse(readFile(saved));
    EXPECT_EQ(k.at("format"), "kforge-profile");
    EXPECT_EQ(k.at("version"), 1);
    const json& run = k.at("runs")[0];
    EXPECT_EQ(run.at("iterations"), 10);
    EXPECT_EQ(run.at("warmup_iterations"), 3);
    EXPECT_EQ(csvDataRows(readFile(csv)), run.at("records").size());

    const Result report = runKforge({"report", saved});
    ASSERT_EQ(report.exitCode, 0) << report;
    EXPECT_TRUE(contains(report.out, "cpu: timing ATen op executions")) << report;
    EXPECT_TRUE(contains(report.out, "aten::linear")) << report;
    EXPECT_TRUE(contains(report.out, "TOTAL ms")) << report;

    const Result byModule = runKforge({"report", saved, "--group-by", "module", "--json"});
    ASSERT_EQ(byModule.exitCode, 0) << byModule;
    const json j = parseJson(byModule);
    EXPECT_EQ(j.at("device"), "cpu");
    EXPECT_FALSE(j.contains("kernels")) << j.dump(2);
    ASSERT_FALSE(j.at("modules").empty()) << j.dump(2);
    double share = 0;
    for (const json& row : j.at("modules"))
        share += row.at("share").get<double>();
    EXPECT_NEAR(share, 1.0, 1e-9);
}

TEST(CliProfile, ProgressGoesToStderrOnlyOnATerminalAndJsonToStdout)
{
    const std::vector<std::string> args{"profile", "builtin:tiny-gpt", "--warmup", "1", "--iterations", "2", "--json"};
    const Result interactive = runKforge(args, {.stderrTerminal = true});
    ASSERT_EQ(interactive.exitCode, 0) << interactive;
    EXPECT_TRUE(contains(interactive.err, "warm-up 1/1")) << interactive;
    EXPECT_TRUE(contains(interactive.err, "iteration 2/2")) << interactive;
    const Result r = runKforge(args); // stderr is a file: a log gets no progress lines
    ASSERT_EQ(r.exitCode, 0) << r;
    EXPECT_FALSE(contains(r.err, "iteration")) << r;
    EXPECT_FALSE(contains(r.err, "warm-up")) << r;
    const json j = parseJson(r);
    EXPECT_EQ(j.at("iterations"), 2);
    EXPECT_EQ(j.at("device_line"), "cpu: timing ATen op executions");
    for (const char* table : {"kernels", "functions", "modules"})
        EXPECT_FALSE(j.at(table).empty()) << table;
    const json& first = j.at("kernels")[0];
    for (const char* key : {"name", "calls", "total_us", "mean_us", "median_us", "p95_us", "max_us", "share"})
        EXPECT_TRUE(first.contains(key)) << key;
}

TEST(CliProfile, ProfileWithAPlanFileServesTheProvider)
{
    ProfileDir dir;
    const std::string plan = dir.path("p.kfplan.json");
    std::ofstream(plan) << R"({"format": "kforge-plan", "version": 1, "entries": [
        {"scope": "blocks.1", "function": "gelu", "provider": {"type": "AtenGeluProvider"}}]})";
    const Result r = runKforge({"profile", "builtin:tiny-gpt", "--plan", plan, "--warmup", "0", "--iterations", "1",
                                "--group-by", "function", "--json", "-q"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json j = parseJson(r);
    ASSERT_TRUE(j.at("plan").is_object()) << r;
    EXPECT_EQ(j.at("plan").at("entries")[0].at("provider").at("type"), "AtenGeluProvider");
    EXPECT_FALSE(j.contains("kernels"));
    const Result human = runKforge({"profile", "builtin:tiny-gpt", "--plan", plan, "--iterations", "1", "-q"});
    ASSERT_EQ(human.exitCode, 0) << human;
    EXPECT_TRUE(contains(human.out, "plan: 1 entry: blocks.1 gelu -> AtenGeluProvider")) << human;
}

// A plan records the model it was made for; landing on another model is warned about (a root-scoped plan validates
// against any model, so nothing else would say so), on its own model it is not.
TEST(Cli, APlanMadeForAnotherModelIsWarnedAbout)
{
    ProfileDir dir;
    const std::string plan = dir.path("tiny.kfplan.json");
    ASSERT_EQ(
        runKforge({"plan", "new", plan, "--model", "builtin:tiny-gpt", "--provide", ":gelu:AtenGeluProvider"}).exitCode,
        0);
    const Result other = runKforge({"run", "builtin:convnet", "--plan", plan});
    ASSERT_EQ(other.exitCode, 0) << other;
    EXPECT_TRUE(contains(other.err, "the plan was made for model 'tiny-gpt', this is 'convnet'")) << other;
    const Result same = runKforge({"run", "builtin:tiny-gpt", "--plan", plan});
    ASSERT_EQ(same.exitCode, 0) << same;
    EXPECT_FALSE(contains(same.err, "was made for model")) << same;
}

TEST(CliProfile, CompareReportsSpeedupAndZeroErrorForTheReferenceProvider)
{
    const Result r = runKforge(
        {"compare", "builtin:tiny-gpt", "--provide", ":layer_norm:AtenLayerNormProvider", "--iterations", "2"},
        {.stderrTerminal = true}); // so that each side's progress shows
    ASSERT_EQ(r.exitCode, 0) << r;
    EXPECT_TRUE(contains(r.out, "SPEEDUP")) << r;
    EXPECT_TRUE(contains(r.out, "BEFORE µs")) << r;
    EXPECT_TRUE(contains(r.out, "AFTER µs")) << r;
    EXPECT_TRUE(contains(r.out, "layer_norm")) << r;
    EXPECT_TRUE(contains(r.out, "blocks.0.ln1")) << r; // the module table
    EXPECT_TRUE(contains(r.out, "VERDICT")) << r;
    EXPECT_TRUE(contains(r.out, "too few rounds")) << r; // 2 iterations: no 95% interval
    EXPECT_TRUE(contains(r.out, "; the plan against the baseline: no detectable change: ")) << r;
    EXPECT_TRUE(contains(r.out, "output: max abs error 0, max rel error 0")) << r;
    // Both sides in alternating rounds: 3 warm-up and 2 measured forwards each, and one warm-up before round 2's.
    EXPECT_TRUE(contains(r.err, "baseline and plan in alternating rounds: forward 12/12")) << r;

    ProfileDir dir;
    const std::string both = dir.path("both.kfprof");
    const Result j = runKforge({"compare", "builtin:tiny-gpt", "--provide", ":layer_norm:AtenLayerNormProvider",
                                "--warmup", "1", "--iterations", "2", "--json", "-q", "--save", both});
    ASSERT_EQ(j.exitCode, 0) << j;
    const json c = parseJson(j);
    EXPECT_EQ(c.at("output").at("max_abs_error"), 0.0);
    EXPECT_EQ(c.at("output").at("comparable"), true);
    EXPECT_GT(c.at("total").at("speedup").get<double>(), 0.0);
    bool sawLayerNorm = false;
    for (const json& row : c.at("functions"))
        if (row.at("name") == "layer_norm") {
            sawLayerNorm = true;
            EXPECT_GT(row.at("before_us").get<double>(), 0.0);
            EXPECT_GT(row.at("after_us").get<double>(), 0.0);
            EXPECT_EQ(row.at("rounds"), 2);                              // iteration i of each side paired
            EXPECT_EQ(row.at("verdict"), "no detectable change") << row; // too few rounds for anything else
            EXPECT_EQ(row.at("interval").size(), 2u);
        }
    EXPECT_TRUE(sawLayerNorm) << j;
    EXPECT_TRUE(c.at("total").contains("min_detectable_change")) << j;

    // The saved file holds both runs; report shows the comparison again, without the model.
    const json file = json::parse(readFile(both));
    ASSERT_EQ(file.at("runs").size(), 2u);
    EXPECT_EQ(file.at("runs")[0].at("label"), "baseline");
    EXPECT_EQ(file.at("runs")[1].at("label"), "plan");
    const Result report = runKforge({"report", both});
    ASSERT_EQ(report.exitCode, 0) << report;
    EXPECT_TRUE(contains(report.out, "SPEEDUP")) << report;
    EXPECT_TRUE(contains(report.out, "output: max abs error 0")) << report;
    const Result planOnly = runKforge({"report", both, "--run", "plan"});
    ASSERT_EQ(planOnly.exitCode, 0) << planOnly;
    EXPECT_TRUE(contains(planOnly.out, "plan: 1 entry: (root) layer_norm -> AtenLayerNormProvider")) << planOnly;
    EXPECT_TRUE(contains(planOnly.out, "TOTAL ms")) << planOnly;
}

TEST(CliProfile, ReportComparesTwoFiles)
{
    ProfileDir dir;
    const std::string base = dir.path("base.kfprof"), plan = dir.path("plan.kfprof");
    ASSERT_EQ(runKforge({"profile", "builtin:tiny-gpt", "--iterations", "1", "-q", "--save", base}).exitCode, 0);
    ASSERT_EQ(runKforge({"profile", "builtin:tiny-gpt", "--iterations", "1", "-q", "--save", plan, "--provide",
                         ":gelu:AtenGeluProvider"})
                  .exitCode,
              0);
    // Either order: the run without a plan is the baseline.
    const Result r = runKforge({"report", plan, base, "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json c = parseJson(r);
    EXPECT_FALSE(c.at("baseline").at("used_plan").get<bool>()) << r;
    EXPECT_TRUE(c.at("baseline").at("plan").at("entries").empty()) << r;
    EXPECT_TRUE(c.at("plan").at("used_plan").get<bool>()) << r;
    EXPECT_EQ(c.at("plan").at("plan").at("entries").size(), 1u) << r;
    EXPECT_EQ(c.at("output").at("max_abs_error"), 0.0) << r;
}

// compare --memory: both sides' allocations per module, side by side. A pass-through provider (ATen's own gelu) makes
// the plan allocate what the baseline does, module by module: every change reads 0 and the peaks agree; profile
// --memory gives the same figures for the baseline alone.
TEST(CliProfile, CompareMemoryShowsBothSidesPerModule)
{
    const Result r = runKforge({"compare", "builtin:tiny-gpt", "--provide", ":gelu:AtenGeluProvider", "--memory",
                                "--iterations", "3", "--threads", "1", "-q", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json memory = parseJson(r).at("memory");
    const json& before = memory.at("baseline");
    const json& after = memory.at("plan");
    ASSERT_TRUE(before.at("recorded").get<bool>()) << r;
    ASSERT_TRUE(after.at("recorded").get<bool>()) << r;
    EXPECT_EQ(memory.at("peak_change_bytes"), 0) << r;
    std::map<std::string, double> allocatedBefore;
    for (const json& m : before.at("modules"))
        allocatedBefore[m.at("path")] = m.at("allocated_bytes");
    ASSERT_TRUE(allocatedBefore.contains("blocks.0.mlp")) << r;
    for (const json& m : after.at("modules"))
        EXPECT_DOUBLE_EQ(m.at("allocated_bytes").get<double>(), allocatedBefore[m.at("path")]) << m.dump();

    const Result profiled =
        runKforge({"profile", "builtin:tiny-gpt", "--memory", "--iterations", "2", "--threads", "1", "-q", "--json"});
    ASSERT_EQ(profiled.exitCode, 0) << profiled;
    const json alone = parseJson(profiled).at("memory");
    EXPECT_EQ(alone.at("peak_bytes"), before.at("peak_bytes")) << profiled;
    EXPECT_EQ(alone.at("modules")[0].at("allocated_bytes"), before.at("modules")[0].at("allocated_bytes"));
    // What each module left alive when it returned: a block its [1, 16, 64] float32 result; `blocks`, a ModuleList
    // never called itself, nothing to say (null).
    for (const json& m : alone.at("modules")) {
        if (m.at("path") == "blocks.0")
            EXPECT_EQ(m.at("live_at_exit_bytes"), 1 * 16 * 64 * 4) << m.dump();
        if (m.at("path") == "blocks")
            EXPECT_TRUE(m.at("live_at_exit_bytes").is_null()) << m.dump();
    }

    // The text names each function's provider on both sides beside its allocations.
    const Result text = runKforge({"compare", "builtin:tiny-gpt", "--provide", ":gelu:AtenGeluProvider", "--memory",
                                   "--iterations", "2", "--threads", "1", "-q"});
    ASSERT_EQ(text.exitCode, 0) << text;
    const std::string table = text.out.substr(text.out.find("memory by function and provider"));
    EXPECT_NE(table.find("PEAK IN A CALL BEFORE"), std::string::npos) << text;
    const size_t row = table.find("\ngelu ");
    ASSERT_NE(row, std::string::npos) << text;
    const std::string gelu = table.substr(row + 1, table.find('\n', row + 1) - row - 1);
    EXPECT_NE(gelu.find("original"), std::string::npos) << gelu;
    EXPECT_NE(gelu.find("AtenGeluProvider"), std::string::npos) << gelu;
    EXPECT_NE(gelu.find("32.00 KiB"), std::string::npos) << gelu;
}

// kforge diff: two runs made apart, A the reference. A run against itself reads no change and passes
// --fail-if-slower; a copy whose every op took twice as long (written into the files: slower by construction) is
// slower in the total and every row, and --fail-if-slower exits 1 naming them; a run chosen that a file lacks is
// refused naming the file.
TEST(CliDiff, TwoSavedRunsAreComparedAndASlowerOneFailsTheGate)
{
    ProfileDir dir;
    const std::string a = dir.path("a.kfprof"), slow = dir.path("slow.kfprof");
    ASSERT_EQ(
        runKforge({"profile", "builtin:tiny-gpt", "--iterations", "8", "--threads", "1", "-q", "--save", a}).exitCode,
        0);
    // Times set by construction, not measured: every op 10 us in A (no call stands out, whatever the machine did
    // while it profiled) and 20 us in the slow copy.
    const auto withOpsOf = [&](long long ns, const std::string& path) {
        json k = json::parse(readFile(a));
        json& run = k.at("runs")[0];
        const json& columns = run.at("record_columns");
        const size_t duration = size_t(std::find(columns.begin(), columns.end(), "duration_ns") - columns.begin());
        for (json& record : run.at("records"))
            record.at(duration) = ns;
        std::ofstream(path) << k.dump();
    };
    withOpsOf(20'000, slow);
    withOpsOf(10'000, a);

    const Result same = runKforge({"diff", a, a, "--fail-if-slower", "10", "--json"});
    ASSERT_EQ(same.exitCode, 0) << same;
    const json sameJson = parseJson(same);
    EXPECT_TRUE(sameJson.at("slower").empty()) << same;
    EXPECT_TRUE(sameJson.at("setup_differences").empty()) << same;
    EXPECT_EQ(sameJson.at("total").at("verdict"), "no detectable change") << same;
    // Every op pairs with itself by place.
    EXPECT_EQ(sameJson.at("pairing").at("paired_share_a").get<double>(), 1.0) << same;
    EXPECT_TRUE(sameJson.at("pairing").at("only_in_b").empty()) << same;

    const Result slower = runKforge({"diff", a, slow, "--fail-if-slower", "10"});
    EXPECT_EQ(slower.exitCode, 1) << slower;
    EXPECT_TRUE(contains(slower.err, "B is slower than A beyond noise")) << slower;
    EXPECT_TRUE(contains(slower.err, "total +100%")) << slower;
    EXPECT_TRUE(contains(slower.err, "function linear +100%")) << slower;
    EXPECT_TRUE(contains(slower.err, "op blocks.0.attn.qkv/linear/aten::linear +100%")) << slower;
    EXPECT_TRUE(contains(slower.out, "paired by place: 100.0% of A's op time, 100.0% of B's")) << slower;
    EXPECT_TRUE(contains(slower.out, "slower")) << slower;
    // Without the gate the same diff is a report, not a failure; in the other direction B is faster.
    EXPECT_EQ(runKforge({"diff", a, slow}).exitCode, 0);
    EXPECT_EQ(runKforge({"diff", slow, a, "--fail-if-slower", "10"}).exitCode, 0);

    const Result missing = runKforge({"diff", a, slow, "--run-b", "2"});
    EXPECT_EQ(missing.exitCode, 1) << missing;
    EXPECT_TRUE(contains(missing.err, "--run-b 2")) << missing;
    EXPECT_TRUE(contains(missing.err, "no such run in " + slow)) << missing;
}

// A saved run whose iterations 2 and 7 each had one op call stall 20 ms (a scheduler slice on a busy machine, written
// into the file): report names the stalls with the machine the run recorded, and the forward's cost leaves them out.
TEST(CliProfile, ReportNamesStallsAndTheForwardLeavesThemOut)
{
    ProfileDir dir;
    const std::string saved = dir.path("r.kfprof"), stalled = dir.path("stalled.kfprof");
    ASSERT_EQ(runKforge({"profile", "builtin:tiny-gpt", "--iterations", "10", "--threads", "1", "-q", "--save", saved})
                  .exitCode,
              0);
    json k = json::parse(readFile(saved));
    json& run = k.at("runs")[0];
    run["cores"] = 2;
    run["load_average"] = 1.4;
    // Every op 10 us, by construction: the quiet run has no stall whatever the machine did while it profiled, and the
    // forward with the stalls left out is the quiet one exactly.
    {
        const json& columns = run.at("record_columns");
        const size_t duration = size_t(std::find(columns.begin(), columns.end(), "duration_ns") - columns.begin());
        for (json& record : run.at("records"))
            record.at(duration) = 10'000;
        std::ofstream(saved) << k.dump();
    }
    // As a stall is: the op's call 20 ms longer, everything after it in its iteration 20 ms later, and every range
    // around it 20 ms longer.
    const auto columnOf = [&](const char* table, const char* name) {
        const json& columns = run.at(table);
        return size_t(std::find(columns.begin(), columns.end(), name) - columns.begin());
    };
    const size_t iteration = columnOf("record_columns", "iteration"), start = columnOf("record_columns", "start_ns"),
                 duration = columnOf("record_columns", "duration_ns");
    const size_t rangeIteration = columnOf("range_columns", "iteration"),
                 rangeStart = columnOf("range_columns", "start_ns"),
                 rangeDuration = columnOf("range_columns", "duration_ns");
    constexpr long long kStallNs = 20'000'000;
    for (const int stalledIteration : {2, 7}) {
        long long stallStart = -1;
        for (json& record : run.at("records"))
            if (record.at(iteration) == stalledIteration && stallStart < 0) {
                stallStart = record.at(start).get<long long>();
                record.at(duration) = record.at(duration).get<long long>() + kStallNs;
            } else if (stallStart >= 0 && record.at(start).get<long long>() > stallStart) {
                record.at(start) = record.at(start).get<long long>() + kStallNs;
            }
        for (json& range : run.at("ranges")) {
            const long long from = range.at(rangeStart).get<long long>();
            const long long to = from + range.at(rangeDuration).get<long long>();
            if (from > stallStart)
                range.at(rangeStart) = from + kStallNs;
            else if (range.at(rangeIteration) == stalledIteration && to > stallStart)
                range.at(rangeDuration) = range.at(rangeDuration).get<long long>() + kStallNs;
        }
    }
    std::ofstream(stalled) << k.dump();

    const Result before = runKforge({"report", saved, "--json"});
    ASSERT_EQ(before.exitCode, 0) << before;
    const double quietMs = parseJson(before).at("forward_ms").get<double>();

    const Result text = runKforge({"report", stalled});
    ASSERT_EQ(text.exitCode, 0) << text;
    // At least the two written in (the run itself may have stalled on a busy machine, and the file says so too).
    EXPECT_TRUE(contains(text.out, "stalls: ")) << text;
    EXPECT_TRUE(contains(text.out, " of 10 iterations waited")) << text;
    EXPECT_TRUE(contains(text.out, "other work (load 1.4) shares 2 cores; the estimate excludes them")) << text;
    EXPECT_TRUE(contains(text.out, "per iteration (median, stalls excluded)")) << text;
    const Result r = runKforge({"report", stalled, "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json j = parseJson(r);
    const json beforeStalls = parseJson(before).at("stalls");
    EXPECT_EQ(j.at("stalls").at("stalled_calls").get<int>(), beforeStalls.at("stalled_calls").get<int>() + 2)
        << j.at("stalls");
    EXPECT_GE(j.at("stalls").at("stalled_iterations").get<int>(), 2) << j.at("stalls");
    EXPECT_GE(j.at("stalls").at("largest_us").get<double>(), 19'000.0) << j.at("stalls");
    EXPECT_NEAR(j.at("forward_ms").get<double>(), quietMs, 0.02 * quietMs) << "the stalls are left out of the forward";
}

TEST(CliProfile, ErrorsAreOneLineWithTheCause)
{
    const Result cuda = runKforge({"profile", "builtin:tiny-gpt", "--device", "cuda", "-q"});
    if (cuda.exitCode != 0) { // without a CUDA device: the refusal says what to do instead
        EXPECT_EQ(cuda.exitCode, 1) << cuda;
        EXPECT_TRUE(contains(cuda.err, "--device cpu")) << cuda;
    }

    const Result noPlan = runKforge({"compare", "builtin:tiny-gpt"});
    EXPECT_EQ(noPlan.exitCode, 1) << noPlan;
    EXPECT_TRUE(contains(noPlan.err, "needs a plan")) << noPlan;

    const Result missing = runKforge({"report", "/nonexistent/run.kfprof"});
    EXPECT_EQ(missing.exitCode, 1) << missing;
    EXPECT_TRUE(contains(missing.err, "/nonexistent/run.kfprof: not found")) << missing;

    ProfileDir dir;
    const std::string bad = dir.path("bad.kfprof");
    std::ofstream(bad) << "{\"format\": \"kforge-profile\",\n \"version\": 1,\n \"runs\": [\n";
    const Result malformed = runKforge({"report", bad});
    EXPECT_EQ(malformed.exitCode, 1) << malformed;
    EXPECT_TRUE(contains(malformed.err, "malformed JSON at line 4")) << malformed;

    const Result badGroup = runKforge({"profile", "builtin:tiny-gpt", "--group-by", "stream"});
    EXPECT_NE(badGroup.exitCode, 0) << badGroup;
    EXPECT_NE(badGroup.exitCode, -1) << badGroup;
}

TEST(CliProfile, CtrlCStopsWithAPartialResult)
{
    ProfileDir dir;
    const std::string saved = dir.path("partial.kfprof"), outPath = dir.path("stdout");
    TerminalCapture terminal; // progress shows on a terminal only
    std::vector<std::string> argv{KFORGE_CLI,     "profile", "builtin:tiny-gpt", "--warmup", "0",
                                  "--iterations", "100000",  "--save",           saved};
    std::vector<char*> cargv;
    for (auto& a : argv)
        cargv.push_back(a.data());
    cargv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, terminal.path().c_str(), O_RDWR | O_NOCTTY, 0);
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    // Wait until a few measured iterations ran (progress lines on stderr), then Ctrl+C.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!contains(terminal.text(), "iteration 3/") && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ::kill(pid, SIGINT);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const Result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, readFile(outPath), terminal.finish()};
    EXPECT_EQ(r.exitCode, 130) << r;
    EXPECT_TRUE(contains(r.err, "interrupted: partial result")) << r;
    EXPECT_TRUE(contains(r.out, "cancelled: partial result")) << r;
    EXPECT_TRUE(contains(r.out, "aten::linear")) << r;
    const json file = json::parse(readFile(saved));
    const json& run = file.at("runs")[0];
    EXPECT_EQ(run.at("cancelled"), true);
    EXPECT_GE(run.at("iterations").get<int>(), 3);
    EXPECT_LT(run.at("iterations").get<int>(), 100000);
}

// R15 through the CLI: without a CUDA device, capture is refused in one line that names CUDA.
TEST(CliCapture, WithoutCudaIsAClearError)
{
    const Result r = runKforge({"capture", "builtin:tiny-gpt"});
    if (r.exitCode == 0)
        GTEST_SKIP() << "a CUDA device is present: the refusal path does not apply";
    EXPECT_EQ(r.exitCode, 1) << r;
    EXPECT_TRUE(contains(r.err, "CUDA")) << r;
    EXPECT_EQ(linesOf(r.err).size(), 1u) << r;
}

// R15 through the CLI: the capture names the provider it baked in per scope, its replays give the captured
// provider's output while eager forwards after deactivation are back to the originals, and a later plan that
// puts another provider in that scope makes it stale.
TEST(CliCapture, BakedInProvidersReplayAndGoStale)
{
    const Result r = runKforge({"capture", "builtin:tiny-gpt", "--provide", "blocks.0.mlp:gelu:CudaGeluProvider",
                                "--replays", "2", "--then-provide", "blocks.0.mlp:gelu:AtenGeluProvider", "--json"});
    if (r.exitCode == 1 && contains(r.err, "CUDA"))
        GTEST_SKIP() << "needs a CUDA device; none is visible on this machine";
    ASSERT_EQ(r.exitCode, 0) << r;
    const json out = parseJson(r);
    const json& capture = out.at("capture");
    EXPECT_TRUE(capture.at("ok").get<bool>()) << r;
    ASSERT_EQ(capture.at("providers").size(), 1u) << r;
    EXPECT_EQ(capture.at("providers")[0].at("scope"), "blocks.0.mlp") << r;
    EXPECT_EQ(capture.at("providers")[0].at("function"), "gelu") << r;
    EXPECT_TRUE(contains(capture.at("providers")[0].at("provider").get<std::string>(), "CudaGeluProvider")) << r;
    EXPECT_TRUE(capture.at("leftovers").empty()) << r;
    EXPECT_TRUE(out.at("stale").get<bool>()) << r;
    EXPECT_EQ(out.at("replays"), 2) << r;
    const double eager = out.at("eager")[0].at("sum"), after = out.at("eager_after")[0].at("sum");
    const double replayed = out.at("replayed")[0].at("sum");
    EXPECT_EQ(eager, after) << "eager forwards after the capture run the originals again: " << r;
    EXPECT_NEAR(replayed, eager, 1e-2 * std::max(1.0, std::abs(eager))) << r;

    const Result same = runKforge({"capture", "builtin:tiny-gpt", "--provide", "blocks.0.mlp:gelu:CudaGeluProvider",
                                   "--then-provide", "blocks.0.mlp:gelu:CudaGeluProvider", "--json"});
    ASSERT_EQ(same.exitCode, 0) << same;
    EXPECT_FALSE(parseJson(same).at("stale").get<bool>()) << same;
}

// ---- Warnings for plan entries that can never fire (run, profile, compare, optimize, capture) --------------------

namespace {

const std::string kContainerEntry = "blocks:gelu:AtenGeluProvider"; // a ModuleList: its forward never runs
const std::string kContainerWarning =
    "kforge: warning: plan entry 0 (scope 'blocks', gelu -> AtenGeluProvider) can never fire: 'blocks' (ModuleList) "
    "has no forward of its own: the model calls its children directly, so the scope is never entered";

std::vector<std::string> warningLines(const std::string& err)
{
    std::vector<std::string> out;
    for (const auto& line : linesOf(err))
        if (line.rfind("kforge: warning: plan entry ", 0) == 0)
            out.push_back(line);
    return out;
}

} // namespace

TEST(CliWarnings, RunWarnsAboutAFunctionNeverCalledUnderTheScopeAndExitsZero)
{
    const Result r = runKforge({"run", "builtin:convnet", "--provide", "stage:gelu:AtenGeluProvider"});
    ASSERT_EQ(r.exitCode, 0) << r;
    EXPECT_EQ(warningLines(r.err),
              (std::vector<std::string>{"kforge: warning: plan entry 0 (scope 'stage', gelu -> AtenGeluProvider) can "
                                        "never fire: 'gelu' is not called in 'stage' or below"}))
        << r;
    EXPECT_TRUE(contains(r.out, "FUNCTION")) << r; // the run itself went on
}

TEST(CliWarnings, RunWarnsAboutAContainerScopeInTextAndJson)
{
    const Result r =
        runKforge({"run", "builtin:tiny-gpt", "--provide", kContainerEntry, "--provide", kSdpaEntry, "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    EXPECT_EQ(warningLines(r.err), (std::vector<std::string>{kContainerWarning})) << r;
    const json run = parseJson(r);
    ASSERT_TRUE(run.is_object()) << r;
    ASSERT_EQ(run.at("warnings").size(), 1u) << r;
    const json& w = run.at("warnings")[0];
    EXPECT_EQ(w.at("entry"), 0);
    EXPECT_EQ(w.at("scope"), "blocks");
    EXPECT_EQ(w.at("function"), "gelu");
    EXPECT_EQ(w.at("provider"), "AtenGeluProvider");
    EXPECT_EQ(w.at("kind"), "scope-not-called");
    EXPECT_TRUE(contains(w.at("fix").get<std::string>(), "'blocks.0', 'blocks.1'")) << w;
    EXPECT_EQ("kforge: warning: " + w.at("message").get<std::string>(), kContainerWarning);
    // Nothing was served by the entry that cannot fire.
    for (const auto& c : callsOf(run, "gelu"))
        EXPECT_EQ(c.at("provider"), "original") << c;

    // A plan whose entries all fire has no warnings.
    const Result fine = runKforge({"run", "builtin:tiny-gpt", "--provide", kSdpaEntry, "--json"});
    ASSERT_EQ(fine.exitCode, 0) << fine;
    EXPECT_TRUE(warningLines(fine.err).empty()) << fine;
    EXPECT_EQ(parseJson(fine).at("warnings"), json::array()) << fine;
}

TEST(CliWarnings, ProfileWarnsAndExitsZero)
{
    const Result r = runKforge(
        {"profile", "builtin:tiny-gpt", "--provide", kContainerEntry, "--warmup", "0", "--iterations", "1", "-q"});
    ASSERT_EQ(r.exitCode, 0) << r;
    EXPECT_EQ(warningLines(r.err), (std::vector<std::string>{kContainerWarning})) << r;
    const Result j = runKforge({"profile", "builtin:tiny-gpt", "--provide", kContainerEntry, "--warmup", "0",
                                "--iterations", "1", "-q", "--json"});
    ASSERT_EQ(j.exitCode, 0) << j;
    EXPECT_EQ(parseJson(j).at("warnings").size(), 1u) << j;
    // A baseline profile runs no plan: nothing to warn about.
    const Result baseline = runKforge({"profile", "builtin:tiny-gpt", "--warmup", "0", "--iterations", "1", "-q"});
    ASSERT_EQ(baseline.exitCode, 0) << baseline;
    EXPECT_TRUE(warningLines(baseline.err).empty()) << baseline;
}

TEST(CliWarnings, CompareWarnsAndExitsZero)
{
    const Result r =
        runKforge({"compare", "builtin:tiny-gpt", "--provide", kContainerEntry, "--provide",
                   "blocks.0.attn:gelu:AtenGeluProvider", "--warmup", "0", "--iterations", "1", "-q", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    EXPECT_EQ(warningLines(r.err),
              (std::vector<std::string>{kContainerWarning,
                                        "kforge: warning: plan entry 1 (scope 'blocks.0.attn', gelu -> "
                                        "AtenGeluProvider) can never fire: 'gelu' is not called in 'blocks.0.attn' or "
                                        "below"}))
        << r;
    const json c = parseJson(r);
    ASSERT_EQ(c.at("warnings").size(), 2u) << r;
    EXPECT_EQ(c.at("warnings")[1].at("kind"), "function-not-called");
}

TEST(CliWarnings, OptimizeChecksThePlanItWrites)
{
    const fs::path out =
        fs::temp_directory_path() / ("kforge-cli-opt-" + std::to_string(std::random_device{}()) + ".kfplan.json");
    const Result r = runKforge({"optimize", "builtin:tiny-gpt", "--out", out.string(), "--warmup", "0", "--iterations",
                                "1", "--rounds", "1", "--quiet", "--json"});
    std::error_code ec;
    fs::remove(out, ec);
    ASSERT_EQ(r.exitCode, 0) << r;
    EXPECT_TRUE(warningLines(r.err).empty()) << r; // make_plan keeps root entries of functions it saw called
    EXPECT_EQ(parseJson(r).at("warnings"), json::array()) << r;
}

TEST(CliWarnings, CaptureWarnsAboutEntriesThatCannotFireOnCuda)
{
    const Result r = runKforge({"capture", "builtin:tiny-gpt", "--provide", kContainerEntry, "--provide",
                                "blocks.0.mlp:gelu:CpuGeluProvider", "--json"});
    if (r.exitCode == 1 && contains(r.err, "CUDA"))
        GTEST_SKIP() << "needs a CUDA device; none is visible on this machine";
    ASSERT_EQ(r.exitCode, 0) << r;
    const auto lines = warningLines(r.err);
    ASSERT_EQ(lines.size(), 2u) << r;
    EXPECT_EQ(lines[0], kContainerWarning);
    EXPECT_EQ(lines[1], "kforge: warning: plan entry 1 (scope 'blocks.0.mlp', gelu -> CpuGeluProvider) can never "
                        "fire: provider 'CpuGeluProvider' does not run on cuda (it runs on: cpu)");
    EXPECT_EQ(parseJson(r).at("warnings").size(), 2u) << r;
}

// kforge bench: baseline and plan latency side by side in JSON, with the speedup's interval and the outputs'
// agreement; the human table names both sides; a run without a plan is refused.
TEST(CliBench, JsonHasBothSidesTheSpeedupAndTheOutputsAgreement)
{
    const Result r = runKforge({"bench", "builtin:tiny-gpt", "--provide", ":gelu:AtenGeluProvider", "--warmup", "1",
                                "--iterations", "3", "--json", "-q"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json j = json::parse(r.out);
    for (const char* side : {"baseline", "plan"}) {
        EXPECT_EQ(j.at(side).at("forwards"), 3) << j;
        for (const char* key : {"min_ms", "median_ms", "p95_ms", "max_ms", "mean_ms", "forwards_per_second"})
            EXPECT_GT(j.at(side).at(key).get<double>(), 0.0) << side << " " << key;
    }
    EXPECT_EQ(j.at("plan_ms").size(), 3u);
    EXPECT_LE(j.at("speedup_interval")[0].get<double>(), j.at("speedup_interval")[1].get<double>());
    // Three rounds are too few for a verdict either way (too noisy to judge where a busy machine stalled most).
    EXPECT_TRUE(j.at("verdict") == "no detectable change" || j.at("verdict") == "too noisy to judge") << j;
    EXPECT_EQ(j.at("min_detectable_change"), 0.0) << "no 95% interval from three rounds";
    EXPECT_EQ(j.at("outputs_agree"), true);
    EXPECT_EQ(j.at("stopped"), false);
    EXPECT_TRUE(r.err.empty()) << r.err;

    const Result text = runKforge({"bench", "builtin:tiny-gpt", "--provide", ":gelu:AtenGeluProvider", "--warmup", "0",
                                   "--iterations", "2", "-q"});
    ASSERT_EQ(text.exitCode, 0) << text;
    for (const char* part : {"MEDIAN MS", "baseline", "plan", "the plan against the baseline: no detectable change",
                             "too few for a verdict (6 needed)", "outputs: agree"})
        EXPECT_NE(text.out.find(part), std::string::npos) << part << "\n" << text.out;

    const Result noPlan = runKforge({"bench", "builtin:tiny-gpt"});
    EXPECT_NE(noPlan.exitCode, 0);
    EXPECT_NE(noPlan.err.find("no plan"), std::string::npos) << noPlan;
}

// Item 6 of the plan-trust issue: a provider slower by construction (50 ms per gelu call, two per forward) reads
// "slower" with its interval below 1 and the smallest change the run could detect, in the text and the JSON. One
// intra-op thread and 12 rounds: on a loaded 2-core CI machine, 8 rounds with LibTorch's thread pool once read
// "no detectable change" (baseline forwards stalled ~100 ms waiting for a descheduled pool thread).
TEST(CliBench, AProviderSlowerByConstructionReadsSlower)
{
    const std::vector<std::string> args{"--provider-plugin",
                                        KFORGE_TEST_PROVIDERS_PLUGIN,
                                        "bench",
                                        "builtin:tiny-gpt",
                                        "--provide",
                                        ":gelu:TestSleepyGeluProvider",
                                        "--warmup",
                                        "1",
                                        "--iterations",
                                        "12",
                                        "--threads",
                                        "1",
                                        "-q"};
    std::vector<std::string> jsonArgs = args;
    jsonArgs.push_back("--json");
    const Result r = runKforge(jsonArgs);
    ASSERT_EQ(r.exitCode, 0) << r;
    const json j = json::parse(r.out);
    EXPECT_EQ(j.at("verdict"), "slower") << j;
    EXPECT_LT(j.at("speedup_interval")[1].get<double>(), 1.0) << j;
    EXPECT_GT(j.at("min_detectable_change").get<double>(), 0.0) << j;

    const Result text = runKforge(args);
    ASSERT_EQ(text.exitCode, 0) << text;
    EXPECT_NE(text.out.find("the plan against the baseline: slower: "), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("% or more, "), std::string::npos) << text.out; // rounds a side stalled in are left out
    EXPECT_NE(text.out.find(" rounds)"), std::string::npos) << text.out;
}

// kforge verify: an exact provider passes (exit 0); a seeded fault (tests/plugins/seeded_faults.h) fails with exit 1
// and names the module it was put in, in JSON and in text.
TEST(CliVerify, PassesAnExactPlanAndNamesTheModuleOfASeededFault)
{
    const Result exact =
        runKforge({"verify", "builtin:tiny-gpt", "--provide", ":gelu:AtenGeluProvider", "--json", "-q"});
    ASSERT_EQ(exact.exitCode, 0) << exact;
    const json e = json::parse(exact.out);
    EXPECT_EQ(e.at("passed"), true);
    EXPECT_EQ(e.at("outputs").at(0).at("max_abs_error").get<double>(), 0.0);
    EXPECT_FALSE(e.contains("first_divergence"));

    const std::vector<std::string> fault{"--provider-plugin",
                                         KFORGE_SEEDED_FAULTS,
                                         "verify",
                                         "builtin:tiny-gpt",
                                         "--provide",
                                         "blocks.1:gelu:SeededNoise_gelu",
                                         "-q"};
    std::vector<std::string> asJson = fault;
    asJson.push_back("--json");
    const Result failed = runKforge(asJson);
    ASSERT_EQ(failed.exitCode, 1) << failed;
    const json f = json::parse(failed.out);
    EXPECT_EQ(f.at("passed"), false);
    EXPECT_EQ(f.at("first_divergence").at("module"), "blocks.1.mlp") << f;
    EXPECT_EQ(f.at("first_divergence").at("entries").at(0).at("provider"), "SeededNoise_gelu");
    const Result text = runKforge(fault);
    EXPECT_EQ(text.exitCode, 1) << text;
    for (const char* part : {"verdict: FAIL", "first diverging module: blocks.1.mlp", "plan entry 0 in effect",
                             "inside: gelu x1 served by SeededNoise_gelu"})
        EXPECT_NE(text.out.find(part), std::string::npos) << part << "\n" << text.out;

    // A looser tolerance passes it; no plan is a clear error.
    std::vector<std::string> loose = fault;
    for (const char* a : {"--atol", "1", "--rtol", "1", "--min-cosine", "0.9"})
        loose.push_back(a);
    EXPECT_EQ(runKforge(loose).exitCode, 0);
    const Result noPlan = runKforge({"verify", "builtin:tiny-gpt"});
    EXPECT_NE(noPlan.exitCode, 0);
    EXPECT_NE(noPlan.err.find("no plan"), std::string::npos) << noPlan;
}

// Issue 69, budgets: verify reports the plan's change of the forward's peak, and optimize --max-peak-increase holds the
// plan it makes to a budget. TestMemoizedGeluProvider keeps every output it computes (a memo): its calls on the
// observed samples are lookups that need less than the original, but each forward's gelu outputs stay live, so the
// plan's forward peaks higher by construction; under a budget of 0% the measured plan is over it and the entry goes.
TEST(CliVerify, VerifyAndOptimizeReportAndBudgetThePlansPeakMemory)
{
    const std::vector<std::string> plugin{"--provider-plugin", KFORGE_TEST_PROVIDERS_PLUGIN};
    std::vector<std::string> verify = plugin;
    for (const char* a : {"verify", "builtin:tiny-gpt", "--provide", ":gelu:TestMemoizedGeluProvider", "-q"})
        verify.push_back(a);
    const Result text = runKforge(verify);
    ASSERT_EQ(text.exitCode, 0) << text;
    EXPECT_TRUE(contains(text.out, "peak memory per forward, without and with the plan: ")) << text.out;
    verify.push_back("--json");
    const Result v = runKforge(verify);
    ASSERT_EQ(v.exitCode, 0) << v;
    const json peak = json::parse(v.out).at("peak_memory");
    EXPECT_GT(peak.at("baseline_bytes").get<std::int64_t>(), 0) << peak;
    EXPECT_GT(peak.at("plan_bytes").get<std::int64_t>(), peak.at("baseline_bytes").get<std::int64_t>()) << peak;

    const fs::path out =
        fs::temp_directory_path() / ("kforge-cli-peak-" + std::to_string(std::random_device{}()) + ".kfplan.json");
    std::vector<std::string> optimize = plugin;
    for (const std::string& a :
         {std::string("optimize"), std::string("builtin:tiny-gpt"), std::string("--providers"),
          std::string("TestMemoizedGeluProvider"), std::string("--generators"), std::string("none"),
          std::string("--max-peak-increase"), std::string("0"), std::string("--warmup"), std::string("1"),
          std::string("--iterations"), std::string("1"), std::string("-o"), out.string(), std::string("-q"),
          std::string("--json")})
        optimize.push_back(a);
    const Result o = runKforge(optimize);
    std::error_code ec;
    fs::remove(out, ec);
    ASSERT_EQ(o.exitCode, 0) << o;
    const json j = json::parse(o.out);
    const auto candidate = std::find_if(j.at("candidates").begin(), j.at("candidates").end(),
                                        [](const json& c) { return c.at("provider") == "TestMemoizedGeluProvider"; });
    ASSERT_NE(candidate, j.at("candidates").end()) << j;
    EXPECT_LE(candidate->at("peak_growth_bytes").get<std::int64_t>(), 0) << *candidate;
    EXPECT_FALSE(contains(candidate->at("rejected").get<std::string>(), "could raise the forward's peak"))
        << "its calls need less than the original's: within any budget\n"
        << *candidate;
    // Kept on its speed (a lookup, faster by construction) it is measured in the plan and dropped; on a machine so
    // loaded that its rounds stalled it is never kept. Either way the plan made under a 0% budget holds no entry.
    EXPECT_FALSE(candidate->at("kept").get<bool>()) << *candidate;
    const bool keptOnSpeed = !j.at("dropped_by_peak_budget").empty();
    if (keptOnSpeed) {
        ASSERT_EQ(j.at("dropped_by_peak_budget").size(), 1u) << j;
        EXPECT_TRUE(contains(j.at("dropped_by_peak_budget")[0].get<std::string>(),
                             "gelu -> TestMemoizedGeluProvider: peak memory: with the plan the forward's peak goes "))
            << j;
        EXPECT_TRUE(contains(candidate->at("rejected").get<std::string>(), "beyond the budget of +0%")) << *candidate;
        EXPECT_LE(j.at("peak_memory").at("change_percent").get<double>(), 0.0) << j;
    }
}

// A plan carries its own thresholds ("verify" in the plan file); each one the command line gives overrides it.
TEST(CliVerify, APlansOwnThresholdsApplyUnlessTheCommandLineGivesOthers)
{
    PlanDir dir;
    const std::string plan = dir.path("loose.kfplan.json");
    std::ofstream(plan) << R"({"format": "kforge-plan", "version": 2,
        "verify": {"min_cosine": 0.9, "atol": 1, "rtol": 1},
        "entries": [{"scope": "blocks.1", "function": "gelu", "provider": {"type": "SeededNoise_gelu"}}]})";
    const std::vector<std::string> verify{
        "--provider-plugin", KFORGE_SEEDED_FAULTS, "verify", "builtin:tiny-gpt", "--plan", plan, "-q", "--json"};
    const Result loose = runKforge(verify);
    ASSERT_EQ(loose.exitCode, 0) << loose;
    EXPECT_EQ(json::parse(loose.out).at("thresholds").at("min_cosine"), 0.9);
    std::vector<std::string> strict = verify;
    for (const char* a : {"--min-cosine", "0.999", "--atol", "0.0001", "--rtol", "0.001"})
        strict.push_back(a);
    const Result failed = runKforge(strict);
    EXPECT_EQ(failed.exitCode, 1) << failed;

    std::ofstream(plan) << R"({"format": "kforge-plan", "version": 2, "verify": {"min_cosine": 2},
        "entries": [{"function": "gelu", "provider": {"type": "AtenGeluProvider"}}]})";
    const Result bad = runKforge({"verify", "builtin:tiny-gpt", "--plan", plan});
    EXPECT_NE(bad.exitCode, 0) << bad;
    EXPECT_NE(bad.err.find("/verify/min_cosine: expected a number from -1"), std::string::npos) << bad;
}

// --executor: direct (the default) and optimized run the same model to the same result; a profile says which ran;
// an unknown name is a usage error naming the choices.
TEST(CliExecutor, DirectIsTheDefaultAndAProfileSaysWhichRan)
{
    const Result direct = runKforge({"run", "builtin:tiny-gpt", "--json"});
    const Result optimized =
        runKforge({"run", "builtin:tiny-gpt", "--executor", "optimized", "--iterations", "3", "--json"});
    ASSERT_EQ(direct.exitCode, 0) << direct;
    ASSERT_EQ(optimized.exitCode, 0) << optimized;
    const double a = json::parse(direct.out).at("outputs")[0].at("sum").get<double>();
    const double b = json::parse(optimized.out).at("outputs")[0].at("sum").get<double>();
    EXPECT_NEAR(a, b, 1e-4 * std::max(1.0, std::abs(a)));

    const Result profile =
        runKforge({"profile", "builtin:tiny-gpt", "--warmup", "0", "--iterations", "1", "--json", "-q"});
    ASSERT_EQ(profile.exitCode, 0) << profile;
    EXPECT_EQ(json::parse(profile.out).at("graph_executor"), "direct") << profile.out;
    const Result text = runKforge(
        {"profile", "builtin:tiny-gpt", "--executor", "optimized", "--warmup", "0", "--iterations", "1", "-q"});
    EXPECT_NE(text.out.find("graph executor: optimized"), std::string::npos) << text;

    const Result bad = runKforge({"run", "builtin:tiny-gpt", "--executor", "fast"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("--executor"), std::string::npos) << bad;
}

// ---- conventions every command keeps --------------------------------------------------------------------------------

TEST(CliConventions, JsonCommandsReportErrorsAsAJsonObjectOnStdout)
{
    const Result missing = runKforge({"modules", "/nonexistent/model.pt", "--json"});
    EXPECT_EQ(missing.exitCode, 1) << missing;
    const json error = parseJson(missing).at("error");
    EXPECT_EQ(error.at("exit_code"), 1) << missing;
    EXPECT_TRUE(contains(error.at("where").get<std::string>(), "/nonexistent/model.pt")) << missing;
    EXPECT_TRUE(contains(error.at("message").get<std::string>(), "/nonexistent/model.pt")) << missing;
    EXPECT_TRUE(contains(missing.err, "kforge: error: ")) << missing; // the one-line message stays on stderr

    // A command's own subcommand (plan show, plan validate) answers alike.
    const Result nested = runKforge({"plan", "show", "/nonexistent/plan.json", "--json"});
    EXPECT_EQ(nested.exitCode, 1) << nested;
    EXPECT_TRUE(contains(parseJson(nested).at("error").at("where").get<std::string>(), "/nonexistent/plan.json"))
        << nested;

    const Result usage = runKforge({"profile", "builtin:tiny-gpt", "--bogus", "--json"});
    EXPECT_EQ(usage.exitCode, 2) << usage;
    EXPECT_EQ(parseJson(usage).at("error").at("exit_code"), 2) << usage;

    const Result text = runKforge({"modules", "/nonexistent/model.pt"}); // without --json stdout stays empty
    EXPECT_EQ(text.exitCode, 1) << text;
    EXPECT_TRUE(text.out.empty()) << text;
}

TEST(CliConventions, RunShowsProgressOnATerminalOnly)
{
    const std::vector<std::string> args{"run", "builtin:tiny-gpt", "--iterations", "3"};
    const Result interactive = runKforge(args, {.stderrTerminal = true});
    ASSERT_EQ(interactive.exitCode, 0) << interactive;
    EXPECT_TRUE(contains(interactive.err, "run: forward 3/3")) << interactive;
    const Result logged = runKforge(args);
    ASSERT_EQ(logged.exitCode, 0) << logged;
    EXPECT_FALSE(contains(logged.err, "forward 1/3")) << logged;
}

TEST(CliConventions, BashCompletionCompletesCommandsOptionsChoicesAndFiles)
{
    const Result script = runKforge({"--bash-completion"});
    ASSERT_EQ(script.exitCode, 0) << script;
    ProfileDir dir;
    const std::string path = dir.path("kforge.bash");
    std::ofstream(path) << script.out;
    // Completes the words of each line as bash would at the cursor after the last word, and prints the candidates.
    const auto complete = [&](const std::string& words) {
        const std::string command = "bash -c 'source \"$0\" && COMP_WORDS=(" + words +
                                    ") && COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) && _kforge && "
                                    "printf \"%s \" \"${COMPREPLY[@]}\"' " +
                                    path;
        std::string out;
        if (FILE* pipe = ::popen(command.c_str(), "r")) {
            char buffer[4096];
            for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
                out.append(buffer, n);
            ::pclose(pipe);
        }
        return out;
    };
    EXPECT_EQ(complete("kforge pro"), "providers profile "); // in declaration order
    EXPECT_EQ(complete("kforge plan ex"), "export ");
    EXPECT_TRUE(contains(complete("kforge profile builtin:tiny-gpt --exe"), "--executor"))
        << complete("kforge profile x --exe");
    EXPECT_EQ(complete("kforge bench builtin:tiny-gpt --executor \"\""), "direct optimized ");
    EXPECT_EQ(complete("kforge run --plan " + dir.path("kforge.ba")), path + " "); // a value that is a file
}

// docs/json-output.md lists each --json command's top-level keys on a line "- `kforge CMD --json` keys: `a`, `b`.";
// every command listed there runs here and has at least those keys, so the document cannot drift from the output.
TEST(CliConventions, JsonOutputsHaveTheDocumentedKeys)
{
    ProfileDir dir;
    const std::string plan = dir.path("p.kfplan.json");
    std::ofstream(plan) << R"({"format": "kforge-plan", "version": 1, "entries": [
        {"scope": "", "function": "gelu", "provider": {"type": "AtenGeluProvider"}}]})";
    const std::vector<std::string> quick{"--warmup", "0", "--iterations", "1"};
    const auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    };
    const std::map<std::string, std::vector<std::string>> commands{
        {"run MODEL", {"run", "builtin:tiny-gpt"}},
        {"profile MODEL", with({"profile", "builtin:tiny-gpt"}, quick)},
        {"compare MODEL --plan P", with({"compare", "builtin:tiny-gpt", "--plan", plan}, quick)},
        {"bench MODEL --plan P", {"bench", "builtin:tiny-gpt", "--plan", plan, "--warmup", "1", "--iterations", "2"}},
        {"verify MODEL --plan P", {"verify", "builtin:tiny-gpt", "--plan", plan}},
        {"optimize MODEL --out P",
         with({"optimize", "builtin:tiny-gpt", "--out", dir.path("made.kfplan.json"), "--rounds", "1"}, quick)},
        {"plan validate P --model M", {"plan", "validate", plan, "--model", "builtin:tiny-gpt"}},
        {"capture MODEL", {"capture", "builtin:tiny-gpt"}}, // CUDA only: checked where a device runs it
    };
    std::ifstream doc(std::string(KFORGE_SOURCE_DIR) + "/docs/json-output.md");
    ASSERT_TRUE(doc) << "docs/json-output.md is missing";
    const std::regex documented(R"(^- `kforge (.+) --json` keys: (.+)\.$)");
    int checked = 0;
    for (std::string line; std::getline(doc, line);) {
        std::smatch m;
        if (!std::regex_match(line, m, documented))
            continue;
        const auto command = commands.find(m[1]);
        ASSERT_NE(command, commands.end()) << "the test does not know how to run `kforge " << m[1] << "`";
        const Result r = runKforge(with(command->second, {"--json"}));
        if (r.exitCode != 0 && command->first == "capture MODEL")
            continue; // no CUDA device here
        ASSERT_EQ(r.exitCode, 0) << r;
        const json out = parseJson(r);
        const std::string keys = m[2];
        const std::regex key("`([a-z_]+)`");
        for (auto k = std::sregex_iterator(keys.begin(), keys.end(), key); k != std::sregex_iterator(); ++k)
            EXPECT_TRUE(out.contains((*k)[1].str())) << "kforge " << command->first << " --json lacks " << (*k)[1];
        ++checked;
    }
    EXPECT_GE(checked, 6);
}

// kforge generators lists the built-in autotuner; optimize asks it by default and not with --generators none.
TEST(CliOptimize, GeneratorsAreListedAskedByDefaultAndCanBeTurnedOff)
{
    const Result listed = runKforge({"generators", "--json"});
    ASSERT_EQ(listed.exitCode, 0) << listed;
    const json generators = parseJson(listed);
    ASSERT_TRUE(generators.is_array() && !generators.empty()) << listed;
    EXPECT_EQ(generators[0]["name"], "CpuAutotuner");
    EXPECT_NE(generators[0]["functions"].dump().find("layer_norm"), std::string::npos);

    ProfileDir dir;
    const auto generatedCount = [&](const std::vector<std::string>& extra) {
        std::vector<std::string> args{"optimize",     "builtin:tiny-gpt",
                                      "--out",        dir.path("made.kfplan.json"),
                                      "--rounds",     "1",
                                      "--warmup",     "0",
                                      "--iterations", "1",
                                      "--json"};
        args.insert(args.end(), extra.begin(), extra.end());
        const Result r = runKforge(args);
        EXPECT_EQ(r.exitCode, 0) << r;
        int generated = 0;
        const json out = parseJson(r);
        for (const json& c : out["candidates"])
            generated += c.value("generator", "") == "CpuAutotuner";
        return generated;
    };
    EXPECT_EQ(generatedCount({}), 3); // gelu, layer_norm and softmax
    EXPECT_EQ(generatedCount({"--generators", "none"}), 0);
    EXPECT_EQ(generatedCount({"--generation-timeout", "30", "--generators", "CpuAutotuner"}), 3);
}

TEST(CliConventions, EveryCommandThatWritesAFileTakesOut)
{
    ProfileDir dir;
    const std::string plan = dir.path("p.kfplan.json"), aitune = dir.path("a.json"), back = dir.path("b.kfplan.json"),
                      saved = dir.path("run.kfprof");
    const Result created = runKforge({"plan", "new", "-o", plan, "--provide", ":gelu:AtenGeluProvider"});
    ASSERT_EQ(created.exitCode, 0) << created;
    const Result exported = runKforge({"plan", "export", plan, "--aitune", "--out", aitune});
    ASSERT_EQ(exported.exitCode, 0) << exported;
    const Result imported = runKforge({"plan", "import", aitune, "-o", back});
    ASSERT_EQ(imported.exitCode, 0) << imported;
    const Result profiled = runKforge({"profile", "builtin:tiny-gpt", "--iterations", "1", "-q", "--out", saved});
    ASSERT_EQ(profiled.exitCode, 0) << profiled;
    for (const std::string& path : {plan, aitune, back, saved})
        EXPECT_TRUE(fs::file_size(path) > 0) << path;
}

// Packages written by torch.export.save open in every command; one with several programs needs --program, and says
// which it has (tests/data/models/make_exported_saved.py).
TEST(CliExported, TorchExportSaveFilesOpenAndProgramsAreChosenByName)
{
    const std::string models = std::string(KFORGE_SOURCE_DIR) + "/tests/data/models/";
    const Result saved = runKforge({"modules", models + "saved_block.pt2", "--json"});
    ASSERT_EQ(saved.exitCode, 0) << saved;
    const json tree = json::parse(saved.out);
    EXPECT_EQ(tree[0].at("subtree_parameters").get<int>(), 64 + 16) << "the tied weight counts once";
    EXPECT_EQ(runKforge({"run", models + "saved_block.pt2"}).exitCode, 0);

    const Result ambiguous = runKforge({"run", models + "two_programs.pt2"});
    EXPECT_EQ(ambiguous.exitCode, 1) << ambiguous;
    EXPECT_TRUE(contains(ambiguous.err, "holds several exported programs (encode, decode): choose one with --program"))
        << ambiguous;
    const Result decode = runKforge({"run", models + "two_programs.pt2", "--program", "decode", "--json"});
    ASSERT_EQ(decode.exitCode, 0) << decode;
    EXPECT_TRUE(contains(decode.out, "\"gelu\"")) << decode;
    const Result missing = runKforge({"modules", models + "two_programs.pt2", "--program", "encoder"});
    EXPECT_EQ(missing.exitCode, 1) << missing;
    EXPECT_TRUE(contains(missing.err, "has no exported program 'encoder' (it has: encode, decode)")) << missing;
}

// A decomposed program (tests/data/models/make_decomposed_programs.py: run_decompositions() left each linear as
// permute + addmm): an entry for its linear says it can never fire in run, verify and plan validate, and run, modules
// and profile count its linear calls alike, Python's 3 per forward; so they do on torchao's unwrapped int8 program,
// whose ops of one call export splits with _assert_tensor_metadata checks.
TEST(CliExported, ADecomposedFunctionsEntryCanNeverFireInEveryCommandAndItsCallsCountAlike)
{
    const std::string model = std::string(KFORGE_SOURCE_DIR) + "/tests/data/models/decomposed_mlp.pt2";
    const std::string entry = "fc1:linear:AtenLinearProvider";
    const std::string warning = "kforge: warning: plan entry 0 (scope 'fc1', linear -> AtenLinearProvider) can never "
                                "fire: linear is decomposed into permute + addmm in this program";
    const Result run = runKforge({"run", model, "--provide", entry, "--json"});
    ASSERT_EQ(run.exitCode, 0) << run;
    ASSERT_EQ(warningLines(run.err).size(), 1u) << run;
    EXPECT_EQ(warningLines(run.err)[0].rfind(warning, 0), 0u) << run;
    EXPECT_EQ(parseJson(run).at("warnings")[0].at("kind"), "function-decomposed") << run;
    EXPECT_EQ(callsBy(parseJson(run), "linear", "original"), 3) << run;

    const Result verify = runKforge({"verify", model, "--provide", entry, "-q"});
    ASSERT_EQ(warningLines(verify.err).size(), 1u) << verify;
    EXPECT_EQ(warningLines(verify.err)[0].rfind(warning, 0), 0u) << verify;

    const PlanDir dir;
    const std::string plan =
        dir.write("fc1.kfplan.json", R"({"format": "kforge-plan", "version": 1, "entries": [{"scope": "fc1",
        "function": "linear", "provider": {"type": "AtenLinearProvider"}}]})");
    const Result validate = runKforge({"plan", "validate", plan, "--model", model});
    EXPECT_EQ(validate.exitCode, 1) << validate;
    EXPECT_TRUE(
        contains(validate.out, "function-decomposed: linear is decomposed into permute + addmm in this program"))
        << validate;

    for (const std::string file : {"decomposed_mlp.pt2", "unwrapped_int8.pt2"}) {
        const std::string program = std::string(KFORGE_SOURCE_DIR) + "/tests/data/models/" + file;
        const Result plain = runKforge({"run", program, "--json"});
        ASSERT_EQ(plain.exitCode, 0) << plain;
        EXPECT_EQ(callsBy(parseJson(plain), "linear", "original"), 3) << file << "\n" << plain;
        const Result modules = runKforge({"modules", program, "--json"});
        ASSERT_EQ(modules.exitCode, 0) << modules;
        EXPECT_EQ(parseJson(modules)[0].at("subtree_functions").at("linear"), 3) << file << "\n" << modules;
        const Result profile = runKforge(
            {"profile", program, "--warmup", "0", "--iterations", "2", "--group-by", "function", "--json", "-q"});
        ASSERT_EQ(profile.exitCode, 0) << profile;
        long long linear = 0;
        const json profiled = parseJson(profile);
        for (const json& row : profiled.at("functions"))
            if (row.at("name") == "linear")
                linear = row.at("calls").get<long long>();
        EXPECT_EQ(linear, 2 * 3) << file << "\n" << profile;
    }
}

// A model whose gate module calls torch.cond (tests/data/models/make_cond_branches.py): every command says once that
// the branch modules run inside cond branches and which scope plans them; an entry on a branch module is a warning
// that it can never fire, in run and plan validate, not an unknown module.
TEST(CliExported, ModulesInsideCondBranchesAreExplainedOnceInEveryCommand)
{
    const std::string model = std::string(KFORGE_SOURCE_DIR) + "/tests/data/models/cond_branches.pt2";
    const auto notesIn = [](const std::string& err) {
        int n = 0;
        for (const auto& line : linesOf(err))
            n += line.find("run inside torch.cond branches of 'gate'") != std::string::npos;
        return n;
    };
    const Result modules = runKforge({"modules", model});
    ASSERT_EQ(modules.exitCode, 0) << modules;
    EXPECT_EQ(notesIn(modules.err), 1) << modules;

    const Result run = runKforge({"run", model, "--provide", "gate.cold:linear:AtenLinearProvider"});
    ASSERT_EQ(run.exitCode, 0) << run;
    EXPECT_EQ(notesIn(run.err), 1) << run;
    EXPECT_EQ(
        warningLines(run.err),
        (std::vector<std::string>{"kforge: warning: plan entry 0 (scope 'gate.cold', linear -> AtenLinearProvider) "
                                  "can never fire: 'gate.cold' runs inside a torch.cond branch of 'gate': export "
                                  "records no module stack inside cond branches, so the scope is never entered"}))
        << run;

    const PlanDir dir;
    const std::string plan =
        dir.write("cold.kfplan.json", R"({"format": "kforge-plan", "version": 1, "entries": [{"scope": "gate.cold",
        "function": "linear", "provider": {"type": "AtenLinearProvider"}}]})");
    const Result validate = runKforge({"plan", "validate", plan, "--model", model});
    EXPECT_EQ(validate.exitCode, 1) << validate;
    EXPECT_TRUE(contains(validate.out, "runs inside a torch.cond branch of 'gate'")) << validate;
    EXPECT_TRUE(contains(validate.out, "fix: use the scope 'gate' (the module holding the cond)")) << validate;
}

// A model whose forward calls a custom op (tests/data/models/make_custom_op.py) names the op and --ops-library; with
// the library given, it runs and its profile shows the op.
TEST(CliOpsLibrary, AModelCallingACustomOpRunsWithItsLibrary)
{
    const std::string model = std::string(KFORGE_TEST_DATA) + "/models/custom_op.script.pt";
    const Result refused = runKforge({"run", model, "--input", "float32[2,8]"});
    EXPECT_EQ(refused.exitCode, 1) << refused;
    EXPECT_NE(refused.err.find("custom op 'kforge_test::scale'"), std::string::npos) << refused;
    EXPECT_NE(refused.err.find("--ops-library"), std::string::npos) << refused;

    const Result run = runKforge({"--ops-library", KFORGE_TEST_CUSTOM_OPS, "run", model, "--input", "float32[2,8]"});
    EXPECT_EQ(run.exitCode, 0) << run;
    const Result profiled = runKforge({"--ops-library", KFORGE_TEST_CUSTOM_OPS, "profile", model, "--input",
                                       "float32[2,8]", "--warmup", "0", "--iterations", "1", "--json"});
    ASSERT_EQ(profiled.exitCode, 0) << profiled;
    EXPECT_NE(profiled.out.find("kforge_test::scale"), std::string::npos) << profiled.out.substr(0, 2000);

    const Result missing = runKforge({"--ops-library", "/no/such/libops.so", "run", model, "--input", "float32[2,8]"});
    EXPECT_EQ(missing.exitCode, 1) << missing;
    EXPECT_NE(missing.err.find("ops library '/no/such/libops.so': file not found"), std::string::npos) << missing;
}

// The global options where users type them: after the command (`kforge modules model.pt --ops-library libtv.so`),
// and after a nested command's own; they said "The following arguments were not expected".
TEST(CliOpsLibrary, GlobalOptionsAreAcceptedAfterTheCommand)
{
    const std::string model = std::string(KFORGE_TEST_DATA) + "/models/custom_op.script.pt";
    const Result run = runKforge({"run", model, "--input", "float32[2,8]", "--ops-library", KFORGE_TEST_CUSTOM_OPS});
    EXPECT_EQ(run.exitCode, 0) << run;
    const Result modules = runKforge({"modules", model, "--ops-library", KFORGE_TEST_CUSTOM_OPS});
    EXPECT_EQ(modules.exitCode, 0) << modules;
    const Result plugin = runKforge({"providers", "--provider-plugin", KFORGE_SEEDED_FAULTS});
    EXPECT_EQ(plugin.exitCode, 0) << plugin;
    EXPECT_NE(plugin.out.find("SeededZero_gelu"), std::string::npos) << plugin.out.substr(0, 2000);
    const Result unknown = runKforge({"run", model, "--no-such-option"});
    EXPECT_EQ(unknown.exitCode, 2) << unknown; // still a usage error
}

// A forward that takes no argument (its input a buffer; tests/data/models/make_no_inputs.py) runs in every command
// that runs forwards, without --input, and a scoped plan entry serves its call (no command could).
TEST(Cli, AForwardWithoutArgumentsRunsInEveryCommand)
{
    const std::string model = std::string(KFORGE_SOURCE_DIR) + "/tests/data/models/no_inputs.script.pt";
    const std::string entry = "head:gelu:AtenGeluProvider";
    const Result run = runKforge({"run", model, "--provide", entry, "--json"});
    ASSERT_EQ(run.exitCode, 0) << run;
    const json report = json::parse(run.out);
    EXPECT_TRUE(report.at("inputs").empty());
    ASSERT_EQ(report.at("calls").size(), 1u) << run.out;
    EXPECT_EQ(report.at("calls")[0].at("scope"), "head");
    EXPECT_EQ(report.at("calls")[0].at("calls"), 1);
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"profile", model, "--warmup", "0", "--iterations", "2"},
          {"compare", model, "--provide", entry, "--warmup", "0", "--iterations", "2"},
          {"bench", model, "--provide", entry, "--warmup", "1", "--iterations", "2"},
          {"verify", model, "--provide", entry}}) {
        const Result result = runKforge(command);
        EXPECT_EQ(result.exitCode, 0) << command[0] << ": " << result;
        EXPECT_FALSE(contains(result.err, "no inputs")) << command[0] << ": " << result;
    }
}
