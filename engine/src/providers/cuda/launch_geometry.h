// SPDX-License-Identifier: Apache-2.0
#pragma once
// Grid, block and shared memory of the Cuda*Provider kernels (row_kernels_device.cuh), for the built-in variants
// (row_kernels.cu) and the tuned ones NVRTC compiles (tuned_kernels.cpp) alike. Plain host C++.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace kforge::cuda_kernels {

// The launch choices a tuned provider's settings make (the CUDA autotuner searches them). Zero: as the built-in
// variants choose.
struct Tuning {
    int blockThreads = 0;        // threads per block: a multiple of 32 up to 1024
    int vectorWidth = 0;         // elements per load and store (1, 2, 4, 8, 16; 16 bytes when 0)
    int rowsPerBlock = 1;        // row kernels: rows a block works on at once (blockThreads / rowsPerBlock >= 32)
    bool specializeCols = false; // row kernels: compile the row length into the kernel
    int blocksPerSm = 0;         // elementwise kernels: the grid's cap in blocks per multiprocessor (16 when 0)

    bool isDefault() const
    {
        return blockThreads == 0 && vectorWidth == 0 && rowsPerBlock == 1 && !specializeCols && blocksPerSm == 0;
    }
    bool operator==(const Tuning& o) const // nvcc compiles this header as C++17: no defaulted comparison
    {
        return blockThreads == o.blockThreads && vectorWidth == o.vectorWidth && rowsPerBlock == o.rowsPerBlock &&
               specializeCols == o.specializeCols && blocksPerSm == o.blocksPerSm;
    }
};

// A row cache beyond 32 KiB per block would cost occupancy more than the second read of global memory saves.
constexpr std::int64_t kMaxCachedBytes = 32 * 1024;
constexpr std::int64_t kMaxGridBlocks = std::int64_t(1) << 20;

struct RowGeometry {
    dim3 grid;
    dim3 block;
    std::size_t sharedBytes;
    bool cached;
};

// The threads of a block of the built-in variants at most (the kernels' launch bound B, row_kernels_device.cuh).
constexpr int kBuiltInRowThreads = 512;
constexpr int kBuiltInUnaryThreads = 256;

// The threads one row group of a block has at most when the tuning leaves the block size to the row length.
inline std::int64_t widestRowGroup(std::int64_t rowsPerBlock)
{
    return std::min<std::int64_t>(kBuiltInRowThreads, 1024 / rowsPerBlock / 32 * 32);
}

// The most threads a row kernel's block has under `tuning`: the launch bound its variant is compiled with.
inline int rowBlockBound(const Tuning& tuning)
{
    const std::int64_t r = std::max(tuning.rowsPerBlock, 1);
    return tuning.blockThreads > 0 ? tuning.blockThreads : int(widestRowGroup(r) * r);
}

// `vector` elements per load; one thread per load of a row (a whole number of warps, 32 to 512) unless the tuning
// fixes the block; R rows per block at once.
inline RowGeometry rowGeometry(std::int64_t rows, std::int64_t cols, int vector, const Tuning& tuning)
{
    const std::int64_t r = std::max(tuning.rowsPerBlock, 1);
    const std::int64_t chunks = cols / vector;
    const std::int64_t threads = tuning.blockThreads > 0
                                     ? tuning.blockThreads
                                     : std::clamp<std::int64_t>((chunks + 31) / 32 * 32, 32, widestRowGroup(r)) * r;
    const bool cached = r * cols * std::int64_t(sizeof(float)) <= kMaxCachedBytes;
    const std::int64_t blocks = std::min((rows + r - 1) / r, kMaxGridBlocks);
    return {dim3(unsigned(blocks)), dim3(unsigned(threads)), cached ? std::size_t(r * cols) * sizeof(float) : 0,
            cached};
}

struct UnaryGeometry {
    dim3 grid;
    dim3 block;
};

// `units` loads (packs, then the tail element by element) over a grid of at most blocksPerSm blocks per SM.
inline int unaryBlockBound(const Tuning& tuning)
{
    return tuning.blockThreads > 0 ? tuning.blockThreads : kBuiltInUnaryThreads;
}

inline UnaryGeometry unaryGeometry(std::int64_t units, int multiprocessors, const Tuning& tuning)
{
    const std::int64_t threads = unaryBlockBound(tuning);
    const std::int64_t perSm = tuning.blocksPerSm > 0 ? tuning.blocksPerSm : 16;
    const std::int64_t blocks = std::clamp<std::int64_t>((units + threads - 1) / threads, 1, multiprocessors * perSm);
    return {dim3(unsigned(blocks)), dim3(unsigned(threads))};
}

// The current device's SM count, asked once per device (so that nothing but launches happens on the stream path,
// CUDA graph capture included). Defined in row_kernels.cu.
cudaError_t multiprocessorCount(int& count);

} // namespace kforge::cuda_kernels
