// SPDX-License-Identifier: Apache-2.0
// Launches of the NVRTC-compiled variants. Built without the CUDA toolkit, this file is empty.
#ifdef KFORGE_WITH_CUDA
#include "providers/cuda/tuned_kernels.h"

#include "providers/cuda/runtime_kernels.h"

#include <algorithm>
#include <climits>
#include <initializer_list>

namespace kforge::cuda_kernels {
namespace {

using i64 = long long; // the kernels' integer type (row_kernels_device.cuh)

const char* typeName(DType type)
{
    switch (type) {
    case DType::BFloat16:
        return "kforge_kernels::Bf16";
    case DType::Float16:
        return "kforge_kernels::Half";
    case DType::Float32:
        break;
    }
    return "float";
}

std::size_t elementBytes(DType type) { return type == DType::Float32 ? 4 : 2; }

struct Operand {
    const void* pointer;
    std::size_t elementBytes;
};

// The tuning's vector width (16 bytes of the widest operand when unset), halved until a pack is at most 32 bytes,
// divides the row (cols > 0) and every operand is aligned for it.
int vectorWidth(const Tuning& tuning, std::int64_t cols, std::initializer_list<Operand> operands)
{
    std::size_t widest = 1;
    for (const Operand& o : operands)
        widest = std::max(widest, o.elementBytes);
    int n = tuning.vectorWidth > 0 ? tuning.vectorWidth : int(16 / widest);
    const auto fits = [&](int width) {
        if (std::size_t(width) * widest > 32 || (cols > 0 && cols % width != 0))
            return false;
        for (const Operand& o : operands)
            if (o.pointer && reinterpret_cast<std::uintptr_t>(o.pointer) % (o.elementBytes * std::size_t(width)) != 0)
                return false;
        return true;
    };
    while (n > 1 && !fits(n))
        n /= 2;
    return std::max(n, 1);
}

// The row length to compile in: the call's when the tuning asks for it and it fits an int, else 0 (a parameter).
std::int64_t compiledCols(const Tuning& tuning, std::int64_t cols)
{
    return tuning.specializeCols && cols <= INT_MAX ? cols : 0;
}

std::string rowTail(int vector, int rowsPerBlock, std::int64_t cols, int blockBound)
{
    return std::to_string(vector) + ", " + std::to_string(std::max(rowsPerBlock, 1)) + ", " + std::to_string(cols) +
           ", " + std::to_string(blockBound) + ">";
}

cudaError_t launch(const std::string& kernelName, dim3 grid, dim3 block, std::size_t sharedBytes, void** args,
                   cudaStream_t stream)
{
    const cudaKernel_t kernel = runtimeKernel(kernelName);
    cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, args, sharedBytes, stream);
    return cudaGetLastError(); // and clears it: a refused launch must not fail the next CUDA call of ATen
}

cudaError_t unaryTuned(const void* x, void* y, std::int64_t n, DType type, const char* op, const Tuning& tuning,
                       cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    const int vector = vectorWidth(tuning, 0, {{x, elementBytes(type)}, {y, elementBytes(type)}});
    int sms = 0;
    if (const cudaError_t e = multiprocessorCount(sms); e != cudaSuccess)
        return e;
    const UnaryGeometry g = unaryGeometry(n / vector + n % vector, sms, tuning);
    const void* xp = x;
    void* yp = y;
    i64 count = n;
    bool vectorized = vector > 1;
    void* args[] = {&xp, &yp, &count, &vectorized};
    return launch(unaryKernelName(type, op, vector, unaryBlockBound(tuning)), g.grid, g.block, 0, args, stream);
}

} // namespace

std::string layerNormKernelName(DType type, DType paramType, int vector, int rowsPerBlock, std::int64_t cols,
                                int blockBound)
{
    return std::string("kforge_kernels::layerNormKernel<") + typeName(type) + ", " + typeName(paramType) + ", " +
           rowTail(vector, rowsPerBlock, cols, blockBound);
}

std::string rmsNormKernelName(DType type, int vector, int rowsPerBlock, std::int64_t cols, int blockBound)
{
    return std::string("kforge_kernels::rmsNormKernel<") + typeName(type) + ", " +
           rowTail(vector, rowsPerBlock, cols, blockBound);
}

