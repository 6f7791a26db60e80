// SPDX-License-Identifier: Apache-2.0
#pragma once
// TestWorkspaceGeluProvider: a gelu provider whose memory is known by construction, for the memory tests of the
// engine (test_helpers.cpp) and of the GUI (the test_providers plugin). Every call allocates a workspace of
// `workspaceBytes` and frees it, beside a copy of its first call's output that it returns (a lookup, right on a model
// calling gelu on one tensor): after its first call, exactly the workspace and one output live at once in each call.
#include <kforge/provider_sdk.h>

#include <ATen/ATen.h>

#include <cstdint>
#include <mutex>

namespace kforge::test {

class WorkspaceGeluProvider final : public KernelProvider {
public:
    explicit WorkspaceGeluProvider(std::int64_t workspaceBytes) : m_workspaceBytes(workspaceBytes) {}
    Function function() const override { return Function::Gelu; }
    std::string typeName() const override { return "TestWorkspaceGeluProvider"; }

protected:
    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        const auto args = parseGelu(stack);
        if (!args)
            return CallResult::decline("not gelu's normal form");
        const at::Tensor workspace = at::empty({m_workspaceBytes}, at::kByte);
        std::lock_guard lock(m_mutex);
        if (!m_output.defined()) {
            op.callBoxed(stack);
            m_output = stack.back().toTensor().clone();
            return CallResult::served();
        }
        torch::jit::drop(stack, GeluArgs::kArguments);
        torch::jit::push(stack, m_output.clone());
        return CallResult::served();
    }

private:
    const std::int64_t m_workspaceBytes;
    std::mutex m_mutex; // call() runs on many threads at once (provider_sdk.h)
    at::Tensor m_output;
};

} // namespace kforge::test
