#pragma once
// Runs the built kforge (KFORGE_CLI) as a child process and collects its exit code, stdout and stderr.
#include <ostream>
#include <string>
#include <vector>

namespace kforge::clitest {

struct Result {
    int exitCode = -1; // -1 when the process did not exit normally (a crash)
    std::string out;
    std::string err;
};
std::ostream& operator<<(std::ostream& os, const Result& r);

struct Limits {
    // RLIMIT_FSIZE for the child (0 = none), with SIGXFSZ ignored: writes beyond it fail with EFBIG, as on a
    // full disk. Its stdout goes to /dev/null then (a file would hit the limit too); stderr stays short.
    unsigned long fileSizeBytes = 0;
};

Result runKforge(const std::vector<std::string>& args, Limits limits = {});
// One kforge per argument list, as many at a time as there are cores; results in the same order.
std::vector<Result> runKforgeMany(const std::vector<std::vector<std::string>>& argLists);

} // namespace kforge::clitest
