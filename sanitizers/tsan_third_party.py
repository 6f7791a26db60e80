#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Sorts ThreadSanitizer reports (log_path files) into ours and third-party-only; exits 1 if any is ours.

LibTorch (the PyPI wheel), its libgomp, Qt and glibc are not instrumented. TSan sees their memory accesses
only through interceptors (memcpy, memset, malloc/free) and cannot see the futexes, OpenMP barriers and
reference counts that order them, so it reports races between two such accesses on either side of a hand-off
inside the library. A suppression cannot single those out: an uninstrumented frame also appears under every
callback into our code (each Qt slot, each provider called by the dispatcher), so `race:<library>` would hide
our races too, and called_from_lib drops the library's pthread synchronisation as well (false positives in
our code instead). This filter looks at who made each access: a data race whose every access was made by
one of these libraries (the first frame below TSan's own, looking through inline Qt and C++ library code),
or by Qt's QtConcurrent/QFuture header code handing a call to the pool, is third-party; anything else (one
access by our code, another kind of report, a stack TSan could not restore) counts.
"""
import pathlib
import re
import sys

# The libraries whose own accesses are ignored, and why (docs/quality.md, "Sanitizers").
THIRD_PARTY = {
    "libtorch_cpu.so": "ATen kernels on libgomp's team; TensorIterator on a worker's stack",
    "libtorch_cuda.so": "LibTorch, as above",
    "libtorch.so": "LibTorch, as above",
    "libc10.so": "c10's CPU allocator and tensor storage release",
    "libgomp.so.1": "OpenMP runtime of LibTorch: its barriers are futexes",
    "libQt6Core.so.6": "QThreadPool/QtConcurrent hand-offs and the posted-event queue (futex-based QMutex)",
    "libQt6Gui.so.6": "the raster engine's image-conversion thread pool",
    "libQt6Test.so.6": "QtTest's watchdog thread",
    "libc.so.6": "thread-exit TLS destructors (__call_tls_dtors) freeing LibTorch's thread-local objects",
}
# Qt's future/thread-pool plumbing is header code too (inlined into our binaries): QtConcurrent::run stores the
# call and its arguments, QFuture/QFutureInterface hold the result; QThreadPool hands them over under a QMutex.
QT_PLUMBING = re.compile(r"/qt6/(QtConcurrent/|QtCore/(qfuture|qpromise|qrunnable|qthreadpool))")
# Inline library code (Qt's and the C++ library's headers) acts for whoever called it.
PASS_THROUGH = re.compile(r"/qt6/|/usr/include/c\+\+/")
# A test binary's replacement operator new/delete (test_events_stepping.cpp counts allocations for R13) only
# forwards to malloc/free: it acts for whoever called it, as libc's would.
ALLOCATION_COUNTER = re.compile(r"^    #\d+ operator (?:new|delete)\(.*/tests/")
SECTION = re.compile(r"^  (?:Previous )?(?:[Aa]tomic )?(?:[Rr]ead|[Ww]rite) of size \d+ ")
FRAME = re.compile(r"^    #\d+ .*\(([^()+]+)\+0x[0-9a-f]+\)\s*$")


def made_by_third_party(lines):
    """Whether the access a stack shows was made by third-party code: the first frame below TSan's own is in
    one of the libraries, or in Qt's future/thread-pool headers, reached only through inline library code."""
    for line in lines:
        if not line.startswith("    #"):
            break
        if "libsanitizer/" in line or "(libtsan.so" in line:
            continue
        if QT_PLUMBING.search(line):
            return True
        m = FRAME.match(line)
        if m and pathlib.Path(m.group(1)).name in THIRD_PARTY:
            return True
        if PASS_THROUGH.search(line) or ALLOCATION_COUNTER.search(line):
            continue
        return False  # our code
    return False  # no stack: cannot tell


def third_party(report):
    lines = report.splitlines()
    if not any(l.startswith("WARNING: ThreadSanitizer: data race") for l in lines):
        return False
    stacks = [lines[i + 1:] for i, l in enumerate(lines) if SECTION.match(l)]
    return bool(stacks) and all(made_by_third_party(s) for s in stacks)


def main(log_dir):
    ours, theirs = [], 0
    for path in sorted(pathlib.Path(log_dir).glob("tsan.*")):
        for report in path.read_text(errors="replace").split("==================\n"):
            if "WARNING: ThreadSanitizer" not in report:
                continue
            if third_party(report):
                theirs += 1
            else:
                ours.append((path.name, report))
    for name, report in ours:
        print(f"== {name}\n{report}")
    print(f"tsan: {len(ours)} report(s) to fix, {theirs} between third-party accesses only (ignored)")
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
