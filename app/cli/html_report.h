// SPDX-License-Identifier: Apache-2.0
#pragma once
// kforge report / diff --html: one self-contained page (inline CSS and SVG; no script, no network) written as
// XHTML-compatible markup, every element closed and every attribute quoted, so that XML parsers read it as well as
// browsers do.
#include "shareable_report.h"

#include <ostream>
#include <string>

namespace kforge::cli {

// `text` with & < > " ' as character references: safe in element content and in quoted attributes.
std::string escapeHtml(const std::string& text);
void writeHtmlReport(const ShareableReport& report, std::ostream& out);

} // namespace kforge::cli
