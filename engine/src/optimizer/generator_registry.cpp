// SPDX-License-Identifier: Apache-2.0
#include <kforge/error.h>
#include <kforge/generator_sdk.h>

#include "optimizer/cpu_autotuner.h"
#include "optimizer/cuda_autotuner.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace kforge {

struct GeneratorRegistry::State {
    mutable std::mutex mutex;
    std::map<std::string, KernelGeneratorInfo> generators;
};

GeneratorRegistry::GeneratorRegistry() : m_state(std::make_shared<State>()) {}

GeneratorRegistry& GeneratorRegistry::instance()
{
    static GeneratorRegistry* registry = [] {
        auto* r = new GeneratorRegistry();
        optimizer::registerCpuAutotuner(*r);
        optimizer::registerCudaAutotuner(*r);
        return r;
    }();
    return *registry;
}

void GeneratorRegistry::add(KernelGeneratorInfo info)
{
    std::lock_guard lock(m_state->mutex);
    if (m_state->generators.count(info.name))
        throw Error("generator '" + info.name + "'", "a generator of that name is already registered");
    const std::string name = info.name;
    m_state->generators.emplace(name, std::move(info));
}

std::vector<KernelGeneratorInfo> GeneratorRegistry::list() const
{
    std::lock_guard lock(m_state->mutex);
    std::vector<KernelGeneratorInfo> out;
    for (const auto& [_, info] : m_state->generators)
        out.push_back(info);
    return out;
}

const KernelGeneratorInfo* GeneratorRegistry::find(const std::string& name) const
{
    std::lock_guard lock(m_state->mutex);
    const auto it = m_state->generators.find(name);
    return it == m_state->generators.end() ? nullptr : &it->second;
}

bool GeneratorRegistry::remove(const std::string& name)
{
    std::lock_guard lock(m_state->mutex);
    return m_state->generators.erase(name) > 0;
}

} // namespace kforge
