// SPDX-License-Identifier: Apache-2.0
// Included by cpu_kernels_avx2.cpp / cpu_kernels_avx512.cpp right after their `#pragma GCC target` (no include
// guard on purpose: one inclusion per translation unit). g++, unlike gcc, does not define the ISA macros
// (__AVX2__, __AVX512F__, ...) for a target pragma, and sleef.h declares its vector functions only under them:
// define them for sleef.h alone, then remove them again. The vec headers then find sleef.h already included.
// KFORGE_SLEEF_AVX512 selects the AVX-512 declarations as well.
#if !defined(__AVX__)
#define __AVX__ 1
#define KFORGE_UNDEF__AVX__
#endif
#if !defined(__AVX2__)
#define __AVX2__ 1
#define KFORGE_UNDEF__AVX2__
#endif
#if !defined(__FMA__)
#define __FMA__ 1
#define KFORGE_UNDEF__FMA__
#endif
#if !defined(__AVX512F__) && defined(KFORGE_SLEEF_AVX512)
#define __AVX512F__ 1
#define KFORGE_UNDEF__AVX512F__
#endif
#define SLEEF_STATIC_LIBS // as the vec headers define it
#include <sleef.h>
#ifdef KFORGE_UNDEF__AVX__
#undef __AVX__
#undef KFORGE_UNDEF__AVX__
#endif
#ifdef KFORGE_UNDEF__AVX2__
#undef __AVX2__
#undef KFORGE_UNDEF__AVX2__
#endif
#ifdef KFORGE_UNDEF__FMA__
#undef __FMA__
#undef KFORGE_UNDEF__FMA__
#endif
#ifdef KFORGE_UNDEF__AVX512F__
#undef __AVX512F__
#undef KFORGE_UNDEF__AVX512F__
#endif
