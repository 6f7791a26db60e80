// SPDX-License-Identifier: Apache-2.0
#include "model/exported_sym_ops.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace kforge {
namespace {

struct Named {
    std::string_view target;
    SymOp op;
    int arity;
};

constexpr Named kOps[] = {
    {"_operator.add", SymOp::Add, 2},       {"_operator.sub", SymOp::Sub, 2},
    {"_operator.mul", SymOp::Mul, 2},       {"_operator.floordiv", SymOp::FloorDiv, 2},
    {"_operator.mod", SymOp::Mod, 2},       {"_operator.truediv", SymOp::TrueDiv, 2},
    {"_operator.pow", SymOp::Pow, 2},       {"_operator.neg", SymOp::Neg, 1},
    {"_operator.pos", SymOp::Pos, 1},       {"_operator.lshift", SymOp::LShift, 2},
    {"_operator.rshift", SymOp::RShift, 2}, {"_operator.eq", SymOp::Eq, 2},
    {"_operator.ne", SymOp::Ne, 2},         {"_operator.lt", SymOp::Lt, 2},
    {"_operator.le", SymOp::Le, 2},         {"_operator.gt", SymOp::Gt, 2},
    {"_operator.ge", SymOp::Ge, 2},         {"_operator.and_", SymOp::And, 2},
    {"_operator.or_", SymOp::Or, 2},        {"torch.sym_not", SymOp::Not, 1},
    {"torch.sym_max", SymOp::Max, 2},       {"torch.sym_min", SymOp::Min, 2},
    {"torch.sym_ite", SymOp::Ite, 3},       {"torch.sym_int", SymOp::ToInt, 1},
    {"torch.sym_float", SymOp::ToFloat, 1}, {"torch.sym_sqrt", SymOp::Sqrt, 1},
    {"math.trunc", SymOp::Trunc, 1},
};

// Python's int and float: bools are ints.
bool isInt(const c10::IValue& v) { return v.isInt() || v.isBool(); }
int64_t asInt(const c10::IValue& v) { return v.isBool() ? int64_t(v.toBool()) : v.toInt(); }
double asDouble(const c10::IValue& v)
{
    if (v.isDouble())
        return v.toDouble();
    if (isInt(v))
        return double(asInt(v));
    throw std::runtime_error("a symbolic size operation got " + v.tagKind() + ", not a number");
}

int64_t floorDiv(int64_t a, int64_t b)
{
    if (b == 0)
        throw std::runtime_error("integer division by zero in a symbolic size");
    const int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t pythonMod(int64_t a, int64_t b)
{
    if (b == 0)
        throw std::runtime_error("integer modulo by zero in a symbolic size");
    const int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

template <class IntOp, class FloatOp>
c10::IValue arithmetic(const c10::IValue& a, const c10::IValue& b, IntOp onInts, FloatOp onFloats)
{
    if (isInt(a) && isInt(b))
        return onInts(asInt(a), asInt(b));
    return onFloats(asDouble(a), asDouble(b));
}

template <class Compare> c10::IValue comparison(const c10::IValue& a, const c10::IValue& b, Compare compare)
{
    if (isInt(a) && isInt(b))
        return compare(asInt(a), asInt(b));
    return compare(asDouble(a), asDouble(b));
}

bool truth(const c10::IValue& v) { return v.isBool() ? v.toBool() : asDouble(v) != 0.0; }

} // namespace

std::optional<SymOp> symOpOf(std::string_view target)
{
    for (const Named& n : kOps)
        if (n.target == target)
            return n.op;
    return std::nullopt;
}

int symOpArity(SymOp op)
{
    for (const Named& n : kOps)
        if (n.op == op)
            return n.arity;
    return 0;
}

c10::IValue runSymOp(SymOp op, c10::ArrayRef<c10::IValue> args)
{
    if (int(args.size()) != symOpArity(op))
        throw std::runtime_error("a symbolic size operation got " + std::to_string(args.size()) + " argument(s)");
    const c10::IValue& a = args[0];
    const c10::IValue& b = args.size() > 1 ? args[1] : args[0];
    switch (op) {
    case SymOp::Add:
        return arithmetic(
            a, b, [](int64_t x, int64_t y) { return x + y; }, [](double x, double y) { return x + y; });
    case SymOp::Sub:
        return arithmetic(
            a, b, [](int64_t x, int64_t y) { return x - y; }, [](double x, double y) { return x - y; });
    case SymOp::Mul:
        return arithmetic(
            a, b, [](int64_t x, int64_t y) { return x * y; }, [](double x, double y) { return x * y; });
    case SymOp::FloorDiv:
        return arithmetic(a, b, floorDiv, [](double x, double y) { return std::floor(x / y); });
    case SymOp::Mod:
        return arithmetic(a, b, pythonMod, [](double x, double y) { return x - y * std::floor(x / y); });
    case SymOp::TrueDiv:
        if (asDouble(b) == 0.0)
            throw std::runtime_error("division by zero in a symbolic size");
        return asDouble(a) / asDouble(b);
    case SymOp::Pow:
        if (isInt(a) && isInt(b) && asInt(b) >= 0) {
            int64_t result = 1;
            for (int64_t i = 0; i < asInt(b); ++i)
                result *= asInt(a);
            return result;
        }
        return std::pow(asDouble(a), asDouble(b));
    case SymOp::Neg:
        return isInt(a) ? c10::IValue(-asInt(a)) : c10::IValue(-asDouble(a));
    case SymOp::Pos:
        return isInt(a) ? c10::IValue(asInt(a)) : c10::IValue(asDouble(a));
    case SymOp::LShift:
        return asInt(a) << asInt(b);
    case SymOp::RShift:
        return asInt(a) >> asInt(b);
    case SymOp::Eq:
        return comparison(a, b, [](auto x, auto y) { return x == y; });
    case SymOp::Ne:
        return comparison(a, b, [](auto x, auto y) { return x != y; });
    case SymOp::Lt:
        return comparison(a, b, [](auto x, auto y) { return x < y; });
    case SymOp::Le:
        return comparison(a, b, [](auto x, auto y) { return x <= y; });
    case SymOp::Gt:
        return comparison(a, b, [](auto x, auto y) { return x > y; });
    case SymOp::Ge:
        return comparison(a, b, [](auto x, auto y) { return x >= y; });
    case SymOp::And:
        return a.isBool() && b.isBool() ? c10::IValue(a.toBool() && b.toBool()) : c10::IValue(asInt(a) & asInt(b));
    case SymOp::Or:
        return a.isBool() && b.isBool() ? c10::IValue(a.toBool() || b.toBool()) : c10::IValue(asInt(a) | asInt(b));
    case SymOp::Not:
        return !truth(a);
    case SymOp::Max:
        return comparison(a, b, [](auto x, auto y) { return x < y; }).toBool() ? b : a;
    case SymOp::Min:
        return comparison(a, b, [](auto x, auto y) { return y < x; }).toBool() ? b : a;
    case SymOp::Ite:
        return truth(a) ? args[1] : args[2];
    case SymOp::ToInt:
        return isInt(a) ? asInt(a) : int64_t(std::trunc(asDouble(a)));
    case SymOp::ToFloat:
        return asDouble(a);
    case SymOp::Sqrt:
        return std::sqrt(asDouble(a));
    case SymOp::Trunc:
        return int64_t(std::trunc(asDouble(a)));
    }
    return {};
}

} // namespace kforge
