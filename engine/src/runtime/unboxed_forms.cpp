// SPDX-License-Identifier: Apache-2.0
#include "runtime/unboxed_forms.h"

#include "runtime/interposed_form.h"
#include "runtime/mode_key.h"

#include <ATen/core/boxing/impl/boxing.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <catalog_op_headers.inc> // <ATen/ops/<op>_ops.h> for every catalog op (generated)

#include <map>
#include <string>

namespace kforge::runtime {

// The typed entry of one overload; Op is LibTorch's operator struct (at::_ops::relu), Op::schema its signature.
template <class Op, class Signature = typename Op::schema> class UnboxedForm;

template <class Op, class Return, class... Args>
class UnboxedForm<Op, Return(Args...)> final : public c10::OperatorKernel {
public:
    UnboxedForm(const OpForm& form, const c10::OperatorHandle& op)
        : m_form(form, op), m_op(op), m_typed(op.typed<Return(Args...)>()),
          m_boxed(c10::BoxedKernel::makeFromFunctor(std::make_unique<InterposedForm>(form, op)))
    {
    }

    // C++ callers.
    Return operator()(c10::DispatchKeySet keys, Args... args)
    {
        ThreadState& thread = ThreadState::current();
        if (m_form.passesThrough(thread)) {
            ModeKeyExcluded noReentry(thread.dispatchKeys()); // nested ops reach the real kernels
            // Through our handle, inline: Op::redispatch is an out-of-line call that checks its own static handle.
            return m_typed.redispatch(keys & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, kModeKey),
                                      std::forward<Args>(args)...);
        }
        // What the dispatcher does for a boxed-only kernel: box, call, unbox (in place and out= ops return the
        // argument they wrote).
        return c10::impl::BoxedKernelWrapper<Return(Args...)>::call(m_boxed, m_op, keys, std::forward<Args>(args)...);
    }

    // Boxed callers: the boxed kernel itself, no unboxing on the way.
    void boxed(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack)
    {
        m_form(op, keys, stack);
    }

private:
    InterposedForm m_form;
    c10::OperatorHandle m_op;
    c10::TypedOperatorHandle<Return(Args...)> m_typed; // m_op, typed
    c10::BoxedKernel m_boxed; // another InterposedForm of the same form, for BoxedKernelWrapper
};

} // namespace kforge::runtime

namespace c10::impl {
// A KernelFunction made from an unboxed functor gets a generated boxed entry that unboxes the stack and calls the
// functor; ours calls the boxed kernel directly instead.
template <class Op, bool AllowLegacyTypes>
struct make_boxed_from_unboxed_functor<kforge::runtime::UnboxedForm<Op>, AllowLegacyTypes> final {
    static void call(OperatorKernel* functor, const OperatorHandle& op, DispatchKeySet keys, torch::jit::Stack* stack)
    {
        static_cast<kforge::runtime::UnboxedForm<Op>*>(functor)->boxed(op, keys, stack);
    }
};
} // namespace c10::impl

namespace kforge::runtime {
namespace {

using Factory = c10::KernelFunction (*)(const OpForm&, const c10::OperatorHandle&);

template <class Op> c10::KernelFunction make(const OpForm& form, const c10::OperatorHandle& op)
{
    return c10::KernelFunction::makeFromUnboxedFunctor<false, UnboxedForm<Op>>(
        std::make_unique<UnboxedForm<Op>>(form, op));
}

template <class Op> std::pair<std::string, Factory> entry()
{
    std::string key = Op::name;
    if (*Op::overload_name)
        key += std::string(".") + Op::overload_name;
    return {key, &make<Op>};
}

const std::map<std::string, Factory>& factories()
{
    static const std::map<std::string, Factory> all{
#define KFORGE_CATALOG_OP(Op) entry<at::_ops::Op>(),
#include <catalog_ops.inc>
#undef KFORGE_CATALOG_OP
    };
    return all;
}

} // namespace

std::optional<c10::KernelFunction> unboxedKernel(const OpForm& form, const c10::OperatorHandle& op)
{
    std::string key(form.op.name);
    if (!form.op.overload.empty()) {
        key += '.'; // (not `"." + string`: GCC 12 warns -Wstringop-overflow on that form)
        key += form.op.overload;
    }
    const auto it = factories().find(key);
    if (it == factories().end())
        return std::nullopt;
    return it->second(form, op);
}

} // namespace kforge::runtime
