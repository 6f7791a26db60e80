// SPDX-License-Identifier: Apache-2.0
// kforge plan new | show | validate | export | import: plan files (docs/design/plan-format.md).
#include "commands.h"
#include "output.h"

#include <kforge/error.h>
#include <kforge/module_path.h>
#include <kforge/plan.h>

namespace kforge::cli {
namespace {

struct PlanCommandOptions {
    std::string out;
    ModelOptions model; // --model and --program: no forward runs
    std::vector<std::string> provides;
    std::string plan;
    std::vector<std::string> plans; // validate
    std::string file;
    std::string scope;
    std::string device = "cpu";
    bool aitune = false;
};

// "TorchSDPAKernelProvider backend=MATH": the type, then its settings as key=value.
std::string providerText(const nlohmann::ordered_json& provider)
{
    if (!provider.is_object())
        return provider.dump();
    std::string text = provider.value("type", std::string("(no type)"));
    for (const auto& [key, value] : provider.items())
        if (key != "type")
            text += " " + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
    return text;
}

bool providerAvailable(const PlanEntry& entry)
{
    return !entry.providerType().empty() && !functionOfProviderType(entry.providerType()).empty() &&
           !isKnownAituneOnlyType(entry.providerType());
}

std::string problemLine(const std::string& planPath, const PlanProblem& p)
{
    return planPath + ": " + (p.entry >= 0 ? "entry " + std::to_string(p.entry) + " " : "") + "at " + p.jsonPath +
           ": " + p.kind + ": " + p.message + "; fix: " + p.fix;
}

void runNew(const PlanCommandOptions& o, Report& report)
{
    Plan plan;
    for (const auto& spec : o.provides)
        plan.entries.push_back(parseProvideSpec(spec));
    if (!o.model.source.empty()) {
        auto session = openModel(o.model, report);
        stampModel(plan, *session);
        // The plan is written anyway (it may be meant for another device or a later model); problems are warned.
        for (const auto& p : validatePlan(plan, *session))
            report.warn(problemLine(o.out, p));
    }
    stampProvenance(plan, o.device, "kforge plan new");
    savePlan(plan, o.out);
    report.text << "wrote " << o.out << ": " << plan.entries.size() << " entr"
                << (plan.entries.size() == 1 ? "y" : "ies") << (plan.modelName.empty() ? "" : " for " + plan.modelName)
                << '\n';
}

void runShow(const PlanCommandOptions& o, Report& report)
{
    const Plan plan = readPlan(o.plan);
    report.json = plan; // in the kforge dialect
    size_t disabled = 0, unavailable = 0;
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < plan.entries.size(); ++i) {
        const PlanEntry& e = plan.entries[i];
        disabled += !e.enabled;
        const bool available = providerAvailable(e);
        unavailable += !available;
        rows.push_back({std::to_string(i), e.enabled ? "yes" : "no", module_path::displayName(e.scope), e.function,
                        providerText(e.provider) + (available ? "" : " [unavailable]"), e.note});
    }
    report.text << "plan " << o.plan << ": "
                << (plan.dialect == PlanDialect::Aitune ? std::string("AITune dialect")
                                                        : "kforge dialect version " + std::to_string(plan.version))
                << (plan.modelName.empty() ? "" : ", model " + plan.modelName) << ", " << plan.entries.size()
                << " entries (" << disabled << " disabled, " << unavailable << " unavailable)\n";
    report.text << formatTable({"#", "ENABLED", "SCOPE", "FUNCTION", "PROVIDER", "NOTE"}, rows);
}

// One plan file against the session (opened on first use: a plan that does not even read needs no model).
// Its problems go into `json` and the report's text; true when it is valid.
bool validateOne(const PlanCommandOptions& o, const std::string& path, std::unique_ptr<ModelSession>& session,
                 nlohmann::ordered_json& json, Report& report)
{
    Plan plan;
    try {
        plan = readPlan(path);
    } catch (const Error& e) {
        // A plan that does not parse is invalid: reported like the other problems.
        json = {{"plan", path},
                {"valid", false},
                {"problems",
                 {{{"entry", -1},
                   {"path", ""},
                   {"kind", "unreadable"},
                   {"message", e.why()},
                   {"fix", "correct the file"}}}}};
        report.text << path << ": unreadable: " << e.why() << "; fix: correct the file\n";
        return false;
    }
    if (!session)
        session = openModel(o.model, report);
    const auto problems = validatePlan(plan, *session, o.device);
    json = {{"plan", path},
            {"model", session->displayName()},
            {"device", o.device},
            {"entries", plan.entries.size()},
            {"valid", problems.empty()},
            {"problems", nlohmann::ordered_json::array()}};
    for (const auto& p : problems)
        json["problems"].push_back(
            {{"entry", p.entry}, {"path", p.jsonPath}, {"kind", p.kind}, {"message", p.message}, {"fix", p.fix}});
    if (problems.empty()) {
        report.text << path << ": valid for " << session->displayName() << " on " << o.device << " ("
                    << plan.entries.size() << " entries)\n";
    } else {
        for (const auto& p : problems)
            report.text << problemLine(path, p) << '\n';
        report.diagnostic(path + ": " + std::to_string(problems.size()) + " problem" +
                          (problems.size() == 1 ? "" : "s"));
    }
    return problems.empty();
}

// Exit 1 when any plan is invalid. JSON: one object for one plan, an array of them for several.
void runValidate(const PlanCommandOptions& o, Report& report)
{
    std::unique_ptr<ModelSession> session;
    nlohmann::ordered_json reports = nlohmann::ordered_json::array();
    bool allValid = true;
    for (const auto& path : o.plans) {
        nlohmann::ordered_json one;
        allValid &= validateOne(o, path, session, one, report);
        reports.push_back(std::move(one));
    }
    report.json = reports.size() == 1 ? reports[0] : reports;
    report.exitCode = allValid ? 0 : 1;
}

void runExport(const PlanCommandOptions& o, Report& report)
{
    const std::string text = exportAitune(readPlan(o.plan));
    if (o.out.empty()) {
        report.text << text;
        return;
    }
    writeFileAtomically(o.out, text);
    report.text << "wrote " << o.out << " (AITune dialect)\n";
}

void runImport(const PlanCommandOptions& o, Report& report)
{
    const Plan plan = readAitunePlan(o.file, o.scope);
    savePlan(plan, o.out);
    report.text << "imported " << plan.entries.size() << " provider" << (plan.entries.size() == 1 ? "" : "s")
                << " from " << o.file << " into " << o.out << (o.scope.empty() ? "" : " (scope '" + o.scope + "')")
                << '\n';
    for (size_t i = 0; i < plan.entries.size(); ++i)
        if (!providerAvailable(plan.entries[i]))
            report.text << "  entry " << i << ": '" << plan.entries[i].providerType()
                        << "' has no implementation in this build: kept, unavailable\n";
}

} // namespace

