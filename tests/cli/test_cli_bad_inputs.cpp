// SPDX-License-Identifier: Apache-2.0
// The bad-input corpus (tests/data/bad-inputs) through the kforge binary, and writes that fail midway (a file
// size limit standing in for a full disk). Every case: a non-zero exit, one clear line naming the file or spec
// and the cause, no crash and no stack trace; a failed write keeps the previous file and leaves no temporary.
#include "corpus.h"
#include "kforge_process.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

using namespace kforge::test;
using kforge::clitest::Limits;
using kforge::clitest::Result;
using kforge::clitest::runKforge;
using nlohmann::json;
namespace fs = std::filesystem;

namespace kforge::clitest {
void PrintTo(const Result& r, std::ostream* os) { *os << r; }
} // namespace kforge::clitest

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// stderr is exactly one "kforge: error: ..." line without a backtrace.
void expectOneErrorLine(const Result& r)
{
    EXPECT_EQ(r.exitCode, 1) << r;
    EXPECT_EQ(r.err.rfind("kforge: error: ", 0), 0u) << r;
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r;
    EXPECT_TRUE(looksClean(r.err.substr(0, r.err.size() - 1))) << r;
}

} // namespace

// kforge modules FILE, for every model file of the corpus.
TEST(CliBadInputs, ModulesRefusesEveryCorpusModelNamingTheFileAndTheCause)
{
    const json expected = corpusExpectations("models");
    const auto files = corpusFiles("models");
    std::vector<std::vector<std::string>> commands;
    for (const auto& file : files)
        commands.push_back({"modules", (corpusFolder("models") / file).string()});
    const auto results = kforge::clitest::runKforgeMany(commands);
    for (size_t i = 0; i < files.size(); ++i) {
        const std::string& file = files[i];
        SCOPED_TRACE("models/" + file);
        const std::string path = (corpusFolder("models") / file).string();
        const Result& r = results[i];
        expectOneErrorLine(r);
        EXPECT_TRUE(contains(r.err, "model '" + path + "'")) << r;
        EXPECT_TRUE(contains(r.err, expected[file].value("fragment", "<none>"))) << r;
        EXPECT_TRUE(r.out.empty()) << r;
    }
}

// kforge plan validate with every plan of the corpus at once (each is checked on its own): human and JSON.
TEST(CliBadInputs, PlanValidateReportsEveryCorpusPlanWithWhereAndWhy)
{
    const json expectations = corpusExpectations("plans");
    std::vector<std::string> args{"plan", "validate"};
    for (const auto& file : corpusFiles("plans"))
        args.push_back((corpusFolder("plans") / file).string());
    args.insert(args.end(), {"--model", "builtin:tiny-gpt"});
    const Result human = runKforge(args);
    EXPECT_EQ(human.exitCode, 1) << human;
    EXPECT_TRUE(looksClean(human.err.empty() ? "-" : human.err.substr(0, human.err.find('\n')))) << human;
    args.push_back("--json");
    const Result machine = runKforge(args);
    EXPECT_EQ(machine.exitCode, 1) << machine;
    json reports;
    ASSERT_NO_THROW(reports = json::parse(machine.out)) << machine;
    ASSERT_TRUE(reports.is_array());
    ASSERT_EQ(reports.size(), corpusFiles("plans").size());

    size_t i = 0;
    for (const auto& file : corpusFiles("plans")) {
        SCOPED_TRACE("plans/" + file);
        const std::string path = (corpusFolder("plans") / file).string();
        const json& expected = expectations[file];
        const std::string fragment = expected.value("fragment", "<none>");
        const json& report = reports[i++];
        EXPECT_EQ(report.value("plan", ""), path);
        EXPECT_FALSE(report.value("valid", true));
        const bool read = expected.value("stage", "") == "read";
        bool found = false;
        for (const json& p : report.at("problems"))
            found |= p.value("kind", "") == (read ? "unreadable" : expected.value("kind", "")) &&
                     (read || p.value("path", "") == expected.value("path", "")) &&
                     contains(p.value("message", ""), fragment) && !p.value("fix", "").empty();
        EXPECT_TRUE(found) << "expected '" << fragment << "' in " << report.dump(2);
        // The human form: a line that starts with the file and carries the same fragment.
        const std::string text = "\n" + human.out, linePrefix = "\n" + path + ": ";
        bool humanFound = false;
        for (size_t pos = text.find(linePrefix); pos != std::string::npos; pos = text.find(linePrefix, pos + 1)) {
            const std::string line = text.substr(pos + 1, text.find('\n', pos + 1) - pos - 1);
            humanFound |=
                contains(line, fragment) &&
                (read ? contains(line, ": unreadable: ")
                      : contains(line, "at " + expected.value("path", "") + ": " + expected.value("kind", "")));
        }
        EXPECT_TRUE(humanFound) << "expected '" << fragment << "' on a line for " << path;
    }
}

