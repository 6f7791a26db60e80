#include "runtime/fusers.h"

#include <torch/csrc/jit/codegen/fuser/interface.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>

#include <mutex>

namespace kforge::runtime {
namespace {

std::mutex mutex;
int activePlans = 0;
bool savedTensorExpr = false;
bool savedCpu = false;
bool savedGpu = false;

} // namespace

void Fusers::disableWhilePlanActive()
{
    std::lock_guard lock(mutex);
    if (activePlans++ > 0)
        return;
    savedTensorExpr = torch::jit::tensorExprFuserEnabled();
    savedCpu = torch::jit::canFuseOnCPU();
    savedGpu = torch::jit::canFuseOnGPU();
    torch::jit::setTensorExprFuserEnabled(false);
    torch::jit::overrideCanFuseOnCPU(false);
    torch::jit::overrideCanFuseOnGPU(false);
}

void Fusers::restoreAfterPlan()
{
    std::lock_guard lock(mutex);
    if (activePlans == 0 || --activePlans > 0)
        return;
    torch::jit::setTensorExprFuserEnabled(savedTensorExpr);
    torch::jit::overrideCanFuseOnCPU(savedCpu);
    torch::jit::overrideCanFuseOnGPU(savedGpu);
}

bool Fusers::disabledForPlan()
{
    std::lock_guard lock(mutex);
    return activePlans > 0;
}

const char* Fusers::notice()
{
    return "fusers (TensorExpr/NNC) are off while a plan is active, so that fused ops stay interceptable";
}

} // namespace kforge::runtime
