// SPDX-License-Identifier: Apache-2.0
#include "output.h"

#include <kforge/error.h>
#include <kforge/module_path.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>

namespace kforge::cli {

std::string withThousands(long long value)
{
    std::string digits = std::to_string(value < 0 ? -value : value);
    for (int i = int(digits.size()) - 3; i > 0; i -= 3)
        digits.insert(size_t(i), ",");
    return value < 0 ? "-" + digits : digits;
}

std::string functionsSummary(const std::map<std::string, int>& functions)
{
    std::string out;
    for (const auto& [name, count] : functions)
        out += (out.empty() ? "" : ", ") + name + (count > 1 ? " x" + std::to_string(count) : "");
    return out;
}

std::string fixed(double value, int decimals)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

namespace {

// Characters on screen: UTF-8 continuation bytes take no column ("µs").
size_t displayWidth(const std::string& s)
{
    size_t n = 0;
    for (unsigned char c : s)
        n += (c & 0xc0) != 0x80;
    return n;
}

} // namespace

std::string formatTable(const std::vector<Column>& columns, const std::vector<std::vector<std::string>>& rows)
{
    std::vector<size_t> widths(columns.size());
    for (size_t c = 0; c < columns.size(); ++c) {
        widths[c] = displayWidth(columns[c].title);
        for (const auto& row : rows)
            widths[c] = std::max(widths[c], c < row.size() ? displayWidth(row[c]) : 0);
    }
    std::string out;
    const auto line = [&](const auto& cellOf) {
        std::string text;
        for (size_t c = 0; c < columns.size(); ++c) {
            const std::string& cell = cellOf(c);
            const std::string pad(widths[c] - displayWidth(cell), ' ');
            text += columns[c].rightAligned ? pad + cell : cell + pad;
            if (c + 1 < columns.size())
                text += "  ";
        }
        while (!text.empty() && text.back() == ' ')
            text.pop_back();
        out += text + '\n';
    };
    line([&](size_t c) -> const std::string& { return columns[c].title; });
    static const std::string kEmpty;
    for (const auto& row : rows)
        line([&](size_t c) -> const std::string& { return c < row.size() ? row[c] : kEmpty; });
    return out;
}

std::string formatTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows)
{
    std::vector<Column> columns;
    for (const auto& title : header)
        columns.push_back({title, false});
    return formatTable(columns, rows);
}

std::string describe(const EntryDeclines& d)
{
    return "declined: plan entry " + std::to_string(d.entry) + " (" + d.function + " -> " + d.provider + ", scope " +
           (d.scope.empty() ? std::string(module_path::kRootName) : "'" + d.scope + "'") + ") declined " +
           withThousands(static_cast<long long>(d.calls)) +
           " call(s); the original served them and is credited with them. Last reason: " + d.lastReason;
}

std::string describe(const TensorDigest& d)
{
    std::string shape;
    for (auto s : d.shape)
        shape += (shape.empty() ? "" : ",") + std::to_string(s);
    char numbers[128];
    std::snprintf(numbers, sizeof numbers, "sum=%.6g max|x|=%.6g", d.sum, d.maxAbs);
    return (d.path.empty() ? "output" : "output " + d.path) + ": " + d.dtype + "[" + shape + "] on " + d.device + "  " +
           numbers;
}

std::string describe(const LeftoverGroup& group)
{
    const LeftoverPatch& p = group.patch;
    return p.function + " -> " + p.provider + " pushed by module '" + p.modulePath + "' on thread " +
           std::to_string(p.thread) +
           (group.count > 1 ? ", " + withThousands(static_cast<long long>(group.count)) + " entries" : "") +
           (p.unwound       ? " (unwound)"
            : p.threadEnded ? " (kept, but its thread has ended: no longer in effect)"
                            : " (still in effect)") +
           (p.error.empty() ? "" : ": " + p.error);
}

void requireInputs(const ModelSession& session)
{
    if (!session.hasInputs())
        throw Error("model '" + session.source() + "'",
                    "no inputs: give --input DTYPE[SHAPE] per forward argument, or --inputs-file FILE");
}

Plan planFromOptions(const std::string& planFile, const std::vector<std::string>& provideSpecs)
{
    Plan plan = planFile.empty() ? Plan{} : readPlan(planFile);
    for (const auto& spec : provideSpecs)
        plan.entries.push_back(parseProvideSpec(spec));
    return plan;
}

void warnPlan(Report& report, const PlanNotes& notes)
{
    if (!notes.otherModel.empty())
        report.warn(notes.otherModel);
    report.setPlanWarnings(notes.warnings);
}

void landPlan(Report& report, Plan& plan, ModelSession& session, const std::string& device, const PlanOptions& options)
{
    PlanLandingOptions landing;
    landing.device = device;
    landing.revalidate = !options.file.empty(); // a plan read from a file may have been measured elsewhere
    landing.revalidation.acceptChangedPlugins = options.acceptChangedPlugins;
    landing.revalidation.log = [&](const std::string& line) { report.diagnostic(line); };
    PlanLanding landed = kforge::landPlan(session, plan, landing);
    if (landed.revalidation) {
        if (!landed.revalidation->note.empty())
            report.diagnostic(options.file + ": " + landed.revalidation->note);
        for (const EntryRevalidation& e : landed.revalidation->entries)
            if (!e.kept)
                report.warn(options.file + ": plan entry " + std::to_string(e.entry) + " disabled: " + e.verdict);
        report.setRevalidation(std::move(*landed.revalidation));
    }
    warnPlan(report, landed.notes);
}