// kforge run / profile --input SPEC, for every spec of the corpus (the two commands take turns).
TEST(CliBadInputs, RunAndProfileRefuseEveryCorpusInputSpec)
{
    const json expectations = corpusExpectations("inputs");
    std::vector<std::vector<std::string>> commands;
    for (const auto& [spec, _] : expectations.items())
        commands.push_back(commands.size() % 2
                               ? std::vector<std::string>{"profile", "builtin:tiny-gpt", "--input", spec, "--quiet"}
                               : std::vector<std::string>{"run", "builtin:tiny-gpt", "--input", spec});
    const auto results = kforge::clitest::runKforgeMany(commands);
    size_t i = 0;
    for (const auto& [spec, expected] : expectations.items()) {
        SCOPED_TRACE("input spec " + spec + " (kforge " + commands[i][0] + ")");
        const Result& r = results[i++];
        expectOneErrorLine(r);
        EXPECT_TRUE(contains(r.err, "input spec '" + spec + "'")) << r;
        EXPECT_TRUE(contains(r.err, expected.value("fragment", "<none>"))) << r;
    }
}

// ---- writes that fail midway --------------------------------------------------------------------------------------

namespace {

class Folder {
public:
    Folder() : m_dir(fs::temp_directory_path() / ("kforge-cli-faults-" + std::to_string(std::random_device{}())))
    {
        fs::create_directories(m_dir);
    }
    ~Folder()
    {
        std::error_code ec;
        fs::remove_all(m_dir, ec);
    }
    std::string path(const std::string& name) const { return (m_dir / name).string(); }
    void write(const std::string& name, const std::string& text) const { std::ofstream(path(name)) << text; }
    std::string read(const std::string& name) const
    {
        std::ifstream in(path(name), std::ios::binary);
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }
    std::vector<std::string> files() const
    {
        std::vector<std::string> names;
        for (const auto& item : fs::directory_iterator(m_dir))
            names.push_back(item.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }

private:
    fs::path m_dir;
};

constexpr unsigned long kLimit = 16 * 1024;

} // namespace

// kforge plan export under a file size limit: the previous export stays, no temporary file is left.
TEST(CliWriteFaults, PlanExportOnAFullDiskKeepsThePreviousFile)
{
    Folder dir;
    // An AITune export keeps unknown top-level keys: a long note makes the output larger than the limit.
    dir.write("plan.kfplan.json", json{{"format", "kforge-plan"},
                                       {"version", 1},
                                       {"note", std::string(4 * kLimit, 'x')},
                                       {"entries",
                                        {{{"scope", ""},
                                          {"function", "scaled_dot_product_attention"},
                                          {"provider", {{"type", "TorchSDPAKernelProvider"}}}}}}}
                                      .dump());
    const std::string old = R"({"providers": []})";
    dir.write("aitune.json", old);
    const auto before = dir.files();
    const std::vector<std::string> args{"plan",     "export", dir.path("plan.kfplan.json"),
                                        "--aitune", "--out",  dir.path("aitune.json")};
    const Result r = runKforge(args, Limits{kLimit});
    expectOneErrorLine(r);
    EXPECT_TRUE(contains(r.err, dir.path("aitune.json") + ": not saved: cannot write: File too large")) << r;
    EXPECT_EQ(dir.read("aitune.json"), old);
    EXPECT_EQ(dir.files(), before);
    ASSERT_EQ(runKforge(args).exitCode, 0); // without the limit it works
    EXPECT_GT(dir.read("aitune.json").size(), kLimit);
}

// kforge profile --csv under a file size limit.
TEST(CliWriteFaults, ProfileCsvOnAFullDiskKeepsThePreviousFile)
{
    Folder dir;
    const std::string old = "kind,name\r\n";
    dir.write("kernels.csv", old);
    const auto before = dir.files();
    const Result r = runKforge({"profile", "builtin:tiny-gpt", "--warmup", "0", "--iterations", "10", "--quiet",
                                "--csv", dir.path("kernels.csv")},
                               Limits{kLimit});
    expectOneErrorLine(r);
    EXPECT_TRUE(contains(r.err, dir.path("kernels.csv") + ": not saved: cannot write: File too large")) << r;
    EXPECT_EQ(dir.read("kernels.csv"), old);
    EXPECT_EQ(dir.files(), before);
}
