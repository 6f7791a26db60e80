// SPDX-License-Identifier: Apache-2.0
// The export formats behind one interface, and atomic streamed file writes for exports and .kfprof files.
#include <kforge/profile_export.h>

#include <kforge/error.h>

#include <ostream>

namespace kforge {
namespace {

const ProfileRun* firstRun(const std::vector<LabeledRun>& runs, const char* what)
{
    if (runs.empty() || !runs.front().run)
        throw Error(std::string("exporting a ") + what, "there is no run to export");
    return runs.front().run;
}

class ChromeTraceExporter final : public ProfileExporter {
public:
    std::string name() const override { return "chrome-trace"; }
    std::string extension() const override { return ".json"; }
    std::string description() const override
    {
        return "Chrome trace JSON (Perfetto, chrome://tracing): module and function ranges, kernels per stream, "
               "flows";
    }
    void write(const std::vector<LabeledRun>& runs, std::ostream& out) const override
    {
        if (runs.size() != 1)
            return writeChromeTrace(runs, out);
        writeChromeTrace({LabeledRun{"", runs.front().run}}, out); // one run needs no label on its lanes
    }
};

class CsvExporter final : public ProfileExporter {
public:
    std::string name() const override { return "csv"; }
    std::string extension() const override { return ".csv"; }
    std::string description() const override { return "CSV, one row per kernel execution with its attribution"; }
    void write(const std::vector<LabeledRun>& runs, std::ostream& out) const override
    {
        writeCsv(*firstRun(runs, "CSV"), out);
    }
};

class KfprofExporter final : public ProfileExporter {
public:
    std::string name() const override { return "kfprof"; }
    std::string extension() const override { return ".kfprof"; }
    std::string description() const override
    {
        return "kforge profile result file: every run with its label, for kforge report and the desktop app";
    }
    void write(const std::vector<LabeledRun>& runs, std::ostream& out) const override
    {
        firstRun(runs, "profile file");
        writeProfile(runs, out);
    }
};

class MemorySnapshotExporter final : public ProfileExporter {
public:
    std::string name() const override { return "memory-snapshot"; }
    std::string extension() const override { return ".pickle"; }
    std::string description() const override
    {
        return "PyTorch memory snapshot (pytorch.org/memory_viz): the allocations of a run profiled with memory";
    }
    void write(const std::vector<LabeledRun>& runs, std::ostream& out) const override
    {
        writeMemorySnapshot(*firstRun(runs, "memory snapshot"), out);
    }
};

} // namespace

const std::vector<const ProfileExporter*>& profileExporters()
{
    static const ChromeTraceExporter chrome;
    static const CsvExporter csv;
    static const KfprofExporter kfprof;
    static const MemorySnapshotExporter snapshot;
    static const std::vector<const ProfileExporter*> all{&chrome, &csv, &kfprof, &snapshot};
    return all;
}

const ProfileExporter& profileExporter(const std::string& name)
{
    std::string known;
    for (const ProfileExporter* e : profileExporters()) {
        if (e->name() == name)
            return *e;
        known += (known.empty() ? "" : ", ") + e->name();
    }
    throw Error("export", "unknown format '" + name + "' (known: " + known + ")");
}

void exportProfile(const std::vector<LabeledRun>& runs, const std::string& format, const std::string& path)
{
    const ProfileExporter& exporter = profileExporter(format);
    writeFileStreaming(path, [&](std::ostream& out) { exporter.write(runs, out); });
}

void exportProfile(const ProfileRun& run, const std::string& format, const std::string& path)
{
    exportProfile({LabeledRun{run.usedPlan ? "plan" : "baseline", &run}}, format, path);
}

} // namespace kforge
