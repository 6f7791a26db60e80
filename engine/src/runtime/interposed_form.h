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

namespace kforge::runtime {

class InterposedForm final : public c10::OperatorKernel {
public:
    explicit InterposedForm(const OpForm& form) : m_form(form) {}

    void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack);

    // True when a call of this form has nothing for the runtime on this thread: no provider in effect for its
    // function, no observation, no unwind waiting. The original may then run straight away (below kModeKey, with
    // the key excluded), without boxing the call. Does what the boxed path does first (follows a forked task's
    // table, clears a key left on after a remote unwind), so the answer holds for this call. Inline: it is the
    // whole of the interposer's work on a C++ call that passes through.
    bool passesThrough() const
    {
        if (!m_form.function) // a shared form: only its arguments say which function it is; opaque ones pass
            return m_form.kind == FormKind::Opaque;
        ThreadState& thread = ThreadState::current();
        if (thread.guardDepth.load(std::memory_order_relaxed) == 0)
            followTask(thread);
        if (thread.observe || thread.hasPendingUnwinds() || thread.inEffect(*m_form.function))
            return false;
        if (!thread.anyInEffect())
            c10::impl::tls_set_dispatch_key_included(kModeKey, false); // left on after a remote unwind
        return true;
    }

private:
    const OpForm& m_form;
};

} // namespace kforge::runtime