Command addPlanCommand(CLI::App& app)
{
    auto o = std::make_shared<PlanCommandOptions>();
    auto* cmd = app.add_subcommand("plan", "Create, show, validate, export and import plan files");
    cmd->require_subcommand(1);

    auto* create = cmd->add_subcommand("new", "Write a new plan (kforge dialect)");
    create->add_option("OUT,-o,--out", o->out, "plan file to write, e.g. my.kfplan.json")->required();
    create->add_option("--model", o->model.source,
                       "model the plan is for (TorchScript file, .pt2 package or builtin:NAME)");
    addProgramOption(create, o->model.open);
    create->add_option("--provide", o->provides, "SCOPE:FUNCTION:PROVIDER[:{json settings}] entry, in plan order");
    create->add_option("--device", o->device, "the device the plan is meant for, recorded in its provenance")
        ->check(CLI::IsMember({"cpu", "cuda"}))
        ->capture_default_str();

    auto* show = cmd->add_subcommand("show", "Print a plan's entries (either dialect)");
    show->add_option("PLAN", o->plan, "plan file")->required();
    addJsonFlag(show, "the plan in the kforge dialect");

    auto* validate = cmd->add_subcommand("validate", "Check a plan against a model: every problem, with a fix");
    validate->add_option("PLAN", o->plans, "plan file(s), each checked on its own")->required();
    validate->add_option("--model", o->model.source, "TorchScript file, torch.export package (.pt2) or builtin:NAME")
        ->required();
    addProgramOption(validate, o->model.open);
    addDeviceOption(validate, o->device, "device the plan will run on");
    addJsonFlag(validate);

    auto* exporter = cmd->add_subcommand("export", "Write a plan in another dialect");
    exporter->add_option("PLAN", o->plan, "plan file")->required();
    exporter->add_flag("--aitune", o->aitune, "AITune's KernelOptimizationPlan.to_dict() form")->required();
    exporter->add_option("-o,--out", o->out, "file to write (default: stdout)");

    auto* importer = cmd->add_subcommand("import", "Read an AITune plan into a kforge plan");
    importer->add_option("FILE", o->file, "AITune plan ({\"providers\": [...]})")->required();
    importer->add_option("-o,--out", o->out, "kforge plan to write")->required();
    importer->add_option("--scope", o->scope, "module path the providers apply to (default: the root)");

    return {cmd, [o, create, show, validate, exporter, importer](Report& report) {
                if (create->parsed())
                    runNew(*o, report);
                else if (show->parsed())
                    runShow(*o, report);
                else if (validate->parsed())
                    runValidate(*o, report);
                else if (exporter->parsed())
                    runExport(*o, report);
                else if (importer->parsed())
                    runImport(*o, report);
            }};
}

} // namespace kforge::cli
