// SPDX-License-Identifier: Apache-2.0
// A library of custom ops as teams write them (TORCH_LIBRARY), for the op-library tests: kforge_test::scale(x, s) = x *
// s. tests/data/models/make_custom_op.py saves a scripted model calling it (defined there in Python with the same
// schema).
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor scale(const at::Tensor& x, double s) { return x * s; }

} // namespace

TORCH_LIBRARY(kforge_test, m) { m.def("scale(Tensor x, float s) -> Tensor"); }

TORCH_LIBRARY_IMPL(kforge_test, CompositeExplicitAutograd, m) { m.impl("scale", &scale); }
