// SPDX-License-Identifier: Apache-2.0
// File writes that fail midway (disk full, simulated for real): a child process gets a file size limit
// (RLIMIT_FSIZE) with SIGXFSZ ignored, so write() fails with EFBIG part way through the file. Every writer
// (savePlan, the profile exports, .kfprof files: all through writeFileStreaming) must then throw a
// kforge::Error saying what failed, keep the previous file as it was and leave no temporary file behind.
#include <kforge/error.h>
#include <kforge/plan.h>
#include <kforge/profile_export.h>

#include "test_helpers.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <iterator>

using namespace kforge;
using namespace kforge::test;
namespace fs = std::filesystem;

namespace {

struct ChildResult {
    int exitCode = -1; // 0: no error; 1: kforge::Error; 2: another exception; -1: killed
    std::string message;
};

// Runs `action` in a forked child whose files may not grow beyond `limitBytes`; returns how it ended and the
// error message. The child leaves with _exit: nothing of the parent's state is torn down twice.
ChildResult runWithFileSizeLimit(rlim_t limitBytes, const std::function<void()>& action)
{
    int fds[2];
    if (::pipe(fds) != 0)
        return {-1, "pipe failed"};
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        ::signal(SIGXFSZ, SIG_IGN); // write() then fails with EFBIG instead of killing the process
        const rlimit limit{limitBytes, limitBytes};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        int code = 0;
        std::string message;
        try {
            action();
        } catch (const Error& e) {
            code = 1;
            message = e.what();
        } catch (const std::exception& e) {
            code = 2;
            message = e.what();
        }
        (void)!::write(fds[1], message.data(), message.size());
        ::_exit(code);
    }
    ::close(fds[1]);
    ChildResult result;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;)
        result.message.append(buffer, size_t(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

std::string readFile(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> filesIn(const fs::path& dir)
{
    std::vector<std::string> names;
    for (const auto& item : fs::directory_iterator(dir))
        names.push_back(item.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

Plan planOfSize(size_t entries)
{
    Plan plan;
    for (size_t i = 0; i < entries; ++i) {
        PlanEntry e;
        e.scope = "blocks." + std::to_string(i);
        e.function = "gelu";
        e.provider = {{"type", "AtenGeluProvider"}};
        e.note = "entry " + std::to_string(i);
        plan.entries.push_back(e);
    }
    return plan;
}

// A CPU profile run with `rows` op executions: its CSV and trace are ~100 bytes per row or more.
ProfileRun runOfSize(size_t rows)
{
    ProfileRun run;
    run.device = "cpu";
    run.model = "tiny-gpt";
    run.iterations = 1;
    for (size_t i = 0; i < rows; ++i) {
        KernelRecord r;
        r.name = "aten::addmm";
        r.modulePath = "blocks.0.mlp.fc";
        r.function = "linear";
        r.op = "aten::linear";
        r.provider = "original";
        r.startNs = std::int64_t(i) * 1000;
        r.durationNs = 900;
        run.records.push_back(r);
    }
    return run;
}

class WriteFaults : public ::testing::Test {
protected:
    // `write` replaces `name` (holding `old`) with something larger than the limit; it must fail cleanly.
    void expectFailsKeepingTheOldFile(const std::string& name, const std::string& old,
                                      const std::function<void(const std::string&)>& write)
    {
        const fs::path path = dir.path(name);
        test::writeBytes(path, old);
        const auto before = filesIn(path.parent_path());
        const ChildResult r = runWithFileSizeLimit(kLimit, [&] { write(path.string()); });
        EXPECT_EQ(r.exitCode, 1) << r.message;
        EXPECT_TRUE(contains(r.message, path.string() + ": not saved: cannot write: File too large")) << r.message;
        EXPECT_TRUE(contains(r.message, "left as it was")) << r.message;
        EXPECT_EQ(readFile(path), old) << "the previous content must be intact";
        EXPECT_EQ(filesIn(path.parent_path()), before) << "no temporary file may be left";
        // The same write without the limit works: the failure was the limit, not the writer.
        write(path.string());
        EXPECT_GT(fs::file_size(path), kLimit);
    }

    static constexpr rlim_t kLimit = 64 * 1024;
    test::TempDir dir;
};

} // namespace

TEST_F(WriteFaults, SavePlanOnAFullDiskKeepsThePreviousPlan)
{
    std::string old = toJson(planOfSize(3));
    expectFailsKeepingTheOldFile("plan.kfplan.json", old,
                                 [](const std::string& path) { savePlan(planOfSize(5000), path); });
}

TEST_F(WriteFaults, SavePlanOnAFullDiskCreatesNoFile)
{
    const fs::path path = dir.path("new.kfplan.json");
    const ChildResult r = runWithFileSizeLimit(kLimit, [&] { savePlan(planOfSize(5000), path.string()); });
    EXPECT_EQ(r.exitCode, 1) << r.message;
    EXPECT_TRUE(contains(r.message, "File too large")) << r.message;
    EXPECT_FALSE(fs::exists(path));
    EXPECT_TRUE(filesIn(dir.path("")).empty());
}

TEST_F(WriteFaults, CsvExportOnAFullDiskKeepsThePreviousFile)
{
    expectFailsKeepingTheOldFile("kernels.csv", "kind,name\r\ncpu_op,aten::relu\r\n",
                                 [](const std::string& path) { exportProfile(runOfSize(5000), "csv", path); });
}

TEST_F(WriteFaults, ChromeTraceExportOnAFullDiskKeepsThePreviousFile)
{
    expectFailsKeepingTheOldFile("trace.json", R"({"traceEvents": []})",
                                 [](const std::string& path) { exportProfile(runOfSize(5000), "chrome-trace", path); });
}

TEST_F(WriteFaults, SavedProfileOnAFullDiskKeepsThePreviousFile)
{
    expectFailsKeepingTheOldFile("run.kfprof", R"({"format": "kforge-profile"})",
                                 [](const std::string& path) { saveProfile(runOfSize(5000), path); });
}
