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
#include <iostream>
#include <map>
#include <thread>

namespace kforge::cli {
namespace {

struct RunOptions {
    ModelOptions model;
    std::vector<std::string> provides;
    std::string planFile;
    int iterations = 1;
    int threads = 1;
    bool events = false;
    bool json = false;
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
    cmd->add_option("--provide", o->provides,
                    "SCOPE:FUNCTION:PROVIDER[:{json settings}] plan entry, e.g. "
                    "\"blocks.0:scaled_dot_product_attention:TorchSDPAKernelProvider\"");
    cmd->add_option("--plan", o->planFile,
                    "plan file (kforge or AITune dialect); its entries come first, --provide entries after them")
        ->type_name("FILE");
    cmd->add_option("--iterations", o->iterations, "forwards per thread")->check(CLI::Range(1, 1000000));
    cmd->add_option("--threads", o->threads, "threads running forwards concurrently")->check(CLI::Range(1, 256));
    cmd->add_flag("--keep-leftovers", o->model.open.keepLeftovers,
                  "leave patches of a failed forward in effect (debugging)");
    cmd->add_flag("--events", o->events, "print the runtime's event log");
    cmd->add_flag("--json", o->json, "JSON output");
    cmd->add_flag("--quiet,-q", o->quiet, "no progress on stderr");
    return {
        cmd, [o] {
            auto session = openModel(o->model);
            requireInputs(*session);
            const Plan plan = planFromOptions(o->planFile, o->provides);
            EventCollector collector;
            KernelProviderRuntime runtime(*session, plan);
            const auto warnings = warnPlan(plan, *session, session->device()); // entries that can never fire
            std::vector<TensorDigest> outputs;
            std::string error;
            bool stopped = false;
            {
                auto applied = runtime.applied();
                for (const auto& notice : runtimeNotices())
                    std::cerr << "kforge: note: " << notice << '\n';
                try {
                    InterruptGuard guard; // the first Ctrl+C stops after the current forwards
                    Progress progress(o->quiet, "run: ");
                    outputs = session->forwardMany(o->iterations, o->threads, progress.callback(0, "forward"));
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

            if (o->json) {
                nlohmann::ordered_json out{{"model", session->displayName()},
                                           {"inputs", session->describeInputs()},
                                           {"iterations", o->iterations},
                                           {"threads", o->threads},
                                           {"outputs", nlohmann::ordered_json::array()},
                                           {"calls", nlohmann::ordered_json::array()},
                                           {"leftovers", nlohmann::ordered_json::array()},
                                           {"events_dropped", collector.dropped()}};
                if (!error.empty()) // the shape of every --json error (main.cpp)
                    out["error"] = {{"message", error}, {"exit_code", 1}};
                out["stopped"] = stopped;
                out["warnings"] = nlohmann::ordered_json(warnings);
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
                std::cout << out.dump(2) << '\n';
            } else {
                std::string inputs;
                for (const auto& d : session->describeInputs())
                    inputs += (inputs.empty() ? "" : ", ") + d;
                std::cout << "model " << session->displayName() << "  inputs " << inputs << "  iterations "
                          << o->iterations << " x " << o->threads << " thread(s)"
                          << (stopped ? "  (stopped by Ctrl+C: partial result)" : "") << '\n';
                for (const auto& d : outputs)
                    std::cout << describe(d) << '\n';
                std::vector<std::vector<std::string>> rows;
                for (const auto& [key, n] : calls)
                    rows.push_back(
                        {key.function, key.provider + (key.declined.empty() ? "" : " (" + key.declined + ")"),
                         key.scope.empty() && key.provider == "original" ? "-" : module_path::displayName(key.scope),
                         withThousands(n)});
                std::cout << '\n' << formatTable({"FUNCTION", "SERVED BY", "SCOPE", "CALLS"}, rows);
                for (const auto& d : declines)
                    std::cout << describe(d) << '\n';
                std::cout << "\nleftovers: " << (leftovers.empty() ? "none" : "") << '\n';
                for (const auto& p : leftovers)
                    std::cout << "  " << describe(p) << '\n';
                if (collector.dropped())
                    std::cout << "events dropped: " << collector.dropped() << '\n';
                if (o->events) {
                    std::cout << "\nevents:\n";
                    for (const Event& e : collector.events())
                        std::cout << "  #" << e.sequence << " t" << e.thread << ' ' << eventKindName(e.kind) << ' '
                                  << (e.modulePath.empty() ? "" : "module=" + e.modulePath + ' ')
                                  << (e.function.empty() ? "" : "function=" + e.function + ' ')
                                  << (e.provider.empty() ? "" : "provider=" + e.provider + ' ')
                                  << (e.depth ? "depth=" + std::to_string(e.depth) + ' ' : "") << e.detail << '\n';
                }
            }
            if (!error.empty()) {
                std::cerr << "kforge: error: " << error << '\n';
                return 1;
            }
            return stopped ? kInterruptedExitCode : 0;
        }};
}

} // namespace kforge::cli
