// SPDX-License-Identifier: Apache-2.0
// parseTensorSpec / formatTensorSpec: the "DTYPE[D0,D1,...]" inputs given with --input.
#include <kforge/error.h>
#include <kforge/input_spec.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace kforge;

namespace {

using Shape = std::vector<std::int64_t>;

// The kforge::Error parseTensorSpec throws for `text`; fails the test when it parses.
Error parseError(const std::string& text)
{
    try {
        const TensorSpec spec = parseTensorSpec(text);
        ADD_FAILURE() << "'" << text << "' parsed as " << formatTensorSpec(spec);
    } catch (const Error& e) {
        return e;
    }
    return Error("", "");
}

// Checks that `text` is rejected with a message naming the spec as written and containing `cause`.
void expectRejected(const std::string& text, const std::string& cause)
{
    SCOPED_TRACE("spec '" + text + "'");
    const Error e = parseError(text);
    const std::string what = e.what();
    EXPECT_NE(what.find("input spec '" + text + "'"), std::string::npos) << what;
    EXPECT_NE(e.why().find(cause), std::string::npos) << what;
}

} // namespace

TEST(InputSpec, CanonicalDtypesParseToThemselves)
{
    for (const std::string& dtype : supportedDtypes()) {
        const TensorSpec spec = parseTensorSpec(dtype + "[2]");
        EXPECT_EQ(spec.dtype, dtype);
        EXPECT_EQ(spec.shape, Shape{2});
    }
}

TEST(InputSpec, SupportedDtypesListsTheTenCanonicalNames)
{
    EXPECT_EQ(supportedDtypes(), (std::vector<std::string>{"float32", "float16", "bfloat16", "float64", "int64",
                                                           "int32", "int16", "int8", "uint8", "bool"}));
}

TEST(InputSpec, PyTorchAndShortAliasesMapToCanonicalDtypes)
{
    const std::vector<std::pair<std::string, std::string>> aliases{
        {"float", "float32"},  {"f32", "float32"}, {"half", "float16"}, {"f16", "float16"}, {"bf16", "bfloat16"},
        {"double", "float64"}, {"f64", "float64"}, {"long", "int64"},   {"i64", "int64"},   {"int", "int32"},
        {"i32", "int32"},      {"short", "int16"}, {"i16", "int16"},    {"i8", "int8"},     {"u8", "uint8"}};
    for (const auto& [alias, canonical] : aliases)
        EXPECT_EQ(parseTensorSpec(alias + "[1]").dtype, canonical) << alias;
}

TEST(InputSpec, ShapesOfAnyRankParse)
{
    EXPECT_EQ(parseTensorSpec("float32[1,3,224,224]").shape, (Shape{1, 3, 224, 224}));
    EXPECT_EQ(parseTensorSpec("int64[1,16]").shape, (Shape{1, 16}));
    EXPECT_EQ(parseTensorSpec("float32[7]").shape, (Shape{7}));
    EXPECT_EQ(parseTensorSpec("float32[0,5]").shape, (Shape{0, 5}));
}

TEST(InputSpec, EmptyBracketsAreAScalar)
{
    const TensorSpec spec = parseTensorSpec("float32[]");
    EXPECT_EQ(spec.dtype, "float32");
    EXPECT_TRUE(spec.shape.empty());
    EXPECT_EQ(parseTensorSpec("bf16[ ]").shape, Shape{});
}

TEST(InputSpec, WhitespaceAroundDtypeAndDimensionsIsIgnored)
{
    const TensorSpec spec = parseTensorSpec("  float16 [ 1 , 2,\t3 ]\t");
    EXPECT_EQ(spec.dtype, "float16");
    EXPECT_EQ(spec.shape, (Shape{1, 2, 3}));
}

TEST(InputSpec, TextKeepsWhatTheUserWrote) { EXPECT_EQ(parseTensorSpec(" half[2, 3]").text, " half[2, 3]"); }

