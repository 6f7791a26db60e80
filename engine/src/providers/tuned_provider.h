// SPDX-License-Identifier: Apache-2.0
#pragma once
// The base of the built-in providers that take settings (Cpu*Provider's kernel set and threading, Cuda*Provider's
// launch settings, gelu's approximate, SDPA's backend), so that a provider file holds only eligibility and compute:
//
// - TunedProviderBase owns the settings: each provider declares its keys (declareSetting: how a value loads, how
//   it is written back), and the base runs the one loop over a plan's settings (an unknown key or a bad value is
//   a kforge::Error naming the provider, the key and the known ones), writes settings() and the display name
//   "Type(key=value, ...)" from them.
// - TunedProvider<Args> adds the call plumbing around a parsed argument struct (kforge/provider_args.h):
//   eligibility on samples, and at run time the decline (with the provider's reason) or the kernel's output.
#include <kforge/provider_sdk.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kforge::providers {

class TunedProviderBase : public KernelProvider {
public:
    TunedProviderBase() = default;
    TunedProviderBase(const TunedProviderBase&) = delete; // the declared settings point into this instance
    TunedProviderBase& operator=(const TunedProviderBase&) = delete;

    // "Type(key=value, ...)" over settings() other than "type" (JSON's key order); the type alone without any.
    std::string displayName() const override;
    // {"type": ..., and each declared setting that writes itself (one at its default may leave itself out)}.
    nlohmann::json settings() const override;

protected:
    struct Setting {
        std::string key;
        // Reads the value; throws kforge::Error(where, ...) naming the key and the value when it is bad.
        std::function<void(const std::string& where, const nlohmann::json& value)> load;
        // Adds the current value to settings, or nothing (a tuning setting at its default).
        std::function<void(nlohmann::json& settings)> save;
    };
    enum class Placement { Last, First }; // where a key goes in the "known: ..." list of the error message

    void declareSetting(Setting setting, Placement placement = Placement::Last);
    // "provider 'Type'": the `where` of the provider's errors.
    std::string where() const { return "provider '" + typeName() + "'"; }

    void loadSettings(const nlohmann::json& settings) final;
    // After every key loaded: checks that span settings (CUDA: block_threads against rows_per_block).
    virtual void validateSettings(const std::string& where) const {}

private:
    std::vector<Setting> m_settings;
};

// Args: a struct of kforge/provider_args.h (its kArguments is the normal form's argument count).
template <class Args> class TunedProvider : public TunedProviderBase {
protected:
    // The call's arguments when this provider's kernel computes them (normal form, dtypes, devices, shapes,
    // options); nullopt: not for this kernel.
    virtual std::optional<Args> accept(const torch::jit::Stack& stack) const = 0;
    // Why accept() refused the call at the top of `stack` (a string literal: CallResult::decline keeps it).
    virtual const char* declineReason(const torch::jit::Stack& stack) const = 0;
    // Checked at run time only, after accept(): an accepted call whose inputs need an autograd graph the kernel
    // does not record is declined with this reason (nullptr: the provider has no such check, or put it in accept).
    virtual const char* needsGraph(const Args& args) const { return nullptr; }
    virtual at::Tensor compute(const Args& args) const = 0;

    bool supports(const torch::jit::Stack& sample) const override { return accept(sample).has_value(); }

    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        const size_t n = op.schema().arguments().size();
        if (n != Args::kArguments || stack.size() < n)
            return CallResult::decline("not this provider's op schema");
        const std::optional<Args> args = accept(stack);
        // Not ours: the runtime runs the original and reports the call as its.
        if (!args)
            return CallResult::decline(declineReason(stack));
        if (const char* reason = needsGraph(*args))
            return CallResult::decline(reason);
        at::Tensor out = compute(*args);
        torch::jit::drop(stack, n);
        torch::jit::push(stack, std::move(out));
        return CallResult::served();
    }
};

} // namespace kforge::providers
