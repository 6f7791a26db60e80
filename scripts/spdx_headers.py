#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every tracked source file starts with its SPDX licence line (after a #! line when it has one).

    scripts/spdx_headers.py          lists the files without one and fails
    scripts/spdx_headers.py --fix    adds the line where it is missing

scripts/check-format runs the check, so CI fails on a new file without it."""
import os
import subprocess
import sys

TAG = "SPDX-License-Identifier: Apache-2.0"

# Comment syntax per kind of source; files not matched here (data, JSON, Markdown, pictures) carry no header.
CPP = ("*.cpp", "*.h", "*.cu", "*.def", "*.h.in")
HASH = ("*.py", "*.sh", "*.cmake", "*.cmake.in", "CMakeLists.txt", "*/CMakeLists.txt", "scripts/*", ".ci/*",
        "packaging/gen-manpage", "packaging/kforge-launcher.in", "packaging/kforge-torch-setup.in",
        "packaging/kforge.conf.in")
TROFF = ("packaging/man/*.1.in",)


def tracked(patterns):
    out = subprocess.run(["git", "ls-files", "--", *patterns], capture_output=True, text=True, check=True).stdout
    return [f for f in out.splitlines() if os.path.isfile(f)]


def header_line(path):
    if any(path.endswith(p.lstrip("*")) for p in CPP):
        return "// " + TAG
    if path.endswith(".1.in"):
        return '.\\" ' + TAG
    return "# " + TAG


def missing(path):
    with open(path, encoding="utf-8") as f:
        head = [next(f, "") for _ in range(3)]
    return not any(TAG in line for line in head)


def add(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    line = header_line(path) + "\n"
    if text.startswith("#!"):
        end = text.index("\n") + 1
        text = text[:end] + line + text[end:]
    else:
        text = line + text
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    files = sorted(set(tracked(CPP) + tracked(HASH) + tracked(TROFF)))
    lacking = [f for f in files if missing(f)]
    if "--fix" in sys.argv[1:]:
        for f in lacking:
            add(f)
        print(f"spdx: added the licence line to {len(lacking)} of {len(files)} files")
        return 0
    if lacking:
        print("spdx: these files lack '" + TAG + "' in their first lines (scripts/spdx_headers.py --fix):",
              file=sys.stderr)
        print("\n".join(lacking), file=sys.stderr)
        return 1
    print(f"spdx: all {len(files)} source files carry the licence line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
