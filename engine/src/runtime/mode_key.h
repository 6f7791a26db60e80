// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <c10/core/DispatchKey.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

namespace kforge::runtime {

// The one place the interposition key is chosen (docs/design/architecture.md, Mechanisms): the only functionality key
// near the top of the order that nothing in LibTorch claims. A start-up self-test (interposer.cpp) checks
// that it intercepts a probe op and that no foreign kernel sits on it.
inline constexpr c10::DispatchKey kModeKey = c10::DispatchKey::TESTING_ONLY_GenericMode;

// kModeKey excluded on this thread for a scope, exactly as c10::impl::ExcludeDispatchKeyGuard(kModeKey) does, but
// inline on LibTorch's thread-local key set: the guard's out-of-line constructor and destructor, each looking the
// thread-local up again, were a quarter of an interposed call's cost (bench_interposer --instructions). The
// interposer takes it around every original and provider it runs, so nested ops reach the real kernels.
class ModeKeyExcluded {
public:
    // `keys`: this thread's LibTorch key sets; the interposer passes ThreadState::dispatchKeys(), one load where
    // naming the thread-local costs a __tls_get_addr call.
    explicit ModeKeyExcluded(c10::impl::PODLocalDispatchKeySet& keys)
        : m_tls(&keys), m_added(c10::DispatchKeySet(kModeKey) - m_tls->excluded())
    {
        m_tls->set_excluded(m_tls->excluded() | m_added);
    }
    ModeKeyExcluded() : ModeKeyExcluded(c10::impl::raw_local_dispatch_key_set) {}
    ~ModeKeyExcluded() { m_tls->set_excluded(m_tls->excluded() - m_added); }
    ModeKeyExcluded(const ModeKeyExcluded&) = delete;
    ModeKeyExcluded& operator=(const ModeKeyExcluded&) = delete;

private:
    c10::impl::PODLocalDispatchKeySet* m_tls;
    c10::DispatchKeySet m_added; // empty when the key was excluded already: then nothing to undo
};

} // namespace kforge::runtime
