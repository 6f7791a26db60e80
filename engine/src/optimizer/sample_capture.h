// SPDX-License-Identifier: Apache-2.0
#pragma once
// Records the arguments of intercepted calls during a forward (the optimizer's "observed samples"): one
// sample per distinct input signature, with how often each signature occurred. A forward observer
// (runtime/observer.h): the tasks its forwards fork are sampled too, by a companion per thread.
#include "runtime/observer.h"

#include <kforge/functions.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kforge::optimizer {

// A later call of a signature, kept for its values: a provider right on the first call can be wrong on others.
struct ValueSample {
    torch::jit::Stack args; // deep copies
    std::string scope;      // the module it was called in
    long call = 0;          // which call of the signature, from 1
};

// Later calls kept per signature: calls 2, 4, 8, ... (spread across the forward), the latest this many of them.
inline constexpr size_t kLaterValueSamples = 3;

struct ObservedSamples {
    std::vector<torch::jit::Stack> unique; // one per signature (its first call), deep copies
    std::vector<long> counts;              // calls per signature, parallel to `unique`
    // Per signature, its calls per module (the innermost instrumented module running when it was called; "" the
    // root): where per-scope plans place their entries.
    std::vector<std::map<std::string, long>> scopeCounts;
    std::vector<std::string> firstScopes;        // per signature, the module of its first call
    std::vector<std::vector<ValueSample>> later; // per signature, later calls kept for their values
};

// The calls a provider's correctness is checked on, for the signatures `wanted` accepts: each one's first call and its
// later kept calls made in a module `inScope` accepts, then edge values made from the first call (its first floating
// tensor negated, zeroed, times 8, and with a NaN and an Inf in it): what a provider is likely to get wrong and one
// call per shape never shows.
struct CheckSamples {
    std::vector<torch::jit::Stack> calls;
    int recorded = 0; // of `calls`, calls the model made
    int edges = 0;    // of `calls`, edge values
};
CheckSamples checkSamples(const ObservedSamples& observed, const std::function<bool(size_t)>& wanted,
                          const std::function<bool(const std::string&)>& inScope);

// The samples of one Variant form's op (FormKind::Variant): its own schema, as providers receive such calls.
struct VariantSamples {
    c10::OperatorHandle op;
    ObservedSamples samples;
};

class SampleCapture final : public runtime::ForwardObserver {
public:
    SampleCapture(); // starts capturing on this thread
    ~SampleCapture() override;
    SampleCapture(const SampleCapture&) = delete;
    SampleCapture& operator=(const SampleCapture&) = delete;
    void stop(); // no more samples; those taken stay
    // Read after the forwards (tasks still running may add to it otherwise).
    const ObservedSamples& samples(Function function) const { return m_store->samples[static_cast<int>(function)]; }
    // The calls of `function` that came in a Variant form, per op (by "name.overload"). Not in samples(): the optimizer
    // benchmarks the normal form only.
    const std::map<std::string, VariantSamples>& variantSamples(Function function) const
    {
        return m_store->variants[static_cast<int>(function)];
    }

    // runtime::ForwardObserver
    std::shared_ptr<runtime::ForwardObserver> companionFor(std::uint64_t thread) override;
    void moduleEnter(const char* path) override { m_modules.push_back(path); }
    void moduleExit(const char* path) override;
    void followModules(const std::vector<const char*>& modules) override { m_modules = modules; }
    bool wantsSamples() const override { return true; }
    void sample(Function function, const torch::jit::Stack& stack, size_t argumentCount) override;
    void sampleVariant(Function function, const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                       size_t argumentCount) override;

private:
    struct Store { // shared by the capture and its companions
        std::mutex mutex;
        std::array<ObservedSamples, kFunctionCount> samples;
        std::array<std::map<std::string, size_t>, kFunctionCount> index;
        std::array<std::map<std::string, VariantSamples>, kFunctionCount> variants;
        std::array<std::map<std::string, std::map<std::string, size_t>>, kFunctionCount> variantIndex; // by op
    };
    // Adds the call to `samples` (a new signature, or one more call of a known one), with the store's lock held.
    void add(ObservedSamples& samples, std::map<std::string, size_t>& index, const torch::jit::Stack& stack,
             size_t argumentCount) const;
    std::string currentScope() const;
    explicit SampleCapture(std::shared_ptr<Store> store); // a companion

    std::shared_ptr<Store> m_store;
    std::vector<const char*> m_modules; // entered on this thread and not yet exited, outermost first
    std::optional<runtime::ObserverScope> m_installed;
    std::mutex m_companionsMutex;
    std::map<std::uint64_t, std::shared_ptr<SampleCapture>> m_companions; // by thread
};

// "float32[1,16,256]": a sample's first tensor argument (how plans record the calls an entry was measured on).
std::string signatureOf(const torch::jit::Stack& sample);

// Each unique sample repeated count / gcd(all counts) times: the observed mix with few repetitions.
std::vector<const torch::jit::Stack*> benchmarkSamples(const ObservedSamples& samples);

} // namespace kforge::optimizer
