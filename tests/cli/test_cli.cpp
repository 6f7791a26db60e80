// The kforge command line, run as a separate process: exit codes, stdout (human and --json) and stderr.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Result {
    int exitCode = -1; // -1 when the process did not exit normally (a crash)
    std::string out;
    std::string err;
};

std::ostream& operator<<(std::ostream& os, const Result& r)
{
    return os << "exit code " << r.exitCode << "\n--- stdout ---\n" << r.out << "--- stderr ---\n" << r.err;
}

std::string readFile(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs the built kforge with `args`; stdout and stderr go to temporary files (no pipe can fill up and block).
Result runKforge(const std::vector<std::string>& args)
{
    const fs::path dir = fs::temp_directory_path() / ("kforge-cli-test-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir);
    const std::string outPath = (dir / "stdout").string();
    const std::string errPath = (dir / "stderr").string();

    std::vector<std::string> argv{KFORGE_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv)
        cargv.push_back(a.data());
    cargv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);

    Result result;
    if (spawned != 0) {
        result.err = std::string("posix_spawn failed: ") + std::strerror(spawned);
    } else {
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (WIFEXITED(status))
            result.exitCode = WEXITSTATUS(status);
        result.out = readFile(outPath);
        result.err = readFile(errPath);
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return result;
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

TEST(Cli, NoSubcommandIsAUsageError)
{
    const Result r = runKforge({});
    EXPECT_NE(r.exitCode, 0) << r;
    EXPECT_NE(r.exitCode, -1) << r;
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
    std::ofstream(dir / "noise.pt", std::ios::binary) << std::string("\x01\x02 not a zip archive \xff", 24);
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
    const Result r = runKforge({"run", "builtin:tiny-gpt", "--iterations", "3", "--threads", "2", "--provide",
                                ":gelu:AtenGeluProvider", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r;
    const json run = parseJson(r);
    ASSERT_TRUE(run.is_object()) << r;
    EXPECT_EQ(run.at("iterations"), 3);
    EXPECT_EQ(run.at("threads"), 2);
    long long total = 0;
    for (const auto& c : callsOf(run, "gelu")) {
        EXPECT_EQ(c.at("provider"), "AtenGeluProvider") << c;
        total += c.at("calls").get<long long>();
    }
    EXPECT_EQ(total, 2 * 3 * 2) << run.at("calls").dump(2); // 2 blocks x 3 iterations x 2 threads
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
