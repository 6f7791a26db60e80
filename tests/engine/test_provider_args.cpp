// SPDX-License-Identifier: Apache-2.0
// The provider SDK's argument layer (kforge/provider_args.h): each parse function reads a real normal-form stack
// (its argument count checked against the dispatcher's schema) and refuses one that is not that form.
#include <kforge/provider_sdk.h>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>

#include <limits>

using namespace kforge;

namespace {

size_t schemaArguments(const char* name, const char* overload)
{
    return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).schema().arguments().size();
}

c10::IValue ints(std::vector<int64_t> v) { return c10::IValue(c10::List<int64_t>(v)); }

} // namespace

TEST(ProviderArgs, ArgumentCountsAreTheNormalForms)
{
    EXPECT_EQ(UnaryArgs::kArguments, schemaArguments("aten::relu", ""));
    EXPECT_EQ(UnaryArgs::kArguments, schemaArguments("aten::silu", ""));
    EXPECT_EQ(GeluArgs::kArguments, schemaArguments("aten::gelu", ""));
    EXPECT_EQ(LayerNormArgs::kArguments, schemaArguments("aten::layer_norm", ""));
    EXPECT_EQ(RmsNormArgs::kArguments, schemaArguments("aten::rms_norm", ""));
    EXPECT_EQ(SoftmaxArgs::kArguments, schemaArguments("aten::softmax", "int"));
    EXPECT_EQ(SoftmaxArgs::kArguments, schemaArguments("aten::log_softmax", "int"));
    EXPECT_EQ(ScaledDotProductAttentionArgs::kArguments, schemaArguments("aten::scaled_dot_product_attention", ""));
    EXPECT_EQ(ConvolutionArgs::kArguments, schemaArguments("aten::conv2d", ""));
    EXPECT_EQ(ConvolutionArgs::kArguments, schemaArguments("aten::conv1d", ""));
    EXPECT_EQ(LinearArgs::kArguments, schemaArguments("aten::linear", ""));
}

TEST(ProviderArgs, UnaryAndGelu)
{
    const at::Tensor x = at::randn({2, 3});
    const auto relu = parseRelu({x});
    ASSERT_TRUE(relu);
    EXPECT_TRUE(relu->self.is_same(x));
    EXPECT_TRUE(parseSilu({x}));
    EXPECT_FALSE(parseRelu({}));                 // too few entries
    EXPECT_FALSE(parseRelu({c10::IValue(1.0)})); // not a tensor
    EXPECT_FALSE(parseRelu({at::Tensor()}));     // an undefined tensor
    // The arguments are the top of the stack: what lies below them is another call's.
    EXPECT_TRUE(parseRelu({c10::IValue(7), x}));

    const auto gelu = parseGelu({x, std::string("tanh")});
    ASSERT_TRUE(gelu);
    EXPECT_TRUE(gelu->tanh());
    EXPECT_EQ(parseGelu({x, std::string("none")})->approximate, "none");
    EXPECT_FALSE(parseGelu({x, c10::IValue(1)}));
}

TEST(ProviderArgs, Norms)
{
    const at::Tensor x = at::randn({4, 8}), w = at::ones({8}), b = at::zeros({8});
    const auto ln = parseLayerNorm({x, ints({8}), w, b, 1e-3, true});
    ASSERT_TRUE(ln);
    EXPECT_EQ(ln->normalizedShape, std::vector<int64_t>{8});
    EXPECT_TRUE(ln->weight && ln->weight->is_same(w));
    EXPECT_TRUE(ln->bias && ln->bias->is_same(b));
    EXPECT_DOUBLE_EQ(ln->eps, 1e-3);
    EXPECT_EQ(normalizedCols(ln->input, ln->normalizedShape), 8);
    EXPECT_EQ(normalizedCols(x, {4}), std::nullopt); // not the trailing dims
    const auto absent = parseLayerNorm({x, ints({8}), c10::IValue(), at::Tensor(), 1e-5, false});
    ASSERT_TRUE(absent);
    EXPECT_FALSE(absent->weight);
    EXPECT_FALSE(absent->bias);                                          // an undefined tensor counts as absent
    EXPECT_FALSE(parseLayerNorm({x, ints({8}), w, b, 1e-5}));            // five arguments
    EXPECT_FALSE(parseLayerNorm({x, c10::IValue(8), w, b, 1e-5, true})); // normalized_shape not a list
    EXPECT_FALSE(parseLayerNorm({x, ints({8}), c10::IValue(1), b, 1e-5, true}));

    const auto rms = parseRmsNorm({x, ints({8}), w, c10::IValue()});
    ASSERT_TRUE(rms);
    EXPECT_FALSE(rms->eps);
    EXPECT_DOUBLE_EQ(rms->epsOrDefault(), std::numeric_limits<float>::epsilon());
    EXPECT_DOUBLE_EQ(parseRmsNorm({x, ints({8}), c10::IValue(), 0.5})->epsOrDefault(), 0.5);
    EXPECT_FALSE(parseRmsNorm({x, ints({8}), w, std::string("eps")}));
}

