// SPDX-License-Identifier: Apache-2.0
// A runtime on a session: the runtime layer knows module directories, not sessions (architecture.md), so the
// constructor users call is defined here, in the layer that owns sessions.
#include <kforge/model_session.h>
#include <kforge/runtime.h>

#include "runtime/module_directory.h"

namespace kforge {

KernelProviderRuntime::KernelProviderRuntime(ModelSession& session, Plan plan)
    : KernelProviderRuntime(session.moduleDirectory(), session.displayName(), std::move(plan))
{
}

} // namespace kforge
