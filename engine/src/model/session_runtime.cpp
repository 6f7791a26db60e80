// SPDX-License-Identifier: Apache-2.0
// A runtime on a session: the runtime layer knows module directories, not sessions (architecture.md), so the
// constructor users call is defined here, in the layer that owns sessions.
#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/runtime.h>

#include "runtime/module_directory.h"

namespace kforge {
namespace {

// The session's module directory, for a plan that can apply to it: entries on compiled code are refused.
decltype(auto) directoryForPlan(ModelSession& session, const Plan& plan)
{
    if (plan.hasEnabledEntry())
        if (const std::string why = session.planRefusal(); !why.empty())
            throw Error(session.source(), why);
    return session.moduleDirectory();
}

} // namespace

KernelProviderRuntime::KernelProviderRuntime(ModelSession& session, Plan plan)
    : KernelProviderRuntime(directoryForPlan(session, plan), session.displayName(), std::move(plan))
{
}

} // namespace kforge
