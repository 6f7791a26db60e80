// SPDX-License-Identifier: Apache-2.0
#pragma once
// What kforge profile and kforge compare share: the model, plan, device and iteration options, the study they run
// (kforge/study.h, the same rules as the desktop app) and the files they write (through the exporter registry).
#include "output.h"

#include <kforge/study.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace kforge::cli {

struct StudySetup {
    ModelOptions model;
    PlanOptions plan;
    std::string device = "cpu";
    int warmup = 3;
    int iterations = 10;
    std::string trace;
    bool quiet = false;
    std::string save;
    size_t top = 20;
    bool graph = false;
    bool recordShapes = false;  // each CPU op's input shapes (--record-shapes, or --group-by shape)
    bool recordMemory = false;  // every allocation and free (profile --memory)
    std::string memorySnapshot; // profile --memory-snapshot: PyTorch's memory snapshot of the run (implies --memory)
    double maxDetectable = kDefaultMaxDetectableChange; // compare's --max-detectable
};

// --memory: every allocation and free of the measured forwards (profile, compare).
void addMemoryFlag(CLI::App* cmd, StudySetup& o);
void addStudyOptions(CLI::App* command, StudySetup& setup);

// Runs the study with progress on stderr ("baseline: iteration 3/10") and Ctrl+C as its cancel.
StudyResult runStudy(ModelSession& session, const StudySetup& setup, StudyKind kind, const Plan& plan);

// --trace, --csv (the first run), --memory-snapshot (the first run) and --save, each through the exporter registry;
// `files` gets what was written.
void writeStudyFiles(const StudyResult& study, const StudySetup& setup, const std::string& csv,
                     nlohmann::ordered_json& files);
void printFiles(std::ostream& out, const nlohmann::ordered_json& files);
// "kforge: interrupted: partial result of N measured iteration(s)" and the exit code of an interrupted command.
void reportInterrupted(Report& report, const ProfileRun& run);

} // namespace kforge::cli
