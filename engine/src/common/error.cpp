// SPDX-License-Identifier: Apache-2.0
#include <kforge/error.h>

namespace kforge {

Error::Error(std::string where, std::string why)
    : std::runtime_error(where.empty() ? why : where + ": " + why), m_where(std::move(where)), m_why(std::move(why))
{
}

} // namespace kforge
