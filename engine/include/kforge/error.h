// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <stdexcept>
#include <string>

namespace kforge {

// The one engine error type: where it happened (file, spec, entry, module path) and why.
// LibTorch's exceptions never cross the engine API; they are converted to this.
class Error : public std::runtime_error {
public:
    Error(std::string where, std::string why);

    const std::string& where() const noexcept { return m_where; }
    const std::string& why() const noexcept { return m_why; }

private:
    std::string m_where;
    std::string m_why;
};

} // namespace kforge
