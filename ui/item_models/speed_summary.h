// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Comparison tab's two lines about the whole forward: the profiled comparison's totals and the benchmark's.
// They never give two verdicts on one plan: when the benchmark measured the plan the comparison profiled, the
// verdict is the benchmark's (whole forwards without the profiler's cost) and the comparison's line keeps its times
// only; when they measured different plans, the older result says that it is of an earlier plan.
#include <kforge/benchmark.h>
#include <kforge/plan.h>
#include <kforge/profiling.h>

#include <QString>

namespace kforge::ui {

// Whether two plans run the same: their enabled entries, in order, with the same scope, function and provider
// settings (notes, measurements, provenance and disabled entries aside).
bool sameEnabledEntries(const kforge::Plan& a, const kforge::Plan& b);

enum class NewerResult { Comparison, Benchmark };

struct WholeForwardLines {
    QString comparison; // "" without a comparison
    QString benchmark;  // "" without a benchmark
};

// `comparedPlan`: the plan of the comparison's plan run; `benchmarkedPlan`: the plan the benchmark measured;
// `outputError`: the comparison's output error as the table words it.
WholeForwardLines wholeForwardLines(const kforge::Comparison* comparison, const kforge::Plan& comparedPlan,
                                    const kforge::BenchmarkResult* benchmark, const kforge::Plan& benchmarkedPlan,
                                    NewerResult newer, const QString& outputError);

} // namespace kforge::ui
