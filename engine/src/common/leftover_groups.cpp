// SPDX-License-Identifier: Apache-2.0
#include <kforge/leftover_groups.h>

#include <map>
#include <string_view>
#include <tuple>

namespace kforge {

std::vector<LeftoverGroup> groupLeftovers(const std::vector<LeftoverPatch>& patches)
{
    // Views into `patches`, which outlive the map: no string is copied per patch.
    using Key = std::tuple<std::string_view, std::string_view, std::string_view, std::uint64_t, std::uint64_t, bool,
                           bool, std::string_view, std::string_view>;
    std::map<Key, std::size_t> groupOf;
    std::vector<LeftoverGroup> groups;
    for (const LeftoverPatch& p : patches) {
        const Key key{p.function, p.provider,    p.modulePath, p.thread, p.runtimeId,
                      p.unwound,  p.threadEnded, p.error,      p.capture};
        const auto [it, added] = groupOf.try_emplace(key, groups.size());
        if (added)
            groups.push_back({p, 0});
        ++groups[it->second].count;
    }
    return groups;
}

} // namespace kforge
