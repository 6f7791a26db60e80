// SPDX-License-Identifier: Apache-2.0
// The export formats behind one interface, and atomic streamed file writes for exports and .kfprof files.
#include <kforge/profile_export.h>

#include <kforge/error.h>

#include <ostream>

namespace kforge {
namespace {

class ChromeTraceExporter final : public ProfileExporter {
public:
    std::string name() const override { return "chrome-trace"; }
    std::string extension() const override { return ".json"; }
    std::string description() const override
    {
        return "Chrome trace JSON (Perfetto, chrome://tracing): module and function ranges, kernels per stream, "
               "flows";
    }
    void write(const ProfileRun& run, std::ostream& out) const override { writeChromeTrace(run, out); }
};

class CsvExporter final : public ProfileExporter {
public:
    std::string name() const override { return "csv"; }
    std::string extension() const override { return ".csv"; }
    std::string description() const override { return "CSV, one row per kernel execution with its attribution"; }
    void write(const ProfileRun& run, std::ostream& out) const override { writeCsv(run, out); }
};

} // namespace

const std::vector<const ProfileExporter*>& profileExporters()
{
    static const ChromeTraceExporter chrome;
    static const CsvExporter csv;
    static const std::vector<const ProfileExporter*> all{&chrome, &csv};
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

void exportProfile(const ProfileRun& run, const std::string& format, const std::string& path)
{
    const ProfileExporter& exporter = profileExporter(format);
    writeFileStreaming(path, [&](std::ostream& out) { exporter.write(run, out); });
}

} // namespace kforge
