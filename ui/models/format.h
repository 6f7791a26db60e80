#pragma once
#include <QString>

#include <cstdint>
#include <map>
#include <string>

namespace kforge::ui {

// One spelling of counts, sizes and function inventories for every view, so columns, tooltips and the
// status bar agree.
QString formatCount(std::int64_t count);                              // "1,234,567" in the user's locale
QString formatCompactCount(std::int64_t count);                       // "1.23 M", "842 k", "950"
QString formatBytes(std::int64_t bytes);                              // "4.88 MiB"
QString formatFunctions(const std::map<std::string, int>& functions); // "gelu×2, linear×4"

} // namespace kforge::ui
