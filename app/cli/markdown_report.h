// SPDX-License-Identifier: Apache-2.0
#pragma once
// kforge report / diff --md: the shareable report's tables as GitHub-flavoured Markdown, for a pull-request comment:
// the summary line first, a heading per section, pipe tables with numbers right-aligned, no flame graph.
#include "shareable_report.h"

#include <ostream>
#include <string>

namespace kforge::cli {

// `text` safe in a pipe table's cell: | and ` escaped with a backslash, < > & as character references (GitHub would
// otherwise read "<lambda>" as a tag), line breaks as spaces.
std::string escapeMarkdown(const std::string& text);
void writeMarkdownReport(const ShareableReport& report, std::ostream& out);

} // namespace kforge::cli
