// SPDX-License-Identifier: Apache-2.0
// parallelFor: at::parallel_for's behaviour for the CPU providers, without -fopenmp (see cpu_kernels.h).
//
// LibTorch 2.11 is built with OpenMP (AT_PARALLEL_OPENMP) and at::parallel_for is a header template whose
// parallel path, at::internal::invoke_parallel, is a `#pragma omp parallel` region: in a translation unit
// compiled without -fopenmp (the engine's case) _OPENMP is undefined and at::parallel_for runs the whole range
// on the calling thread. We therefore make the call GCC emits for that pragma ourselves, GOMP_parallel, into
// the libgomp that libtorch_cpu already loaded (torch/lib/libgomp.so.1: the same threads and thread count,
// at::set_num_threads included), splitting the range as invoke_parallel does. The libgomp symbols are weak:
// if they are not there (a LibTorch built with another OpenMP runtime) we run serially. Compiled with
// -fopenmp, or against a LibTorch with native (non-OpenMP) parallelism, we simply call at::parallel_for.
#include "providers/cpu/cpu_kernels.h"

#include <ATen/Parallel.h>
#include <c10/util/ParallelGuard.h>

#include <algorithm>
#include <atomic>
#include <exception>

#if AT_PARALLEL_OPENMP && !defined(_OPENMP) && defined(__GNUC__) && defined(__linux__)
#define KFORGE_CPU_GOMP_SHIM 1
extern "C" {
// libgomp's ABI (stable since GCC 4.9): GOMP_parallel(fn, data, num_threads (0 = the ICV), flags).
void GOMP_parallel(void (*fn)(void*), void* data, unsigned numThreads, unsigned flags) __attribute__((weak));
int omp_get_num_threads() __attribute__((weak));
int omp_get_thread_num() __attribute__((weak));
}
#else
#define KFORGE_CPU_GOMP_SHIM 0
#endif

namespace kforge::providers::cpu {

#if KFORGE_CPU_GOMP_SHIM
namespace {

bool haveGomp() { return GOMP_parallel && omp_get_num_threads && omp_get_thread_num; }

struct Job {
    Job(std::int64_t b, std::int64_t e, std::int64_t g, c10::function_ref<void(std::int64_t, std::int64_t)> fn)
        : begin(b), end(e), grain(g), f(fn)
    {
    }
    std::int64_t begin, end, grain;
    c10::function_ref<void(std::int64_t, std::int64_t)> f;
    std::atomic_flag failed = ATOMIC_FLAG_INIT;
    std::exception_ptr error;
    // libgomp orders the team's start and end with futexes that ThreadSanitizer cannot see (it is not
    // instrumented). These state the same ordering in our code, one release/acquire pair per thread, so the
    // tsan build checks the kernels' own accesses instead of reporting every hand-off (docs/quality.md).
    std::atomic<bool> published{false};
    std::atomic<int> finished{0};
};

// Marks the end of one thread's part, whichever way it leaves worker().
struct Finished {
    Job& job;
    ~Finished() { job.finished.fetch_add(1, std::memory_order_release); }
};

std::int64_t divup(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The body of at::internal::invoke_parallel, run by every thread of the team.
void worker(void* data)
{
    Job& job = *static_cast<Job*>(data);
    Finished finished{job};
    (void)job.published.load(std::memory_order_acquire);
    std::int64_t threads = omp_get_num_threads();
    if (job.grain > 0)
        threads = std::min(threads, divup(job.end - job.begin, job.grain));
    const std::int64_t tid = omp_get_thread_num();
    const std::int64_t chunk = divup(job.end - job.begin, threads);
    const std::int64_t begin = job.begin + tid * chunk;
    if (begin >= job.end)
        return;
    try {
        at::internal::ThreadIdGuard tidGuard(static_cast<int>(tid));
        c10::ParallelGuard guard(true);
        job.f(begin, std::min(job.end, begin + chunk));
    } catch (...) {
        if (!job.failed.test_and_set())
            job.error = std::current_exception();
    }
}

} // namespace
#endif

void parallelFor(std::int64_t begin, std::int64_t end, std::int64_t grain,
                 c10::function_ref<void(std::int64_t, std::int64_t)> f)
{
    if (begin >= end)
        return;
#if KFORGE_CPU_GOMP_SHIM
    if (haveGomp()) {
        at::internal::lazy_init_num_threads();
        const std::int64_t n = end - begin;
        const int cap = tuning().maxThreads; // 0: the ICV, ATen's thread count
        if (n > grain && n > 1 && !at::in_parallel_region() && at::get_num_threads() > 1 && cap != 1) {
            Job job(begin, end, grain, f);
            job.published.store(true, std::memory_order_release);
            GOMP_parallel(&worker, &job, unsigned(cap > 0 ? std::min(cap, at::get_num_threads()) : 0), 0);
            (void)job.finished.load(std::memory_order_acquire);
            if (job.error)
                std::rethrow_exception(job.error);
            return;
        }
    }
    at::internal::ThreadIdGuard tidGuard(0);
    c10::ParallelGuard guard(true);
    f(begin, end);
#else
    at::parallel_for(begin, end, grain, [&](std::int64_t b, std::int64_t e) { f(b, e); });
#endif
}

namespace {
thread_local Tuning tlsTuning;
}

const Tuning& tuning() { return tlsTuning; }
TuningScope::TuningScope(const Tuning& tuning) : m_saved(tlsTuning) { tlsTuning = tuning; }
TuningScope::~TuningScope() { tlsTuning = m_saved; }

bool parallelForIsParallel()
{
#if KFORGE_CPU_GOMP_SHIM
    return haveGomp() && at::get_num_threads() > 1;
#elif defined(INTRA_OP_PARALLEL)
    return at::get_num_threads() > 1;
#else
    return false;
#endif
}

} // namespace kforge::providers::cpu
