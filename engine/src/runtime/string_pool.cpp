// SPDX-License-Identifier: Apache-2.0
#include "runtime/string_pool.h"

#include <mutex>
#include <string>
#include <unordered_set>

namespace kforge::runtime {

const char* intern(std::string_view text)
{
    static std::mutex mutex;
    static auto* pool = new std::unordered_set<std::string>(); // leaked on purpose: outlives every thread
    std::lock_guard lock(mutex);
    return pool->emplace(text).first->c_str();
}

} // namespace kforge::runtime
