// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/runtime.h>

namespace kforge::runtime {

// Registers, once per process, the fallthrough fallback and one boxed kernel per supported op overload at
// kModeKey (R1). Safe to call from any thread; later calls return the first result.
const InterposerReport& ensureInterposer();

// The clean message of an error the engine raised inside a forward (a provider that threw, an abort at a
// breakpoint): the TorchScript interpreter rewraps exceptions, so the call guard's caller reads it here (R16).
const std::string& lastEngineError();
void setLastEngineError(std::string message);
void clearLastEngineError();

} // namespace kforge::runtime