std::unique_ptr<ModelSession> openModel(const ModelOptions& options, Report& report)
{
    auto session = ModelSession::open(options.source, options.open);
    for (const auto& warning : session->warnings())
        report.warn(warning);
    if (!options.inputsFile.empty())
        session->loadInputsFile(options.inputsFile);
    else if (!options.inputs.empty())
        session->setInputSpecs(options.inputs);
    return session;
}

SessionWithPlan openWithPlan(const std::string& command, const ModelOptions& model, const PlanOptions& plan,
                             const std::string& device, Report& report, bool planOptional)
{
    SessionWithPlan opened{openModel(model, report), plan.read()};
    if (device != "cpu")
        opened.session->setDevice(device);
    requireInputs(*opened.session);
    if (opened.plan.entries.empty() && !planOptional)
        throw Error(command, "no plan: give --plan FILE or --provide SCOPE:FUNCTION:PROVIDER");
    if (!opened.plan.entries.empty())
        landPlan(report, opened.plan, *opened.session, device, plan);
    return opened;
}

void addPlanOptions(CLI::App* command, PlanOptions& options, const std::string& what)
{
    const std::string tail = what.empty() ? "" : " " + what;
    command
        ->add_option("--plan", options.file,
                     "plan file (kforge or AITune dialect)" + tail + "; --provide entries come after its entries")
        ->type_name("FILE");
    command
        ->add_option("--provide", options.provides,
                     "SCOPE:FUNCTION:PROVIDER[:{json settings}] plan entry" + tail +
                         ", e.g. \"blocks.0:scaled_dot_product_attention:TorchSDPAKernelProvider\"")
        ->type_name("SPEC");
    command->add_flag("--accept-changed-plugins", options.acceptChangedPlugins,
                      "use a plan whose provider plugin differs (SHA-256) from the one it was measured with: its "
                      "entries are re-validated here instead of the plan being refused");
}

void addDeviceOption(CLI::App* command, std::string& device, const std::string& help)
{
    command->add_option("--device", device, help)->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
}

void addQuietFlag(CLI::App* command, bool& quiet) { command->add_flag("--quiet,-q", quiet, "no progress on stderr"); }

void addJsonFlag(CLI::App* command, const std::string& help) { command->add_flag("--json", help); }

void addMaxDetectableOption(CLI::App* command, double& fraction)
{
    command
        ->add_option_function<double>(
            "--max-detectable", [&fraction](double percent) { fraction = percent / 100.0; },
            "the largest smallest-detectable-change, in percent, at which speed is still judged: a run too noisy to "
            "detect a smaller change says \"too noisy to judge\" (default " +
                std::to_string(int(100 * kDefaultMaxDetectableChange)) + "; 0: no bound)")
        ->type_name("PERCENT")
        ->check(CLI::Range(0.0, 100000.0));
}

namespace {

void addGraphExecutorOption(CLI::App* command, GraphExecutor& executor)
{
    const std::map<std::string, GraphExecutor> names{{"direct", GraphExecutor::Direct},
                                                     {"optimized", GraphExecutor::Optimized}};
    command
        ->add_option("--executor", executor,
                     "how TorchScript runs the graph: direct (as scripted: first result at once, nothing fused) or "
                     "optimized (LibTorch's profiling executor, as a deployment runs it)")
        ->transform(CLI::CheckedTransformer(names, CLI::ignore_case))
        ->default_str("direct");
}

} // namespace

void addModelOptions(CLI::App* command, ModelOptions& options)
{
    command->add_option("MODEL", options.source, "TorchScript file, torch.export package (.pt2) or builtin:NAME")
        ->required();
    command->add_option("--input", options.inputs, "DTYPE[SHAPE] per forward argument, e.g. float32[1,3,224,224]");
    command->add_option("--inputs-file", options.inputsFile,
                        "tensors saved with torch.save (tensor, tuple, list or dict)");
    addGraphExecutorOption(command, options.open.executor);
    addProgramOption(command, options.open);
    command
        ->add_option("--threads", options.open.intraOpThreads,
                     "LibTorch intra-op threads (at::set_num_threads; 0: LibTorch's default, one per core); fewer "
                     "make CPU timings steadier")
        ->check(CLI::Range(0, 1024))
        ->capture_default_str();
}

void addProgramOption(CLI::App* command, OpenOptions& open)
{
    command
        ->add_option("--program", open.program,
                     "the exported program of a .pt2 package to open (default: its only one, else \"model\", the "
                     "name torch.export.save gives it)")
        ->type_name("NAME");
    command->add_flag("--compiled", open.compiled,
                      "a .pt2 holding both an exported program and its AOTInductor compiled code: run the compiled "
                      "code (with the program's module tree) instead of the program");
}

std::string describeGraphExecutor(const std::string& name)
{
    if (name == "direct")
        return "direct (the graph as scripted, nothing fused; a LibTorch deployment runs the optimized executor: "
               "--executor optimized profiles that program)";
    if (name == "optimized")
        return "optimized (LibTorch's profiling executor)";
    if (name == "exported")
        return "a torch.export program, run node by node (nothing fused)";
    if (name == "compiled")
        return "compiled (an AOTInductor package's generated code, as a C++ deployment runs it: only the ATen ops it "
               "still calls are seen, and no plan applies)";
    return name;
}

const SavedRun* runNamed(const std::vector<SavedRun>& runs, const std::string& choice)
{
    for (const SavedRun& run : runs)
        if (run.label == choice)
            return &run;
    if (choice.empty() || choice.size() > 9 || choice.find_first_not_of("0123456789") != std::string::npos)
        return nullptr; // a label that is not there, or a number no file holds
    const size_t n = std::stoul(choice);
    return n >= 1 && n <= runs.size() ? &runs[n - 1] : nullptr;
}

} // namespace kforge::cli
