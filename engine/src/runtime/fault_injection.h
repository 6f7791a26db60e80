// SPDX-License-Identifier: Apache-2.0
#pragma once
// Test seam for fault injection (pre-hook transactionality R3, quality gates): a hook called before each
// push of a pre-hook; throwing from it fails that step.
#include <kforge/functions.h>

#include <atomic>

namespace kforge::runtime::faults {

using PushHook = void (*)(Function function, int planIndex);
extern std::atomic<PushHook> gBeforePush;
// Makes runtimes see the interposer's start-up self-test as failed (it runs once per process).
extern std::atomic<bool> gSelfTestFailed;

} // namespace kforge::runtime::faults
