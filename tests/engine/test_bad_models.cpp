// SPDX-License-Identifier: Apache-2.0
// Bad inputs to ModelSession: every one is a kforge::Error naming the file or spec and the cause, never a crash,
// and a session that saw a failing forward stays usable.
#include "build_path.h"
#include <kforge/error.h>
#include <kforge/model_session.h>

#include "model/torch_errors.h"
#include "test_helpers.h"

#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <random>

using namespace kforge;
using kforge::test::errorOf;
namespace fs = std::filesystem;

namespace {

std::string openError(const std::string& source)
{
    return errorOf([&] { ModelSession::open(source); });
}

// EXPECT that `message` contains every one of `parts`.
void expectMentions(const std::string& message, std::initializer_list<std::string> parts)
{
    for (const auto& part : parts)
        EXPECT_NE(message.find(part), std::string::npos) << "missing '" << part << "' in: " << message;
}
#define EXPECT_MENTIONS(message, ...)                                                                                  \
    do {                                                                                                               \
        SCOPED_TRACE("EXPECT_MENTIONS");                                                                               \
        expectMentions((message), {__VA_ARGS__});                                                                      \
    } while (false)

std::string readBytes(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string randomBytes(size_t size, unsigned seed)
{
    std::mt19937 gen(seed);
    std::string bytes(size, '\0');
    for (char& c : bytes)
        c = static_cast<char>(gen() & 0xff);
    return bytes;
}

// A valid zip in PyTorch's archive layout whose entries are not a TorchScript model.
void writeZipWithOtherEntries(const fs::path& path)
{
    caffe2::serialize::PyTorchStreamWriter writer(path.string());
    const std::string readme = "not a model\n";
    writer.writeRecord("readme.txt", readme.data(), readme.size());
    const std::string numbers(256, '\x2a');
    writer.writeRecord("data/0", numbers.data(), numbers.size());
    writer.writeEndOfFile();
}

// A module whose only method is `other`: there is no forward.
torch::jit::Module moduleWithoutForward()
{
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module module(c10::QualifiedName("__torch__.NoForward"), cu, true);
    module.define("def other(self, x: Tensor) -> Tensor:\n    return torch.relu(x)\n");
    return module;
}

// A torch.save file (the same zip format as Python's) holding `value`.
void writeTorchSave(const fs::path& path, const c10::IValue& value)
{
    const auto bytes = torch::jit::pickle_save(value);
    test::writeBytes(path, std::string(bytes.begin(), bytes.end()));
}

// A saved two-level model whose child computes torch.linear(x, w) with w of shape [4,3]: it takes [N,3] inputs.
fs::path saveLinearModel(const test::TempDir& dir)
{
    const fs::path path = dir.path("linear.pt");
    test::saveModule(test::twoLevelModel("torch.linear(x, torch.ones(4, 3))"), path);
    return path;
}

} // namespace

// ---- ModelSession::open ------------------------------------------------------------------------------------

TEST(BadModels, MissingFileIsNotFound)
{
    test::TempDir dir;
    const std::string path = dir.path("absent.pt").string();
    EXPECT_MENTIONS(openError(path), "model '" + path + "'", "file not found");
}

TEST(BadModels, EmptyPathIsNotFound) { EXPECT_MENTIONS(openError(""), "model ''", "file not found"); }

TEST(BadModels, DirectoryIsRejected)
{
    test::TempDir dir;
    const fs::path sub = dir.path("models.pt");
    fs::create_directories(sub);
    EXPECT_MENTIONS(openError(sub.string()), sub.string(), "is a directory");
}

TEST(BadModels, EmptyFileIsRejected)
{
    test::TempDir dir;
    test::writeBytes(dir.path("empty.pt"), "");
    EXPECT_MENTIONS(openError(dir.path("empty.pt").string()), "empty.pt", "file is empty");
}

TEST(BadModels, RandomBytesAreNotAZipArchive)
{
    test::TempDir dir;
    test::writeBytes(dir.path("noise.pt"), randomBytes(4096, 7));
    EXPECT_MENTIONS(openError(dir.path("noise.pt").string()), "noise.pt", "not a TorchScript archive",
                    "not a zip archive");
}

TEST(BadModels, ShortFileIsNotAZipArchive)
{
    test::TempDir dir;
    test::writeBytes(dir.path("short.pt"), "PK");
    EXPECT_MENTIONS(openError(dir.path("short.pt").string()), "short.pt", "not a zip archive");
}

TEST(BadModels, TextFileIsNotAZipArchive)
{
    test::TempDir dir;
    test::writeBytes(dir.path("model.py"), "import torch\nclass M(torch.nn.Module): pass\n");
    EXPECT_MENTIONS(openError(dir.path("model.py").string()), "model.py", "not a zip archive");
}

TEST(BadModels, RandomBytesAfterZipMagicAreRejected)
{
    test::TempDir dir;
    test::writeBytes(dir.path("fake.pt"), "PK\x03\x04" + randomBytes(4096, 11));
    const std::string message = openError(dir.path("fake.pt").string());
    EXPECT_MENTIONS(message, "fake.pt", "zip archive");
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(BadModels, TruncatedZipIsReportedDamaged)
{
    test::TempDir dir;
    test::saveModule(test::twoLevelModel("torch.relu(x)"), dir.path("full.pt"));
    const std::string bytes = readBytes(dir.path("full.pt"));
    ASSERT_GT(bytes.size(), 100u);
    test::writeBytes(dir.path("half.pt"), bytes.substr(0, bytes.size() / 2));
    const std::string message = openError(dir.path("half.pt").string());
    EXPECT_MENTIONS(message, "half.pt", "damaged or truncated zip archive");
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(BadModels, ZipWithOtherEntriesIsNotLoadable)
{
    test::TempDir dir;
    writeZipWithOtherEntries(dir.path("other.zip"));
    const std::string message = openError(dir.path("other.zip").string());
    EXPECT_MENTIONS(message, "other.zip", "not a loadable TorchScript archive");
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(BadModels, TorchSaveTensorFileIsNotAModel)
{
    test::TempDir dir;
    writeTorchSave(dir.path("tensor.pt"), torch::ones({2, 2}));
    const std::string message = openError(dir.path("tensor.pt").string());
    EXPECT_MENTIONS(message, "tensor.pt", "weights without the model's code");
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// What users try to open instead of a model (tests/data/models/make_torch_save_files.py): a state_dict and a pickled
// module, both written by torch.save. The error says what the file is and how to save the model instead.
TEST(BadModels, TorchSaveFilesSayWhatTheyAreAndHowToSaveAModel)
{
    const std::string models = std::string(KFORGE_TEST_DATA) + "/models/";
    EXPECT_MENTIONS(openError(models + "state_dict.pt"), "a state_dict",
                    "weights without the model's code; save the model itself with torch.jit.script(model)");
    EXPECT_MENTIONS(openError(models + "pickled_module.pt"), "a pickled module (torch.save(model))",
                    "torch.export.save");
}

TEST(BadModels, ModelWithoutForwardIsRejected)
{
    test::TempDir dir;
    test::saveModule(moduleWithoutForward(), dir.path("noforward.pt"));
    EXPECT_MENTIONS(openError(dir.path("noforward.pt").string()), "noforward.pt", "no forward() method");
}

// torch.jit.freeze inlines the child "act": the frozen model is one flat module. This one has no weights, so its
// graph holds no tensor constants; freezing also drops every attribute (Python models lose "training").
TEST(BadModels, FrozenModelLoadsWithScopingWarning)
{
    test::TempDir dir;
    test::saveModule(torch::jit::freeze(test::twoLevelModel("torch.relu(x)")), dir.path("frozen.pt"));
    auto s = ModelSession::open(dir.path("frozen.pt").string());
    EXPECT_TRUE(s->isFrozen());
    ASSERT_EQ(s->warnings().size(), 1u);
    EXPECT_MENTIONS(s->warnings()[0], "frozen", "module scoping is unavailable");
    s->setInputSpecs({"float32[2,3]"});
    EXPECT_EQ(s->forward().at(0).shape, (std::vector<int64_t>{2, 3}));
}

TEST(BadModels, FrozenModelWithWeightsLoadsWithScopingWarning)
{
    test::TempDir dir;
    test::saveModule(torch::jit::freeze(test::twoLevelModel("torch.linear(x, torch.ones(4, 3))")),
                     dir.path("frozen_linear.pt"));
    auto s = ModelSession::open(dir.path("frozen_linear.pt").string());
    EXPECT_TRUE(s->isFrozen());
    ASSERT_EQ(s->warnings().size(), 1u);
    EXPECT_MENTIONS(s->warnings()[0], "frozen", "module scoping is unavailable");
}

TEST(BadModels, UnfrozenModelHasNoWarnings)
{
    test::TempDir dir;
    test::saveModule(test::twoLevelModel("torch.relu(x)"), dir.path("plain.pt"));
    auto s = ModelSession::open(dir.path("plain.pt").string());
    EXPECT_FALSE(s->isFrozen());
    EXPECT_TRUE(s->warnings().empty());
}

TEST(BadModels, UnknownBuiltinListsAvailableBuiltins)
{
    const std::string message = openError("builtin:nope");
    EXPECT_MENTIONS(message, "builtin:nope", "no such built-in model");
    ASSERT_FALSE(ModelSession::builtinModels().empty());
    for (const auto& name : ModelSession::builtinModels())
        EXPECT_MENTIONS(message, name);
    EXPECT_MENTIONS(openError("builtin:"), "model 'builtin:'", "no such built-in model");
}

// ---- setInputSpecs ---------------------------------------------------------------------------------------

TEST(BadModels, UnparsableInputSpecsNameTheSpec)
{
    test::TempDir dir;
    test::saveModule(test::twoLevelModel("torch.relu(x)"), dir.path("m.pt"));
    auto s = ModelSession::open(dir.path("m.pt").string());
    const std::vector<std::pair<std::string, std::string>> cases{
        {"complex64[2]", "unknown dtype 'complex64'"},
        {"float32", "expected DTYPE[D0,D1,...]"},
        {"float32[2,-1]", "dimension -1 is negative"},
        {"float32[2,x]", "dimension 'x' is not a whole number"},
        {"int64[99999999999,99999999999]", "more than 2^40 elements"},
        {"int64[99999999999999999999]", "is too large"},
    };
    for (const auto& [spec, cause] : cases) {
        SCOPED_TRACE(spec);
        EXPECT_MENTIONS(errorOf([&] { s->setInputSpecs({spec}); }), "input spec '" + spec + "'", cause);
        EXPECT_FALSE(s->hasInputs());
    }
}

TEST(BadModels, FailedInputSpecsKeepThePreviousInputs)
{
    auto s = ModelSession::open("builtin:tiny-gpt");
    const auto before = s->describeInputs();
    ASSERT_FALSE(before.empty());
    errorOf([&] { s->setInputSpecs({"nope[1]"}); });
    EXPECT_EQ(s->describeInputs(), before);
    EXPECT_EQ(s->forward().size(), 1u);
}

TEST(BadModels, TooManyInputSpecsForTheForward)
{
    test::TempDir dir;
    test::saveModule(test::twoLevelModel("torch.relu(x)"), dir.path("m.pt"));
    auto s = ModelSession::open(dir.path("m.pt").string());
    EXPECT_MENTIONS(errorOf([&] {
                        s->setInputSpecs({"float32[2]", "float32[2]"});
                    }),
                    "inputs for 'm.pt'", "forward takes 1 input(s), 2 given");
    EXPECT_FALSE(s->hasInputs());
}

TEST(BadModels, TooFewInputSpecsForTheForward)
{
    test::TempDir dir;
    test::saveModule(test::twoLevelModel("torch.relu(x)"), dir.path("m.pt"));
    auto s = ModelSession::open(dir.path("m.pt").string());
    EXPECT_MENTIONS(errorOf([&] { s->setInputSpecs({}); }), "inputs for 'm.pt'", "forward takes 1 input(s), 0 given");
}

// ---- forward ------------------------------------------------------------------------------------------------

TEST(BadModels, ForwardWithoutInputsSaysHowToGiveThem)
{
    test::TempDir dir;
    test::saveModule(test::twoLevelModel("torch.relu(x)"), dir.path("m.pt"));
    auto s = ModelSession::open(dir.path("m.pt").string());
    EXPECT_MENTIONS(errorOf([&] { s->forward(); }), "forward of 'm.pt'", "no inputs", "--input");
}

TEST(BadModels, InputNotFittingTheModelFailsForwardNamingTheInputs)
{
    test::TempDir dir;
    auto s = ModelSession::open(saveLinearModel(dir).string());
    s->setInputSpecs({"float32[2,5]"});
    const std::string message = errorOf([&] { s->forward(); });
    EXPECT_MENTIONS(message, "forward of 'linear.pt'", "(inputs: float32[2,5])", "2x5");
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.find("Traceback"), std::string::npos) << message;
}

TEST(BadModels, SessionStaysUsableAfterAFailedForward)
{
    test::TempDir dir;
    auto s = ModelSession::open(saveLinearModel(dir).string());
    s->setInputSpecs({"float32[2,5]"});
    errorOf([&] { s->forward(); });
    errorOf([&] { s->forward(); }); // fails the same way again, no state left behind
    s->setInputSpecs({"float32[2,3]"});
    const auto out = s->forward();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 4}));
    EXPECT_EQ(out[0].dtype, "float32");
}

TEST(BadModels, WrongDtypeInputFailsForwardNamingTheInputs)
{
    test::TempDir dir;
    auto s = ModelSession::open(saveLinearModel(dir).string());
    s->setInputSpecs({"int64[2,3]"});
    EXPECT_MENTIONS(errorOf([&] { s->forward(); }), "forward of 'linear.pt'", "(inputs: int64[2,3])");
    s->setInputSpecs({"float32[1,3]"});
    EXPECT_EQ(s->forward().at(0).shape, (std::vector<int64_t>{1, 4}));
}

TEST(BadModels, FailingForwardOnThreadsIsAnError)
{
    test::TempDir dir;
    auto s = ModelSession::open(saveLinearModel(dir).string());
    s->setInputSpecs({"float32[2,5]"});
    EXPECT_MENTIONS(errorOf([&] { s->forwardMany(2, 3); }), "forward on 3 threads", "float32[2,5]");
    s->setInputSpecs({"float32[2,3]"});
    EXPECT_EQ(s->forwardMany(2, 3).at(0).shape, (std::vector<int64_t>{2, 4}));
}

// ---- loadInputsFile -----------------------------------------------------------------------------------------

TEST(BadModels, MissingInputsFileIsNotFound)
{
    test::TempDir dir;
    auto s = ModelSession::open("builtin:tiny-gpt");
    const std::string path = dir.path("absent_inputs.pt").string();
    EXPECT_MENTIONS(errorOf([&] { s->loadInputsFile(path); }), "inputs file '" + path + "'", "file not found");
    EXPECT_TRUE(s->hasInputs()); // the builtin's example inputs are kept
}

TEST(BadModels, InputsFileThatIsADirectoryIsRejected)
{
    test::TempDir dir;
    fs::create_directories(dir.path("inputs"));
    auto s = ModelSession::open("builtin:tiny-gpt");
    EXPECT_MENTIONS(errorOf([&] { s->loadInputsFile(dir.path("inputs").string()); }), "inputs",
                    "is not a regular file");
}

TEST(BadModels, EmptyInputsFileIsRejected)
{
    test::TempDir dir;
    test::writeBytes(dir.path("empty_inputs.pt"), "");
    auto s = ModelSession::open("builtin:tiny-gpt");
    EXPECT_MENTIONS(errorOf([&] { s->loadInputsFile(dir.path("empty_inputs.pt").string()); }), "empty_inputs.pt",
                    "file is empty");
}

TEST(BadModels, InputsFileOfRandomBytesIsNotATorchSaveFile)
{
    test::TempDir dir;
    test::writeBytes(dir.path("noise_inputs.pt"), randomBytes(2048, 3));
    auto s = ModelSession::open("builtin:tiny-gpt");
    const auto before = s->describeInputs();
    const std::string message = errorOf([&] { s->loadInputsFile(dir.path("noise_inputs.pt").string()); });
    EXPECT_MENTIONS(message, "inputs file '", "noise_inputs.pt", "not a torch.save file");
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(s->describeInputs(), before);
}

TEST(BadModels, InputsFileOfTextIsNotATorchSaveFile)
{
    test::TempDir dir;
    test::writeBytes(dir.path("inputs.txt"), "float32[1,16]\n");
    auto s = ModelSession::open("builtin:tiny-gpt");
    EXPECT_MENTIONS(errorOf([&] { s->loadInputsFile(dir.path("inputs.txt").string()); }), "inputs.txt",
                    "not a torch.save file");
}

TEST(BadModels, TruncatedInputsFileIsNotATorchSaveFile)
{
    test::TempDir dir;
    writeTorchSave(dir.path("full_inputs.pt"), c10::ivalue::Tuple::create({torch::ones({4, 5})}));
    const std::string bytes = readBytes(dir.path("full_inputs.pt"));
    test::writeBytes(dir.path("half_inputs.pt"), bytes.substr(0, bytes.size() / 2));
    auto s = ModelSession::open("builtin:tiny-gpt");
    EXPECT_MENTIONS(errorOf([&] { s->loadInputsFile(dir.path("half_inputs.pt").string()); }), "half_inputs.pt",
                    "not a torch.save file");
}

TEST(BadModels, TorchScriptModelAsInputsFileIsRejected)
{
    test::TempDir dir;
    test::saveModule(test::twoLevelModel("torch.relu(x)"), dir.path("m.pt"));
    auto s = ModelSession::open("builtin:tiny-gpt");
    EXPECT_MENTIONS(errorOf([&] { s->loadInputsFile(dir.path("m.pt").string()); }), "inputs file '", "m.pt");
}

TEST(BadModels, InputsFileHoldingANumberIsRejected)
{
    test::TempDir dir;
    writeTorchSave(dir.path("number.pt"), c10::IValue(int64_t{42}));
    auto s = ModelSession::open("builtin:tiny-gpt");
    EXPECT_MENTIONS(errorOf([&] { s->loadInputsFile(dir.path("number.pt").string()); }), "number.pt",
                    "expected a tensor, a tuple, a list or a dict");
}

TEST(BadModels, InputsFileDictWithNonStringKeysIsRejected)
{
    test::TempDir dir;
    c10::Dict<int64_t, at::Tensor> dict;
    dict.insert(0, torch::ones({2}));
    writeTorchSave(dir.path("dict.pt"), c10::IValue(dict));
    auto s = ModelSession::open("builtin:tiny-gpt");
    EXPECT_MENTIONS(errorOf([&] { s->loadInputsFile(dir.path("dict.pt").string()); }), "dict.pt", "string keys");
}

TEST(BadModels, InputsFileWithWrongShapeFailsAtForwardNamingTheInputs)
{
    test::TempDir dir;
    auto s = ModelSession::open(saveLinearModel(dir).string());
    writeTorchSave(dir.path("wrong.pt"), c10::ivalue::Tuple::create({torch::ones({2, 5})}));
    s->loadInputsFile(dir.path("wrong.pt").string());
    EXPECT_MENTIONS(errorOf([&] { s->forward(); }), "forward of 'linear.pt'", "(inputs: float32[2,5])");
    writeTorchSave(dir.path("right.pt"), c10::ivalue::Tuple::create({torch::ones({2, 3})}));
    s->loadInputsFile(dir.path("right.pt").string());
    EXPECT_DOUBLE_EQ(s->forward().at(0).sum, 2 * 4 * 3.0);
}

// A CUDA error raised inside TorchScript (a host sync during graph capture, seen on the H200) ends in c10's
// advice lines; the cause reported is the error line, not the advice.
TEST(BadModels, CudaErrorAdviceIsNotReportedAsTheCause)
{
    const std::string message = "The following operation failed in the TorchScript interpreter.\n"
                                "Traceback of TorchScript (most recent call last):\n"
                                "  File \"code/__torch__.py\", line 12, in forward\n"
                                "RuntimeError: CUDA error: operation not permitted when stream is capturing\n"
                                "Search for `cudaErrorStreamCaptureUnsupported' in the CUDA Runtime API docs.\n"
                                "CUDA kernel errors might be asynchronously reported at some other API call, so the "
                                "stacktrace below might be incorrect.\n"
                                "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
                                "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n";
    EXPECT_EQ(describeErrorMessage(message), "CUDA error: operation not permitted when stream is capturing");
    EXPECT_EQ(describeErrorMessage("CUDA error: out of memory\nCompile with `TORCH_USE_CUDA_DSA` to enable "
                                   "device-side assertions.\n"),
              "CUDA error: out of memory");
}