TEST(ProviderArgs, Softmax)
{
    const at::Tensor x = at::randn({2, 5});
    const auto plain = parseSoftmax({x, int64_t(-1), c10::IValue()});
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->dim, -1);
    EXPECT_FALSE(plain->dtype);
    const auto widened = parseLogSoftmax({x, int64_t(1), c10::IValue(int64_t(at::kFloat))});
    ASSERT_TRUE(widened);
    EXPECT_EQ(widened->dtype, at::kFloat);
    EXPECT_FALSE(parseSoftmax({x, 1.0, c10::IValue()})); // dim not an int
    EXPECT_EQ(wrapDim(-1, 2), 1);
    EXPECT_EQ(wrapDim(0, 0), 0); // a 0-d tensor counts as rank 1
    EXPECT_EQ(wrapDim(2, 2), std::nullopt);
}

TEST(ProviderArgs, AttentionConvolutionLinear)
{
    const at::Tensor q = at::randn({1, 2, 4, 8}), mask = at::zeros({4, 4});
    const auto sdpa = parseScaledDotProductAttention({q, q, q, mask, 0.0, true, c10::IValue(0.5), false});
    ASSERT_TRUE(sdpa);
    EXPECT_TRUE(sdpa->attnMask && sdpa->attnMask->is_same(mask));
    EXPECT_TRUE(sdpa->isCausal);
    EXPECT_EQ(sdpa->scale, 0.5);
    EXPECT_FALSE(sdpa->enableGqa);
    EXPECT_FALSE(parseScaledDotProductAttention({q, q, q, mask, 0.0, true, c10::IValue()})); // seven arguments

    const at::Tensor image = at::randn({1, 3, 8, 8}), weight = at::randn({4, 3, 3, 3});
    const auto conv = parseConv2d({image, weight, c10::IValue(), ints({1, 1}), ints({1, 1}), ints({1, 1}), int64_t(1)});
    ASSERT_TRUE(conv);
    EXPECT_FALSE(conv->bias);
    EXPECT_EQ(conv->padding, (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(conv->groups, 1);
    EXPECT_FALSE(parseConvolution({image, weight, c10::IValue(), ints({1, 1}), std::string("same"), ints({1, 1}),
                                   int64_t(1)})); // padding="same" is not the normal form

    const at::Tensor in = at::randn({2, 3}), lw = at::randn({4, 3}), lb = at::randn({4});
    const auto linear = parseLinear({in, lw, lb});
    ASSERT_TRUE(linear);
    EXPECT_TRUE(linear->bias && linear->bias->is_same(lb));
    EXPECT_FALSE(parseLinear({in, c10::IValue(), lb})); // weight is not optional
}

TEST(ProviderArgs, NeedsAutograd)
{
    const at::Tensor plain = at::randn({2}), leaf = at::randn({2}).requires_grad_();
    const std::optional<at::Tensor> absent;
    EXPECT_FALSE(needsAutograd({&plain, tensorOrNull(absent), nullptr}));
    EXPECT_TRUE(needsAutograd({&plain, &leaf}));
    at::NoGradGuard noGrad;
    EXPECT_FALSE(needsAutograd({&leaf})); // no graph is recorded anyway
}
