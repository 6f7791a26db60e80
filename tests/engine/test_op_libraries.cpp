// SPDX-License-Identifier: Apache-2.0
// Op libraries (kforge/op_libraries.h): a model calling a custom op names the op and how to load it, and opens, runs
// and profiles once its library is loaded (tests/plugins/custom_ops.cpp; tests/data/models/make_custom_op.py).
#include <kforge/error.h>
#include <kforge/model_session.h>
#include <kforge/op_libraries.h>
#include <kforge/profiling.h>

#include "build_path.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

using namespace kforge;

namespace {

const std::string kCustomOpModel = std::string(KFORGE_TEST_DATA) + "/models/custom_op.script.pt";

} // namespace

// One test, in order: the library loads once per process, and the first step needs it not loaded yet.
TEST(OpLibraries, AModelCallingACustomOpOpensOnceItsLibraryIsLoaded)
{
    // Without the library: the op and the way to load it, not "not a loadable TorchScript archive ()".
    const std::string refused = test::errorOf([] { ModelSession::open(kCustomOpModel); });
    EXPECT_NE(refused.find("custom op 'kforge_test::scale'"), std::string::npos) << refused;
    EXPECT_NE(refused.find("--ops-library"), std::string::npos) << refused;
    EXPECT_NE(refused.find("TORCH_LIBRARY(kforge_test"), std::string::npos) << refused;

    const OpLibraryInfo info = loadOpLibrary(KFORGE_TEST_CUSTOM_OPS);
    EXPECT_EQ(info.ops, std::vector<std::string>{"kforge_test::scale"});
    EXPECT_EQ(loadOpLibrary(KFORGE_TEST_CUSTOM_OPS).ops, info.ops) << "a second load returns the first's";
    ASSERT_EQ(loadedOpLibraries().size(), 1u);

    auto session = ModelSession::open(kCustomOpModel);
    session->setInputSpecs({"float32[2,8]"});
    EXPECT_EQ(session->forward().at(0).shape, (std::vector<int64_t>{2, 8}));
    ProfileOptions options;
    options.warmupIterations = 0;
    options.iterations = 1;
    const ProfileRun run = profile(*session, options);
    EXPECT_TRUE(std::any_of(run.records.begin(), run.records.end(), [](const KernelRecord& r) {
        return r.name == "kforge_test::scale";
    })) << "the custom op is an op of the profile";
}

// Two builds of one library (one TORCH_LIBRARY namespace): the second is refused with LibTorch's reason and the
// library that holds the namespace, and the process goes on (it ended in std::terminate, exit 134). Runs after the
// test above has loaded the first build.
TEST(OpLibraries, ASecondBuildOfALoadedLibraryIsRefusedNotAnAbort)
{
    loadOpLibrary(KFORGE_TEST_CUSTOM_OPS);
    const std::string refused = test::errorOf([] { loadOpLibrary(KFORGE_TEST_CUSTOM_OPS_REBUILT); });
    EXPECT_NE(refused.find("refused"), std::string::npos) << refused;
    EXPECT_NE(refused.find("TORCH_LIBRARY"), std::string::npos) << refused;
    EXPECT_NE(refused.find("kforge_test_custom_ops"), std::string::npos) << "names the library holding it: " << refused;
    EXPECT_EQ(loadedOpLibraries().size(), 1u);
    auto session = ModelSession::open(kCustomOpModel); // the first build still serves the model
    session->setInputSpecs({"float32[2,8]"});
    EXPECT_EQ(session->forward().at(0).shape, (std::vector<int64_t>{2, 8}));
}

TEST(OpLibraries, AFileThatIsNotALibraryIsAnErrorNamingIt)
{
    test::TempDir dir;
    EXPECT_NE(test::errorOf([&] { loadOpLibrary(dir.path("absent.so").string()); }).find("file not found"),
              std::string::npos);
    test::writeBytes(dir.path("text.so"), "not a library");
    const std::string error = test::errorOf([&] { loadOpLibrary(dir.path("text.so").string()); });
    EXPECT_NE(error.find("text.so"), std::string::npos) << error;
    EXPECT_NE(error.find("cannot be loaded"), std::string::npos) << error;

    // KFORGE_OPS_PATH: a name that is not a folder, and a folder's file that is not a library, each a message.
    const std::string folders = dir.path("absent").string() + ":" + dir.path("").string();
    ::setenv("KFORGE_OPS_PATH", folders.c_str(), 1);
    std::vector<std::string> errors;
    EXPECT_TRUE(loadOpLibrariesFromEnvironment(errors).empty());
    ::unsetenv("KFORGE_OPS_PATH");
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_EQ(errors[0], "KFORGE_OPS_PATH: '" + dir.path("absent").string() + "' is not a folder");
    EXPECT_NE(errors[1].find("text.so"), std::string::npos) << errors[1];
}
