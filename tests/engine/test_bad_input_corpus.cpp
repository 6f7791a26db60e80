// SPDX-License-Identifier: Apache-2.0
// The bad-input corpus (tests/data/bad-inputs) replayed through the engine: every file is refused with a
// kforge::Error that names the file (or spec), says why (the fragment in expected.json) and fits on one line.
// The tests walk the folders, so a new corpus file is picked up without touching this file. One test per folder
// (a loop, each file in a SCOPED_TRACE): CTest runs each test in its own process, and one per file would
// spend more time starting processes than testing.
#include <kforge/error.h>
#include <kforge/input_spec.h>
#include <kforge/model_session.h>
#include <kforge/plan.h>

#include "corpus.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <functional>

using namespace kforge;
using namespace kforge::test;

namespace {

ModelSession& tinyGpt()
{
    static const std::unique_ptr<ModelSession> session = ModelSession::open("builtin:tiny-gpt");
    return *session;
}

std::vector<std::string> inputSpecs()
{
    std::vector<std::string> specs;
    const nlohmann::json expected = corpusExpectations("inputs");
    for (const auto& [spec, _] : expected.items())
        specs.push_back(spec);
    return specs;
}

} // namespace

// Every file has an expectation and every expectation a file: a new file cannot be forgotten.
TEST(BadInputCorpus, EveryFileHasAnExpectation)
{
    for (const std::string folder : {"models", "plans"}) {
        const nlohmann::json expected = corpusExpectations(folder);
        ASSERT_TRUE(expected.is_object()) << folder << "/expected.json does not parse";
        const auto files = corpusFiles(folder);
        EXPECT_GE(files.size(), 8u) << folder;
        for (const auto& file : files)
            EXPECT_TRUE(expected.contains(file)) << folder << "/" << file << " has no entry in expected.json";
        for (const auto& [file, _] : expected.items())
            EXPECT_TRUE(std::filesystem::exists(corpusFolder(folder) / file)) << folder << "/" << file << " is missing";
    }
    EXPECT_GE(inputSpecs().size(), 10u);
}

// ---- models: ModelSession::open ---------------------------------------------------------------------------------

TEST(BadInputCorpus, EveryModelFileIsRefusedNamingTheFileAndTheCause)
{
    const nlohmann::json expected = corpusExpectations("models");
    for (const auto& file : corpusFiles("models")) {
        SCOPED_TRACE("models/" + file);
        const std::string path = (corpusFolder("models") / file).string();
        const std::string fragment = expected[file].value("fragment", "<no fragment>");
        const std::string message = errorOf([&] { ModelSession::open(path); });
        EXPECT_TRUE(contains(message, "model '" + path + "'")) << message;
        EXPECT_TRUE(contains(message, fragment)) << "expected '" << fragment << "' in: " << message;
        EXPECT_TRUE(looksClean(message)) << message;
    }
}

// ---- plans: readPlan, then validatePlan against builtin:tiny-gpt on cpu -------------------------------------------

TEST(BadInputCorpus, EveryPlanFileIsRefusedSayingWhereAndWhy)
{
    const nlohmann::json expectations = corpusExpectations("plans");
    for (const auto& file : corpusFiles("plans")) {
        SCOPED_TRACE("plans/" + file);
        const std::string path = (corpusFolder("plans") / file).string();
        const nlohmann::json expected = expectations[file];
        const std::string fragment = expected.value("fragment", "<no fragment>");
        if (expected.value("stage", "") == "read") {
            const std::string message = errorOf([&] { readPlan(path); });
            EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << "the message must start with the file: " << message;
            EXPECT_TRUE(contains(message, fragment)) << "expected '" << fragment << "' in: " << message;
            EXPECT_TRUE(looksClean(message)) << message;
            continue;
        }
        ASSERT_EQ(expected.value("stage", ""), "validate") << "stage is read or validate";
        Plan plan;
        ASSERT_NO_THROW(plan = readPlan(path));
        const auto problems = validatePlan(plan, tinyGpt(), "cpu");
        ASSERT_FALSE(problems.empty()) << "validation found nothing";
        const auto match = std::find_if(problems.begin(), problems.end(), [&](const PlanProblem& p) {
            return p.kind == expected.value("kind", "") && p.jsonPath == expected.value("path", "");
        });
        ASSERT_NE(match, problems.end()) << "no " << expected.value("kind", "") << " problem at "
                                         << expected.value("path", "") << "; first: " << problems[0].kind << " at "
                                         << problems[0].jsonPath << ": " << problems[0].message;
        EXPECT_TRUE(contains(match->message, fragment)) << "expected '" << fragment << "' in: " << match->message;
        EXPECT_FALSE(match->fix.empty());
        EXPECT_TRUE(looksClean(match->message + " " + match->fix));
    }
}

// ---- input specs: parseTensorSpec and ModelSession::setInputSpecs -----------------------------------------------

TEST(BadInputCorpus, EveryInputSpecIsRefusedNamingTheSpecAndTheCause)
{
    const nlohmann::json expectations = corpusExpectations("inputs");
    auto session = ModelSession::open("builtin:tiny-gpt");
    const auto inputsBefore = session->describeInputs();
    for (const auto& spec : inputSpecs()) {
        SCOPED_TRACE("input spec " + spec);
        const nlohmann::json expected = expectations[spec];
        const std::string fragment = expected.value("fragment", "<no fragment>");
        if (expected.value("stage", "") == "parse") {
            const std::string message = errorOf([&] { parseTensorSpec(spec); });
            EXPECT_TRUE(contains(message, "input spec '" + spec + "'")) << message;
            EXPECT_TRUE(contains(message, fragment)) << "expected '" << fragment << "' in: " << message;
            EXPECT_TRUE(looksClean(message)) << message;
        } else {
            ASSERT_EQ(expected.value("stage", ""), "tensor") << "stage is parse or tensor";
            EXPECT_NO_THROW(parseTensorSpec(spec));
        }
        // Through a session, as the CLI and the GUI use it: the same error, and the session keeps its inputs.
        const std::string message = errorOf([&] { session->setInputSpecs({spec}); });
        EXPECT_TRUE(contains(message, "input spec '" + spec + "'")) << message;
        EXPECT_TRUE(contains(message, fragment)) << "expected '" << fragment << "' in: " << message;
        EXPECT_TRUE(looksClean(message)) << message;
        EXPECT_EQ(session->describeInputs(), inputsBefore);
    }
    EXPECT_NO_THROW(session->forward()); // still usable
}