TEST(InputSpec, FormatWritesCanonicalDtypeAndCompactShape)
{
    EXPECT_EQ(formatTensorSpec(parseTensorSpec(" half [2, 3] ")), "float16[2,3]");
    EXPECT_EQ(formatTensorSpec(parseTensorSpec("long[]")), "int64[]");
    EXPECT_EQ(formatTensorSpec(TensorSpec{"bool", {4}, ""}), "bool[4]");
}

TEST(InputSpec, FormatThenParseRoundTrips)
{
    for (const std::string text : {"float32[1,3,224,224]", "int64[1,16]", "bfloat16[]", "uint8[0]", "bool[2,2]",
                                   "float64[5]", "int8[1,1,1,1,1]"}) {
        const TensorSpec spec = parseTensorSpec(text);
        EXPECT_EQ(formatTensorSpec(spec), text);
        const TensorSpec again = parseTensorSpec(formatTensorSpec(spec));
        EXPECT_EQ(again.dtype, spec.dtype) << text;
        EXPECT_EQ(again.shape, spec.shape) << text;
    }
}

TEST(InputSpec, MissingBracketsAreRejectedWithTheExpectedForm)
{
    for (const std::string text : {"float32", "float32[1,2", "float32 1,2]", "float32(1,2)", "float32[1]x", "", "  "})
        expectRejected(text, "expected DTYPE[D0,D1,...]");
}

TEST(InputSpec, UnknownDtypeIsRejectedListingSupportedDtypes)
{
    const Error e = parseError("complex64[2]");
    EXPECT_NE(e.why().find("unknown dtype 'complex64'"), std::string::npos) << e.what();
    for (const std::string& dtype : supportedDtypes())
        EXPECT_NE(e.why().find(dtype), std::string::npos) << dtype;
    expectRejected("Float32[2]", "unknown dtype 'Float32'"); // names are case-sensitive, as in PyTorch
    expectRejected("torch.float32[2]", "unknown dtype");
    expectRejected("[1,2]", "unknown dtype ''");
}

TEST(InputSpec, NegativeDimensionIsRejected)
{
    expectRejected("float32[1,-3]", "dimension -3 is negative");
    expectRejected("float32[-1]", "is negative");
}

TEST(InputSpec, NonNumericDimensionIsRejected)
{
    expectRejected("float32[1,a]", "dimension 'a' is not a whole number");
    expectRejected("float32[1.5]", "dimension '1.5' is not a whole number");
    expectRejected("float32[2x3]", "dimension '2x3' is not a whole number");
    expectRejected("float32[+4]", "dimension '+4' is not a whole number");
    expectRejected("float32[1,,2]", "dimension '' is not a whole number");
    expectRejected("float32[,1]", "dimension '' is not a whole number");
}

TEST(InputSpec, TrailingCommaIsRejected)
{
    expectRejected("float32[1,]", "trailing comma");
    expectRejected("float32[1, 2 , ]", "trailing comma");
}

TEST(InputSpec, DimensionBeyondInt64IsRejectedAsTooLarge)
{
    expectRejected("int64[99999999999999999999]", "dimension '99999999999999999999' is too large");
}

TEST(InputSpec, ElementCountOverflowIsRejected)
{
    expectRejected("int64[99999999999,99999999999]", "more than 2^40 elements");
    expectRejected("float32[2000000000000]", "more than 2^40 elements");
    expectRejected("float32[1048576,1048577]", "more than 2^40 elements");
}

TEST(InputSpec, ElementCountAtTheLimitIsAccepted)
{
    EXPECT_EQ(parseTensorSpec("float32[1048576,1048576]").shape, (Shape{1048576, 1048576}));
    // A zero dimension makes the tensor empty whatever the other dimensions are.
    EXPECT_EQ(parseTensorSpec("float32[0,99999999999,99999999999]").shape, (Shape{0, 99999999999, 99999999999}));
}

TEST(InputSpec, ErrorSplitsWhereAndWhy)
{
    const Error e = parseError("float32[x]");
    EXPECT_EQ(e.where(), "input spec 'float32[x]'");
    EXPECT_EQ(e.why(), "dimension 'x' is not a whole number");
    EXPECT_EQ(std::string(e.what()), "input spec 'float32[x]': dimension 'x' is not a whole number");
}
