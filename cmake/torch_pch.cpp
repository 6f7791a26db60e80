// SPDX-License-Identifier: Apache-2.0
// The one source of the objects that own the precompiled LibTorch headers (KForgePrecompiledTorch.cmake).
