// SPDX-License-Identifier: Apache-2.0
#include <kforge/plan_landing.h>

#include <kforge/error.h>
#include <kforge/model_session.h>

#include <exception>

namespace kforge {

std::vector<std::string> PlanNotes::lines() const
{
    std::vector<std::string> out;
    if (!cannotApply.empty())
        out.push_back(cannotApply);
    if (!otherModel.empty())
        out.push_back(otherModel);
    for (const PlanWarning& w : warnings)
        out.push_back(w.text());
    return out;
}

PlanNotes planNotes(const Plan& plan, const ModelSession& session, const std::string& device)
{
    PlanNotes notes;
    notes.cannotApply = session.planRefusal();
    notes.otherModel = otherModelOf(plan, session);
    try {
        notes.warnings = planWarnings(plan, session, device);
    } catch (const std::exception&) {
        // An unknown device: plan validation says so where the plan is edited or read.
    }
    return notes;
}

PlanLanding landPlan(ModelSession& session, Plan& plan, const PlanLandingOptions& options)
{
    if (options.device != "cpu" && session.device().rfind(options.device, 0) != 0)
        session.setDevice(options.device);
    if (plan.hasEnabledEntry())
        if (const std::string why = session.planRefusal(); !why.empty())
            throw Error(session.source(), why);
    PlanLanding landing;
    if (options.revalidate)
        landing.revalidation = revalidatePlan(session, plan, options.revalidation);
    landing.notes = planNotes(plan, session, session.device());
    return landing;
}

} // namespace kforge
