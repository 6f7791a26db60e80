// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a plan lands on a model, one way for every face (each CLI command that takes a plan, the desktop's plan
// editor and Re-validate): the session moves to the device the plan will run on, entries measured elsewhere are
// re-validated (revalidate.h: those that fail are disabled), and what the user should hear before it runs is
// gathered: a plan made for another model, entries that can never fire.
#include <kforge/plan.h>
#include <kforge/revalidate.h>

#include <optional>
#include <string>
#include <vector>

namespace kforge {

class ModelSession;

// What to tell the user about a plan before it runs on a session.
struct PlanNotes {
    std::string cannotApply;           // ModelSession::planRefusal(): "" when plans apply to the model
    std::string otherModel;            // otherModelOf(): "" when the plan is this model's or names none
    std::vector<PlanWarning> warnings; // planWarnings(): entries that can never fire
    // One line each: why the plan cannot apply, then the other model, then the warnings.
    std::vector<std::string> lines() const;
};
// The notes for `plan` on `session` running on `device` ("cpu", "cuda"); an unknown device leaves the warnings
// empty (validation reports it).
PlanNotes planNotes(const Plan& plan, const ModelSession& session, const std::string& device);

struct PlanLandingOptions {
    std::string device = "cpu"; // where the plan will run: the session moves there first (CUDA only)
    // A plan from a file (or one the user asked to check): re-validate the entries whose provenance differs here.
    bool revalidate = false;
    RevalidateOptions revalidation;
};

struct PlanLanding {
    std::optional<RevalidationReport> revalidation; // when re-validated
    PlanNotes notes;                                // about the plan as it will run (entries disabled above left out)
};

// Lands `plan` on `session`: device, re-validation (editing `plan`: failing entries disabled, with why), notes.
// Throws kforge::Error when the plan has enabled entries and no plan can apply to the model (planRefusal), and as
// revalidatePlan() does (a changed plugin not accepted).
PlanLanding landPlan(ModelSession& session, Plan& plan, const PlanLandingOptions& options);

} // namespace kforge
