// SPDX-License-Identifier: Apache-2.0
#pragma once
// Instructions per call, counted by callgrind: a cost figure that does not move between runs. On a shared VM the
// time of one repetition spreads by 90-600 ns, which hides the tens of nanoseconds an interposer target is about;
// the number of instructions executed does not spread at all.
//
// A bench run with --instructions re-executes itself under `valgrind --tool=callgrind --collect-atstart=no`; in
// that child, countInstructions() collects only inside its loop and dumps the counts under a label, and the parent
// reads the dumps back (label -> instructions per call).
#include <valgrind/callgrind.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kforge_bench {

inline bool underCallgrind() { return RUNNING_ON_VALGRIND != 0; }

// Runs body `calls` times with collection on and dumps the count as `label`, after `warmUp` uncounted calls (which
// fill caches and run first-call initialisation).
inline void countInstructions(const std::string& label, int calls, const std::function<void()>& body, int warmUp = 50)
{
    for (int i = 0; i < warmUp; ++i)
        body();
    const std::string dumpName = label + "|" + std::to_string(calls);
    CALLGRIND_ZERO_STATS;
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_TOGGLE_COLLECT;
    for (int i = 0; i < calls; ++i)
        body();
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT(dumpName.c_str());
    CALLGRIND_STOP_INSTRUMENTATION;
}

// Re-runs `self` with `args` under callgrind and returns each dump's instructions per call, by label. Empty, with
// a line on stderr, when valgrind is missing or the child fails.
inline std::map<std::string, double> instructionsPerCall(const std::string& self, const std::vector<std::string>& args)
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("kforge-callgrind-" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::vector<std::string> command{"valgrind",
                                     "--tool=callgrind",
                                     "--quiet",
                                     "--collect-atstart=no",
                                     "--instr-atstart=no",
                                     "--callgrind-out-file=" + (dir / "cg.out").string(),
                                     self};
    command.insert(command.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : command)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(nullptr);
    const pid_t child = fork();
    if (child == 0) {
        execvp(argv[0], argv.data());
        std::perror("bench: cannot run valgrind (install it: scripts/bootstrap)");
        _exit(127);
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::map<std::string, double> perCall;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "bench: the run under callgrind failed (status %d)\n", status);
    } else {
        for (const auto& file : fs::directory_iterator(dir)) {
            std::ifstream in(file.path());
            std::string line, label;
            double total = -1;
            while (std::getline(in, line)) {
                static const std::string trigger = "desc: Trigger: Client Request: ";
                if (line.rfind(trigger, 0) == 0)
                    label = line.substr(trigger.size());
                else if (line.rfind("summary: ", 0) == 0 || line.rfind("totals: ", 0) == 0)
                    total = std::atof(line.c_str() + line.find(' ') + 1);
            }
            const auto bar = label.rfind('|');
            if (bar != std::string::npos && total >= 0)
                perCall[label.substr(0, bar)] = total / std::atof(label.c_str() + bar + 1);
        }
    }
    // KFORGE_KEEP_CALLGRIND=1 keeps the dumps (one per counted row, labelled in its "desc: Trigger" line), for
    // callgrind_annotate to say which functions a difference between two builds is in.
    if (const char* keep = std::getenv("KFORGE_KEEP_CALLGRIND"); keep && std::string_view(keep) == "1")
        std::fprintf(stderr, "bench: callgrind dumps kept in %s\n", dir.c_str());
    else
        fs::remove_all(dir);
    return perCall;
}

} // namespace kforge_bench
