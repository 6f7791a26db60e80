// SPDX-License-Identifier: Apache-2.0
// The one source of the objects that own the precompiled headers (KForgePrecompiledHeaders.cmake).
