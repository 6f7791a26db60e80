// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "model/session_impl.h"

namespace kforge {

// Opens impl.source, a .pt2 package: its module tree from the serialized graph, the interpreter that runs it
// (exported_runner.h) and, when the package holds them, its sample inputs. Throws kforge::Error naming the file.
void openExportedProgram(ModelSession::Impl& impl);

} // namespace kforge
