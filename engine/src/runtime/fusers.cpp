// SPDX-License-Identifier: Apache-2.0
#include "runtime/fusers.h"

#include <torch/csrc/jit/codegen/fuser/interface.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <algorithm>
#include <array>
#include <mutex>

namespace kforge::runtime {
namespace {

std::mutex mutex;
int activePlans = 0;
bool savedTensorExpr = false;
bool savedCpu = false;
bool savedGpu = false;

bool isFusedGroup(const torch::jit::Node* node)
{
    static const std::array<c10::Symbol, 5> kinds{
        c10::Symbol::fromQualString("prim::TensorExprGroup"),
        c10::Symbol::fromQualString("prim::TensorExprDynamicGroup"),
        c10::Symbol::fromQualString("prim::FusionGroup"),
        c10::Symbol::fromQualString("prim::CudaFusionGroup"),
        c10::Symbol::fromQualString("prim::oneDNNFusionGroup"),
    };
    return std::find(kinds.begin(), kinds.end(), node->kind()) != kinds.end();
}

bool containsFusedGroup(const torch::jit::Block* block)
{
    for (const torch::jit::Node* node : block->nodes()) {
        if (isFusedGroup(node))
            return true;
        for (const torch::jit::Block* inner : node->blocks())
            if (containsFusedGroup(inner))
                return true;
    }
    return false;
}

// The executors of the methods a forward enters through; submodules' code is inlined into their plans.
template <typename Visit> void forEachExecutor(const torch::jit::Module& module, Visit&& visit)
{
    for (const torch::jit::Method& method : module.get_methods())
        visit(torch::jit::toGraphFunction(method.function()).get_executor());
}

bool planHasFusedGroup(torch::jit::GraphExecutor& executor)
{
    try {
        for (const auto& [spec, plan] : executor.getDebugState().execution_plans)
            if (plan.graph && containsFusedGroup(plan.graph->block()))
                return true;
    } catch (const c10::Error&) {
        // No optimised plan yet (the profiling executor asserts one): nothing fused.
    }
    return false;
}

} // namespace

bool Fusers::holdFusedGroups(const torch::jit::Module& module)
{
    bool fused = false;
    forEachExecutor(module, [&](torch::jit::GraphExecutor& executor) { fused = fused || planHasFusedGroup(executor); });
    return fused;
}

void Fusers::dropFusedPlans(const torch::jit::Module& module)
{
    forEachExecutor(module, [](torch::jit::GraphExecutor& executor) {
        if (planHasFusedGroup(executor))
            executor.debugFlushCompilationCache();
    });
}

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
