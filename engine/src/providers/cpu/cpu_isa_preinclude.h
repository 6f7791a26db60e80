// SPDX-License-Identifier: Apache-2.0
#pragma once
// Included by cpu_kernels_avx2.cpp and cpu_kernels_avx512.cpp *before* their `#pragma GCC target`: every header
// that ATen's vec headers include from outside ATen/cpu/vec (listed with `g++ -H` for LibTorch 2.11). Their
// inline functions are thereby compiled for the baseline ISA, exactly as in every other translation unit, and
// only code in namespaces private to one ISA (at::vec::AVX2 / at::vec::AVX512 and our isa_* namespaces) is
// compiled for the wider one. Without this, an inline function such as a c10::BFloat16 conversion could be
// emitted with AVX-512 instructions and chosen by the linker for callers elsewhere in the engine.
#include "providers/cpu/cpu_kernels.h"

#include <ATen/NumericUtils.h>
#include <ATen/native/Math.h>
#include <ATen/native/cpu/zmath.h>
#include <ATen/native/quantized/AffineQuantizerBase.h>
#include <c10/macros/Macros.h>
#include <c10/util/BFloat16-math.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Exception.h>
#include <c10/util/Half.h>
#include <c10/util/Load.h>
#include <c10/util/TypeCast.h>
#include <c10/util/copysign.h>
#include <c10/util/irange.h>
#include <c10/util/qint32.h>
#include <c10/util/qint8.h>
#include <c10/util/quint8.h>
#include <torch/headeronly/cpu/vec/intrinsics.h>
// Not <sleef.h>: it holds only declarations, and which it declares depends on the target macros (__AVX2__,
// __AVX512F__) that the pragma sets, so the vec headers must include it after the pragma.

#include <algorithm>
#include <array>
#include <cassert>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <tuple>
#include <type_traits>
#include <vector>
