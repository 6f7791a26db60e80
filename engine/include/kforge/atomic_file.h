// SPDX-License-Identifier: Apache-2.0
#pragma once
// Atomic file writes (docs/design/plan-format.md, Saving): a temporary file in the same folder, written, flushed to
// disk, then renamed over the target. A failure at any step removes the temporary file and leaves the target as it was;
// it throws kforge::Error naming the file and the step. A symbolic link stays a link (its target is replaced) and a
// replaced file keeps its permissions.
#include <functional>
#include <iosfwd>
#include <string>

namespace kforge {

// `write` streams the content; a large result never has to fit in memory. An exception from `write` is
// rethrown after the temporary file is removed.
void writeFileStreaming(const std::string& path, const std::function<void(std::ostream&)>& write);
void writeFileAtomically(const std::string& path, const std::string& text);

} // namespace kforge
