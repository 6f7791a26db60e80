// SPDX-License-Identifier: Apache-2.0
// Input layout: a header (CUPTI clock origin u64, host clock origin i64, profile start i64, flags u8: bit 0 =
// demangle), then records until the bytes run out: a selector byte picks the kind (kRecordKinds), the record's
// bytes follow at the current struct size (zero-filled when the input ends early); a kernel then takes a name
// length byte and the name (255 = no name). Pointer fields cannot come from bytes: `name` is pointed at a copy of
// the name, as CUPTI points it at its own string table. The kind field is overwritten with the chosen kind, so
// every record is one CUPTI itself could have written, with arbitrary field values.
#include "cupti_records_entry.h"

#include "fuzz_checks.h"

#include "profiling/cupti_records.h"
#include "profiling/kernel_attribution.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace kforge::fuzz {
namespace {

using namespace kforge::profiling;

struct RecordKind {
    CUpti_ActivityKind kind;
    std::size_t size;
};

const RecordKind kRecordKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, sizeof(KernelRecordStruct)},
    {CUPTI_ACTIVITY_KIND_KERNEL, sizeof(KernelRecordStruct)},
    {CUPTI_ACTIVITY_KIND_MEMCPY, sizeof(MemcpyRecordStruct)},
    {CUPTI_ACTIVITY_KIND_MEMSET, sizeof(MemsetRecordStruct)},
    {CUPTI_ACTIVITY_KIND_RUNTIME, sizeof(ApiRecordStruct)},
    {CUPTI_ACTIVITY_KIND_DRIVER, sizeof(ApiRecordStruct)},
    {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, sizeof(ExternalCorrelationRecordStruct)},
};

class ByteReader {
public:
    ByteReader(const std::uint8_t* data, std::size_t size) : m_data(data), m_size(size) {}
    bool atEnd() const { return m_pos >= m_size; }
    // Copies up to `n` bytes to `to`; the rest of `to` stays as it was (zero).
    void take(void* to, std::size_t n)
    {
        const std::size_t k = std::min(n, m_size - std::min(m_pos, m_size));
        if (k)
            std::memcpy(to, m_data + m_pos, k);
        m_pos += n;
    }
    template <typename T> T value()
    {
        T v{};
        take(&v, sizeof v);
        return v;
    }

private:
    const std::uint8_t* m_data;
    std::size_t m_size;
    std::size_t m_pos = 0;
};

// A completed activity buffer as CUPTI hands it over: 8-aligned, records at 8-aligned offsets.
struct ActivityBuffer {
    std::unique_ptr<std::uint8_t, void (*)(void*)> data{nullptr, std::free};
    std::size_t used = 0;
    std::vector<const void*> records;
    std::deque<std::string> names; // stable addresses for the kernels' name pointers
};

std::size_t alignedTo8(std::size_t n) { return (n + 7) / 8 * 8; }

