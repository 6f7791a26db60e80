// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <c10/core/DispatchKey.h>

namespace kforge::runtime {

// The one place the interposition key is chosen (docs/design/architecture.md, Mechanisms): the only functionality key
// near the top of the order that nothing in LibTorch claims. A start-up self-test (interposer.cpp) checks
// that it intercepts a probe op and that no foreign kernel sits on it.
inline constexpr c10::DispatchKey kModeKey = c10::DispatchKey::TESTING_ONLY_GenericMode;

} // namespace kforge::runtime
