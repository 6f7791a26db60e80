#pragma once
// kforge::module_enter(Any self) / kforge::module_exit(Any self): side-effecting ops inserted into each
// module class's forward graph (R2). CONSERVATIVE alias analysis keeps them through DCE and inlining.
#include <ATen/core/interned_strings.h>

namespace kforge::runtime {

c10::Symbol moduleEnterSymbol();
c10::Symbol moduleExitSymbol();

} // namespace kforge::runtime
