#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""No literal colour in the Qt layer: every colour comes from the palette through ui/item_models/semantic_colors.cpp
(light and dark themes both read). Fails listing each QColor(r, g, b), named Qt colour, "#rrggbb",
QColor::fromRgb/Hsl/Hsv or style sheet found in ui/ and app/studio/ outside that file.

  no_literal_colours.py SOURCE_ROOT"""
import os
import re
import sys

PATTERN = re.compile(
    r'QColor\(\s*("|[0-9])'
    r'|Qt::(red|green|blue|yellow|cyan|magenta|gray|grey|darkRed|darkGreen|darkBlue|darkYellow|darkCyan|darkMagenta'
    r'|darkGray|lightGray|black|white)\b'
    r'|"#[0-9a-fA-F]{3,8}"'
    r'|setStyleSheet\('
    r'|QColor::from(Rgb|Hsl|Hsv)')
ALLOWED = {os.path.join("ui", "item_models", "semantic_colors.cpp")}


def main() -> int:
    root = sys.argv[1]
    found = []
    for top in ("ui", os.path.join("app", "studio")):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".h")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root)
                if rel in ALLOWED:
                    continue
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        if PATTERN.search(line) and not line.lstrip().startswith("//"):
                            found.append(f"{rel}:{number}: {line.strip()}")
    if found:
        print("literal colours (use ui/item_models/semantic_colors.h):\n" + "\n".join(found))
        return 1
    print("no literal colour in ui/ and app/studio/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