std::string softmaxKernelName(DType inType, DType outType, int vector, int rowsPerBlock, std::int64_t cols,
                              int blockBound)
{
    return std::string("kforge_kernels::softmaxKernel<") + typeName(inType) + ", " + typeName(outType) + ", " +
           rowTail(vector, rowsPerBlock, cols, blockBound);
}

std::string unaryKernelName(DType type, const char* op, int vector, int blockBound)
{
    return std::string("kforge_kernels::unaryKernel<") + typeName(type) + ", kforge_kernels::" + op + ", " +
           std::to_string(vector) + ", " + std::to_string(blockBound) + ">";
}

cudaError_t layerNormTuned(const void* x, const void* weight, const void* bias, DType paramType, void* y,
                           std::int64_t rows, std::int64_t cols, float eps, DType type, const Tuning& tuning,
                           cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    if (paramType != type && paramType != DType::Float32)
        return cudaErrorInvalidValue;
    const int vector = vectorWidth(tuning, cols,
                                   {{x, elementBytes(type)},
                                    {y, elementBytes(type)},
                                    {weight, elementBytes(paramType)},
                                    {bias, elementBytes(paramType)}});
    const RowGeometry g = rowGeometry(rows, cols, vector, tuning);
    const std::string name = layerNormKernelName(type, paramType, vector, tuning.rowsPerBlock,
                                                 compiledCols(tuning, cols), rowBlockBound(tuning));
    const void *xp = x, *wp = weight, *bp = bias;
    void* yp = y;
    i64 rowCount = rows, colCount = cols;
    bool cached = g.cached;
    void* args[] = {&xp, &wp, &bp, &yp, &rowCount, &colCount, &eps, &cached};
    return launch(name, g.grid, g.block, g.sharedBytes, args, stream);
}

cudaError_t rmsNormTuned(const void* x, const void* weight, void* y, std::int64_t rows, std::int64_t cols, float eps,
                         DType type, const Tuning& tuning, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    const std::size_t bytes = elementBytes(type);
    const int vector = vectorWidth(tuning, cols, {{x, bytes}, {y, bytes}, {weight, bytes}});
    const RowGeometry g = rowGeometry(rows, cols, vector, tuning);
    const std::string name =
        rmsNormKernelName(type, vector, tuning.rowsPerBlock, compiledCols(tuning, cols), rowBlockBound(tuning));
    const void *xp = x, *wp = weight;
    void* yp = y;
    i64 rowCount = rows, colCount = cols;
    bool cached = g.cached;
    void* args[] = {&xp, &wp, &yp, &rowCount, &colCount, &eps, &cached};
    return launch(name, g.grid, g.block, g.sharedBytes, args, stream);
}

cudaError_t softmaxTuned(const void* x, void* y, std::int64_t rows, std::int64_t cols, DType inType, DType outType,
                         const Tuning& tuning, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    if (outType != inType && outType != DType::Float32)
        return cudaErrorInvalidValue;
    const int vector = vectorWidth(tuning, cols, {{x, elementBytes(inType)}, {y, elementBytes(outType)}});
    const RowGeometry g = rowGeometry(rows, cols, vector, tuning);
    const std::string name = softmaxKernelName(inType, outType, vector, tuning.rowsPerBlock, compiledCols(tuning, cols),
                                               rowBlockBound(tuning));
    const void* xp = x;
    void* yp = y;
    i64 rowCount = rows, colCount = cols;
    bool cached = g.cached;
    void* args[] = {&xp, &yp, &rowCount, &colCount, &cached};
    return launch(name, g.grid, g.block, g.sharedBytes, args, stream);
}

cudaError_t geluTuned(const void* x, void* y, std::int64_t n, GeluApproximation approximation, DType type,
                      const Tuning& tuning, cudaStream_t stream)
{
    return unaryTuned(x, y, n, type, approximation == GeluApproximation::Tanh ? "GeluTanh" : "GeluErf", tuning, stream);
}

cudaError_t siluTuned(const void* x, void* y, std::int64_t n, DType type, const Tuning& tuning, cudaStream_t stream)
{
    return unaryTuned(x, y, n, type, "Silu", tuning, stream);
}

} // namespace kforge::cuda_kernels
#endif