ActivityBuffer layOut(ByteReader& in)
{
    constexpr std::size_t kMaxRecords = 512; // keeps each run short; libFuzzer inputs are small anyway
    std::vector<std::pair<const RecordKind*, std::size_t>> plan; // kind, offset
    ActivityBuffer buffer;
    std::vector<std::uint8_t> bytes;
    std::vector<std::pair<std::size_t, std::size_t>> kernelNames; // offset -> index in names, or SIZE_MAX
    while (!in.atEnd() && plan.size() < kMaxRecords) {
        const RecordKind& kind = kRecordKinds[in.value<std::uint8_t>() % std::size(kRecordKinds)];
        const std::size_t offset = alignedTo8(bytes.size());
        bytes.resize(offset + kind.size, 0);
        in.take(bytes.data() + offset, kind.size);
        reinterpret_cast<CUpti_Activity*>(bytes.data() + offset)->kind = kind.kind;
        if (kind.size == sizeof(KernelRecordStruct) &&
            (kind.kind == CUPTI_ACTIVITY_KIND_KERNEL || kind.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
            const std::uint8_t length = in.value<std::uint8_t>();
            std::size_t index = SIZE_MAX;
            if (length != 255) {
                std::string name(length, '\0');
                in.take(name.data(), length);
                buffer.names.emplace_back(name.c_str()); // up to the first NUL, as a C string reads
                index = buffer.names.size() - 1;
            }
            kernelNames.emplace_back(offset, index);
        }
        plan.emplace_back(&kind, offset);
    }
    buffer.used = bytes.size();
    buffer.data.reset(
        static_cast<std::uint8_t*>(std::aligned_alloc(8, alignedTo8(std::max<std::size_t>(1, buffer.used)))));
    if (buffer.used)
        std::memcpy(buffer.data.get(), bytes.data(), buffer.used);
    for (const auto& [offset, index] : kernelNames) {
        auto* kernel = reinterpret_cast<KernelRecordStruct*>(buffer.data.get() + offset);
        kernel->name = index == SIZE_MAX ? nullptr : buffer.names[index].c_str();
    }
    for (const auto& [kind, offset] : plan)
        buffer.records.push_back(buffer.data.get() + offset);
    return buffer;
}

// Host tables that know some of the ids the records carry, so that every attribution path is taken.
HostTables tablesFor(const ParsedActivities& parsed, const ClockOrigin& origin)
{
    HostTables tables;
    for (const ExternalCorrelation& e : parsed.externalCorrelations) {
        if (e.externalId % 3 == 0)
            continue; // an id no table knows
        if (e.kind == kExternalKindFunctionCall)
            tables.functionCalls[e.externalId] = {"blocks." + std::to_string(e.externalId % 4), "linear",
                                                  "aten::linear", "original"};
        else if (e.kind == kExternalKindModuleScope)
            tables.moduleScopes[e.externalId] = "blocks." + std::to_string(e.externalId % 4);
    }
    for (const KernelActivity& k : parsed.kernels)
        if (k.graphNodeId % 2 == 0)
            tables.graphNodes[k.graphNodeId] = {k.graphNodeId / 2, k.graphNodeId / 4};
    for (const ApiActivity& api : parsed.apis)
        if (tables.iterationStarts.size() < 4)
            tables.iterationStarts.emplace_back(cuptiToHostNs(api.start, origin), 0);
    std::sort(tables.iterationStarts.begin(), tables.iterationStarts.end());
    for (size_t i = 0; i < tables.iterationStarts.size(); ++i)
        tables.iterationStarts[i].second = int(i);
    return tables;
}

} // namespace

void fuzzCuptiRecords(const std::uint8_t* data, std::size_t size)
{
    ByteReader in(data, size);
    AttributionOptions options;
    options.origin.cuptiNs = in.value<std::uint64_t>();
    options.origin.hostNs = in.value<std::int64_t>();
    options.profileStartHostNs = in.value<std::int64_t>();
    options.demangle = (in.value<std::uint8_t>() & 1) != 0;
    ActivityBuffer buffer = layOut(in);

    ParsedActivities bySeam;
    parseRecords(buffer.records, bySeam);
    ParsedActivities byIterator;
    const BufferParseResult walked = parseBuffer(buffer.data.get(), buffer.used, byIterator);
    require(walked.ok && walked.records == buffer.records.size(),
            "the CUPTI iterator stopped early (status " + std::to_string(walked.status) + ")");
    require(byIterator.size() == bySeam.size() && byIterator.otherRecords == bySeam.otherRecords,
            "the iterator and the record seam parsed different records");

    const HostTables tables = tablesFor(bySeam, options.origin);
    AttributionStats stats;
    const std::vector<KernelRecord> records = attributeKernels(bySeam, tables, options, &stats);
    require(records.size() == bySeam.kernels.size() + bySeam.mems.size(), "a parsed record was not attributed");
    require(stats.withModule + stats.unattributed == records.size(), "attribution counts do not add up");
    const bool negativeSharedMemory = std::any_of(bySeam.kernels.begin(), bySeam.kernels.end(), [](const auto& k) {
        return k.staticSharedMemory < 0 || k.dynamicSharedMemory < 0;
    });
    for (const KernelRecord& r : records) {
        require(r.durationNs >= 0, "a record with a negative duration");
        require(r.sharedMemoryBytes >= 0 || negativeSharedMemory, "shared memory bytes overflowed");
    }

    const std::size_t parsed = bySeam.size();
    bySeam.append(std::move(byIterator));
    require(bySeam.size() == 2 * parsed, "append lost records");
}

} // namespace kforge::fuzz
