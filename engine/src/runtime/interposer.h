#pragma once
#include <kforge/runtime.h>

namespace kforge::runtime {

// Registers, once per process, the fallthrough fallback and one boxed kernel per supported op overload at
// kModeKey (R1). Safe to call from any thread; later calls return the first result.
const InterposerReport& ensureInterposer();

// Set by the interposed kernel when a provider throws: the clean message for the call guard (R16).
const std::string& lastProviderError();
void clearLastProviderError();

} // namespace kforge::runtime
