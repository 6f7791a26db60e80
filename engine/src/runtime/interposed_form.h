// SPDX-License-Identifier: Apache-2.0
#pragma once
// The interposer's kernel on one catalog overload at kModeKey (R1), boxed: what TorchScript, our .pt2 interpreter
// and NativeRT call. unboxed_forms.h puts a typed entry in front of it for C++ callers (at::relu, composite ops).
#include "runtime/mode_key.h"
#include "runtime/task_context.h"
#include "runtime/thread_state.h"

#include <kforge/functions.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <cstdint>

namespace kforge::runtime {

class InterposedForm final : public c10::OperatorKernel {
public:
    // `op`: the operator this kernel sits on; what the hot path needs of its schema is read here once.
    InterposedForm(const OpForm& form, const c10::OperatorHandle& op);

    void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack);

    // True when a call of this form has nothing for the runtime on this thread: no provider in effect for its
    // function, no observation, no unwind waiting. The original may then run straight away (below kModeKey, with
    // the key excluded), without boxing the call. Does what the boxed path does first (follows a forked task's
    // table, clears a key left on after a remote unwind), so the answer holds for this call. Inline: it is the
    // whole of the interposer's work on a C++ call that passes through; forced inline (GCC outlined it once the
    // typed entry grew, ~30 instructions per call) and given the caller's `thread`, looked up once per call.
    [[gnu::always_inline]] bool passesThrough(ThreadState& thread) const
    {
        if (!m_form.function) // a shared form: only its arguments say which function it is; opaque ones pass
            return m_form.kind == FormKind::Opaque;
        if (thread.guardDepth.load(std::memory_order_relaxed) == 0)
            followTask(thread);
        if (thread.observe || thread.hasPendingUnwinds() || thread.inEffect(*m_form.function))
            return false;
        if (!thread.anyInEffect())
            c10::impl::tls_set_dispatch_key_included(kModeKey, false); // left on after a remote unwind
        return true;
    }

private:
    // Whether a served call left what the op returns above `base`: as many values, a tensor where it returns one
    // (R16). The schema's answer, kept as a count and a mask: reading the schema per call cost ~60 instructions.
    bool returnsLookRight(const torch::jit::Stack& stack, size_t base) const;

    const OpForm& m_form;
    size_t m_arguments;            // the schema's argument count: the call's values on top of the stack
    size_t m_returns;              // the schema's return count
    std::uint64_t m_tensorReturns; // bit i: return i is a Tensor (ops return at most a handful)
};

} // namespace kforge::runtime
