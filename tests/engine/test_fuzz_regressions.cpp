// SPDX-License-Identifier: Apache-2.0
// Replays every input the fuzzers ever crashed on (tests/data/fuzz-regressions/TARGET) and every seed
// (fuzz/corpus/TARGET) through the fuzz targets' own entry code, without libFuzzer: each must return normally
// (bad input ends in kforge::Error inside the entry). A crash that comes back fails here, in the normal suite.
#include "build_path.h"
#include "input_spec_entry.h"
#include "kfprof_reader_entry.h"
#include "plan_reader_entry.h"
#ifdef KFORGE_WITH_CUPTI
#include "cupti_records_entry.h"
#endif

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Entry = void (*)(const std::uint8_t*, std::size_t);

std::vector<fs::path> inputsOf(const std::string& target)
{
    std::vector<fs::path> files;
    for (const fs::path& dir :
         {fs::path(KFORGE_FUZZ_DIR) / "corpus" / target, fs::path(KFORGE_TEST_DATA) / "fuzz-regressions" / target})
        if (fs::is_directory(dir))
            for (const auto& item : fs::directory_iterator(dir))
                if (item.is_regular_file())
                    files.push_back(item.path());
    return files;
}

void replay(const std::string& target, Entry entry)
{
    const std::vector<fs::path> files = inputsOf(target);
    ASSERT_FALSE(files.empty()) << "no seed corpus in fuzz/corpus/" << target;
    for (const fs::path& file : files) {
        SCOPED_TRACE(file.string());
        std::ifstream in(file, std::ios::binary);
        ASSERT_TRUE(in) << "cannot read " << file;
        const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        try {
            entry(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
        } catch (const std::exception& e) {
            ADD_FAILURE() << target << " escaped with: " << e.what();
        } catch (...) {
            ADD_FAILURE() << target << " escaped with an exception of unknown type";
        }
    }
}

} // namespace

TEST(FuzzRegressions, PlanReader) { replay("plan_reader", kforge::fuzz::fuzzPlanReader); }

TEST(FuzzRegressions, InputSpec) { replay("input_spec", kforge::fuzz::fuzzInputSpec); }

TEST(FuzzRegressions, KfprofReader) { replay("kfprof_reader", kforge::fuzz::fuzzKfprofReader); }

TEST(FuzzRegressions, CuptiRecords)
{
#ifdef KFORGE_WITH_CUPTI
    replay("cupti_records", kforge::fuzz::fuzzCuptiRecords);
#else
    GTEST_SKIP() << "this build has no CUPTI (configured without the CUDA toolkit): no records to lay out";
#endif
}
