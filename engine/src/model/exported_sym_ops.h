// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Python callables torch.export leaves in a program with dynamic shapes: the arithmetic on symbolic sizes
// (`operator.mul(sym_size, 2)`, `torch.sym_max`, comparisons), serialized by name ("_operator.mul", "torch.sym_max",
// "math.trunc"; torch/_export/serde/serialize.py, _SYM_OPS). They run on ints, floats and bools, as Python would.
#include <ATen/core/ivalue.h>

#include <optional>
#include <string_view>

namespace kforge {

enum class SymOp {
    Add,
    Sub,
    Mul,
    FloorDiv,
    Mod,
    TrueDiv,
    Pow,
    Neg,
    Pos,
    LShift,
    RShift,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Not,
    Max,
    Min,
    Ite,
    ToInt,
    ToFloat,
    Sqrt,
    Trunc,
};

// The op a serialized target names; nullopt for any other target.
std::optional<SymOp> symOpOf(std::string_view target);
// How many arguments it takes.
int symOpArity(SymOp op);
// Its result on `args` (ints, floats, bools). Throws std::runtime_error for operands it cannot take (a division by
// zero, a tensor).
c10::IValue runSymOp(SymOp op, c10::ArrayRef<c10::IValue> args);

} // namespace kforge
