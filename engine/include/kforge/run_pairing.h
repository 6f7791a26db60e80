// SPDX-License-Identifier: Apache-2.0
#pragma once
// Two runs made apart, paired item by item for kforge diff (docs/profiling.md, "Two runs made apart"): modules by
// path, and where paths differ by structure (children aligned by type, in order, as AMD's TraceLens aligns them);
// records (ops, kernels) within the same module and function call, aligned in the order they ran with the fewest
// edits, so that differently named ops or kernels doing the same work at the same place pair up
// (aten::conv2d with aten::convolution, one kernel with another library's). What is left on both sides is then paired
// as a group under its lowest common module, as TraceLens groups kernels under their lowest common ancestor (a fused
// multi-head attention op in one run against the linears and attention of its decomposition in the other). Times are
// per forward.
#include <kforge/profiling.h>
#include <kforge/speed_verdict.h>

#include <string>
#include <vector>

namespace kforge {

struct ModuleMatch {
    std::string pathA, pathB;
    bool byStructure = false; // paths differ: matched by type and position under matched parents
};

struct RecordPair {
    std::string module;   // A's module path ("" the root)
    std::string function; // "" outside any function call
    std::string nameA, nameB;
    int ordinal = 0; // its place among the records of its module and function in a forward, from 0 (A's); -1: a group
    int opsA = 1, opsB = 1; // records on each side: more than one in a group paired under their common module
    double usA = 0, usB = 0;
    SpeedComparison speed; // B against A on the per-forward times (A the reference)
};

struct RunPairing {
    std::vector<ModuleMatch> modules; // every module of A matched in B, in A's order
    std::vector<std::string> modulesOnlyInA, modulesOnlyInB;
    std::vector<RecordPair> paired;  // by A's module, function and ordinal
    std::vector<RecordPair> onlyInA; // nameB empty, usB 0
    std::vector<RecordPair> onlyInB; // nameA empty, usA 0 (module: B's path where it has no match)
    double pairedShareA = 0;         // of A's record time per forward: the share of the records that paired
    double pairedShareB = 0;
    int renamed() const; // pairs whose names differ
};

RunPairing pairRuns(const ProfileRun& a, const ProfileRun& b, double maxDetectableChange = kDefaultMaxDetectableChange);

} // namespace kforge
