// SPDX-License-Identifier: Apache-2.0
// A competing load for calibrating commands as users run them (bench/aa_under_load.sh): spins until killed or for
// --seconds.
//
//   competing_load [--busy 1] [--burst-threads 1] [--burst-ms 5] [--period-ms 50] [--seconds 0]
#include "competing_load.h"

#include <cstdio>
#include <string>
#include <thread>

int main(int argc, char** argv)
{
    int busy = 1, burstThreads = 0, burstMs = 5, periodMs = 50, seconds = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        const int value = std::stoi(argv[i + 1]);
        if (flag == "--busy")
            busy = value;
        else if (flag == "--burst-threads")
            burstThreads = value;
        else if (flag == "--burst-ms")
            burstMs = value;
        else if (flag == "--period-ms")
            periodMs = value;
        else if (flag == "--seconds")
            seconds = value;
        else {
            std::fprintf(stderr, "competing_load: unknown flag %s (see the comment at the top of the source)\n",
                         flag.c_str());
            return 2;
        }
    }
    kforge_bench::CompetingLoad load(busy, burstThreads, burstMs, periodMs);
    if (seconds > 0)
        std::this_thread::sleep_for(std::chrono::seconds(seconds));
    else
        for (;;)
            std::this_thread::sleep_for(std::chrono::hours(1));
    return 0;
}
