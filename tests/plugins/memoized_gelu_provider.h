// SPDX-License-Identifier: Apache-2.0
#pragma once
// TestMemoizedGeluProvider: a gelu provider whose cost against ATen is known by construction, not by the kernels
// of the machine at hand, for the tests of make_plan and the GUI's Optimize. An input tensor it served before (the
// same tensor, unchanged) gets the stored output back: a lookup, far below ATen computing gelu on a tensor of more
// than a few thousand elements. Inputs with fewer than `fastNumel` elements cost a 50 ms sleep first, far above
// ATen's time for any of them. Always correct: what it returns is ATen's gelu of the input.
#include <kforge/provider_sdk.h>

#include <ATen/ATen.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace kforge::test {

class MemoizedGeluProvider final : public KernelProvider {
public:
    explicit MemoizedGeluProvider(std::int64_t fastNumel) : m_fastNumel(fastNumel) {}
    Function function() const override { return Function::Gelu; }
    std::string typeName() const override { return "TestMemoizedGeluProvider"; }

protected:
    CallResult run(const c10::OperatorHandle& op, torch::jit::Stack& stack) override
    {
        const auto args = parseGelu(stack); // gelu(Tensor self, *, str approximate='none')
        if (!args)
            return CallResult::decline("not gelu's normal form");
        const at::Tensor x = args->self;
        if (x.numel() < m_fastNumel)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        {
            std::lock_guard lock(m_mutex);
            for (const Memo& m : m_memos)
                if (m.input.is_same(x) && m.version == x._version()) {
                    torch::jit::drop(stack, GeluArgs::kArguments);
                    torch::jit::push(stack, m.output);
                    return CallResult::served();
                }
        }
        const std::int64_t version = x._version();
        op.callBoxed(stack);
        std::lock_guard lock(m_mutex);
        if (m_memos.size() < 64) // holding the input keeps its address from being reused by another tensor
            m_memos.push_back({x, version, stack.back().toTensor()});
        return CallResult::served();
    }

private:
    struct Memo {
        at::Tensor input;
        std::int64_t version;
        at::Tensor output;
    };
    const std::int64_t m_fastNumel;
    std::mutex m_mutex; // call() runs on many threads at once (provider_sdk.h)
    std::vector<Memo> m_memos;
};

} // namespace kforge::test
