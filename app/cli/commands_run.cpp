// SPDX-License-Identifier: Apache-2.0
// kforge run: forwards with a plan, an output digest, who served each function call, leftovers.
#include "commands.h"
#include "output.h"
#include "progress.h"

#include <kforge/error.h>
#include <kforge/events.h>
#include <kforge/module_path.h>
#include <kforge/runtime.h>

#include <atomic>
#include <ostream>
#include <map>
#include <thread>

namespace kforge::cli {
namespace {

struct RunOptions {
    ModelOptions model;
    PlanOptions plan;
    int iterations = 1;
    int concurrency = 1; // threads running forwards at once
    std::string device = "cpu";
    bool events = false;
    bool quiet = false;
};

// Drains the event stream while forwards run (as the GUI does), so a small buffer never loses counts.
class EventCollector {
public:
    EventCollector() : m_stream(EventStream::attach(1 << 16)), m_thread([this] { loop(); }) {}
    ~EventCollector() { stop(); }
    void stop()
    {
        if (m_thread.joinable()) {
            m_stop = true;
            m_thread.join();
            m_stream->drain(m_events);
        }
    }
    const std::vector<Event>& events() const { return m_events; }
    std::uint64_t dropped() const { return m_stream->dropped(); }

private:
    void loop()
    {
        while (!m_stop) {
            m_stream->drain(m_events);
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }
    std::shared_ptr<EventStream> m_stream;
    std::vector<Event> m_events;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

struct CallKey {
    std::string function, provider, scope;
    std::string declined; // "declined by P: why" when a provider declined and the original served the call
    auto operator<=>(const CallKey&) const = default;
};

} // namespace

Command addRunCommand(CLI::App& app)
{
    auto o = std::make_shared<RunOptions>();
    auto* cmd = app.add_subcommand("run", "Run forwards with providers in effect and report who served each call");
    addModelOptions(cmd, o->model);
    addPlanOptions(cmd, o->plan);
    cmd->add_option("--iterations", o->iterations, "forwards per thread")->check(CLI::Range(1, 1000000));
    cmd->add_option("--concurrency", o->concurrency,
                    "threads running forwards at once (R12), each --iterations forwards")
        ->check(CLI::Range(1, 256));
    addDeviceOption(cmd, o->device, "where the model runs");
    cmd->add_flag("--keep-leftovers", o->model.open.keepLeftovers,
                  "leave patches of a failed forward in effect (debugging)");
    cmd->add_flag("--events", o->events, "print the runtime's event log");
    addJsonFlag(cmd);
    addQuietFlag(cmd, o->quiet);
    return {
        cmd, [o](Report& report) {
            auto session = openModel(o->model, report);
            requireInputs(*session);
            if (session->device() != o->device)
                session->setDevice(o->device);
            Plan plan = o->plan.read();
            landPlan(report, plan, *session, session->device(), o->plan); // re-validated, never-fire warned
            EventCollector collector;
            KernelProviderRuntime runtime(*session, plan);
            std::vector<TensorDigest> outputs;
            std::string error;
            bool stopped = false;
            {
                auto applied = runtime.applied();
                for (const auto& notice : runtimeNotices())
                    report.diagnostic("note: " + notice);
                try {
                    InterruptGuard guard; // the first Ctrl+C stops after the current forwards
                    Progress progress(o->quiet, "run: ");
                    outputs = session->forwardMany(o->iterations, o->concurrency, progress.callback(0, "forward"));
                } catch (const Error& e) {
                    error = e.what();
                }
                stopped = interrupted();
                // leftovers must be read before applied() deactivates and unwinds them
            }
            const auto leftovers = runtime.leftoverReports();
            collector.stop();

            std::map<CallKey, long long> calls;
            for (const Event& e : collector.events())
                if (e.kind == EventKind::ProviderCall || e.kind == EventKind::OriginalCall)
                    ++calls[{e.function, e.provider, e.modulePath, e.kind == EventKind::OriginalCall ? e.detail : ""}];
            const auto declines = runtime.declines();

            {
                nlohmann::ordered_json& out = report.json;
                out = {{"model", session->displayName()},
                       {"inputs", session->describeInputs()},
                       {"iterations", o->iterations},
                       {"concurrency", o->concurrency},
                       {"intra_op_threads", intraOpThreadCount()},
                       {"device", session->device()},
                       {"outputs", nlohmann::ordered_json::array()},
                       {"calls", nlohmann::ordered_json::array()},
                       {"leftovers", nlohmann::ordered_json::array()},
                       {"events_dropped", collector.dropped()}};
                if (!error.empty()) // the shape of every --json error (main.cpp)
                    out["error"] = {{"message", error}, {"exit_code", 1}};
                out["stopped"] = stopped;
                for (const auto& d : outputs)
                    out["outputs"].push_back(nlohmann::ordered_json(d));
                for (const auto& [key, n] : calls) {
                    out["calls"].push_back(
                        {{"function", key.function}, {"provider", key.provider}, {"scope", key.scope}, {"calls", n}});
                    if (!key.declined.empty())
                        out["calls"].back()["declined"] = key.declined;
                }
                out["declines"] = nlohmann::ordered_json::array();
                for (const auto& d : declines)
                    out["declines"].push_back(nlohmann::ordered_json(d));
                for (const auto& p : leftovers)
                    out["leftovers"].push_back(nlohmann::ordered_json(p));
                if (o->events) {
                    out["events"] = nlohmann::ordered_json::array();
                    for (const Event& e : collector.events())
                        out["events"].push_back({{"seq", e.sequence},
                                                 {"time_ns", e.timeNs},
                                                 {"thread", e.thread},
                                                 {"kind", std::string(eventKindName(e.kind))},
                                                 {"module", e.modulePath},
                                                 {"function", e.function},
                                                 {"provider", e.provider},
                                                 {"depth", e.depth},
                                                 {"detail", e.detail}});
                }
            }
            {
                std::ostream& out = report.text;
                std::string inputs;
                for (const auto& d : session->describeInputs())
                    inputs += (inputs.empty() ? "" : ", ") + d;
                out << "model " << session->displayName() << "  inputs " << inputs << "  iterations " << o->iterations
                    << " x " << o->concurrency << " thread(s)"
                    << (stopped ? "  (stopped by Ctrl+C: partial result)" : "") << '\n';
                for (const auto& d : outputs)
                    out << describe(d) << '\n';
                std::vector<std::vector<std::string>> rows;
                for (const auto& [key, n] : calls)
                    rows.push_back(
                        {key.function, key.provider + (key.declined.empty() ? "" : " (" + key.declined + ")"),
                         key.scope.empty() && key.provider == "original" ? "-" : module_path::displayName(key.scope),
                         withThousands(n)});
                out << '\n' << formatTable({"FUNCTION", "SERVED BY", "SCOPE", "CALLS"}, rows);
                for (const auto& d : declines)
                    out << describe(d) << '\n';
                out << "\nleftovers: " << (leftovers.empty() ? "none" : "") << '\n';
                for (const auto& group : groupLeftovers(leftovers))
                    out << "  " << describe(group) << '\n';
                if (collector.dropped())
                    out << "events dropped: " << collector.dropped() << '\n';
                if (o->events) {
                    out << "\nevents:\n";
                    for (const Event& e : collector.events())
                        out << "  #" << e.sequence << " t" << e.thread << ' ' << eventKindName(e.kind) << ' '
                            << (e.modulePath.empty() ? "" : "module=" + e.modulePath + ' ')
                            << (e.function.empty() ? "" : "function=" + e.function + ' ')
                            << (e.provider.empty() ? "" : "provider=" + e.provider + ' ')
                            << (e.depth ? "depth=" + std::to_string(e.depth) + ' ' : "") << e.detail << '\n';
                }
            }
            if (!error.empty()) {
                report.diagnostic("error: " + error);
                report.exitCode = 1;
                return;
            }
            report.exitCode = stopped ? kInterruptedExitCode : 0;
        }};
}

} // namespace kforge::cli
