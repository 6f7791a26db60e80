// SPDX-License-Identifier: Apache-2.0
#include "model/fresh_inputs.h"

#include <ATen/record_function.h>
#include <ATen/core/Dict.h>
#include <ATen/core/List.h>
#include <ATen/core/grad_mode.h>

namespace kforge {
namespace {

void collectTensors(const c10::IValue& value, std::vector<at::Tensor>& out)
{
    if (value.isTensor()) {
        out.push_back(value.toTensor());
    } else if (value.isTuple()) {
        for (const auto& e : value.toTupleRef().elements())
            collectTensors(e, out);
    } else if (value.isList()) {
        for (const c10::IValue& e : value.toListRef())
            collectTensors(e, out);
    } else if (value.isGenericDict()) {
        for (const auto& item : value.toGenericDict())
            collectTensors(item.value(), out);
    }
}

std::vector<at::Tensor> tensorsOf(const std::vector<c10::IValue>& args,
                                  const std::unordered_map<std::string, c10::IValue>& kwargs)
{
    std::vector<at::Tensor> out;
    for (const auto& a : args)
        collectTensors(a, out);
    for (const auto& [name, value] : kwargs)
        collectTensors(value, out);
    return out;
}

std::int64_t inputVersionOf(const at::Tensor& t)
{
    if (!t.defined() || t.is_inference())
        return -1;
    return std::int64_t(t._version());
}

} // namespace

c10::IValue cloneInputValue(const c10::IValue& value)
{
    if (value.isTensor()) {
        const at::Tensor& t = value.toTensor();
        return t.defined() ? c10::IValue(t.clone()) : value;
    }
    if (value.isTuple()) {
        const auto& tuple = value.toTupleRef();
        std::vector<c10::IValue> elements;
        for (const auto& e : tuple.elements())
            elements.push_back(cloneInputValue(e));
        return c10::ivalue::Tuple::createNamed(std::move(elements), tuple.type());
    }
    if (value.isList()) {
        const c10::List<c10::IValue> list = value.toList();
        c10::impl::GenericList out(list.elementType());
        out.reserve(list.size());
        for (size_t i = 0; i < list.size(); ++i)
            out.push_back(cloneInputValue(list.get(i)));
        return out;
    }
    if (value.isGenericDict()) {
        const c10::impl::GenericDict dict = value.toGenericDict();
        c10::impl::GenericDict out(dict.keyType(), dict.valueType());
        for (const auto& item : dict)
            out.insert(item.key(), cloneInputValue(item.value()));
        return out;
    }
    return value; // numbers, strings, None: immutable
}

void FreshInputs::watch(const std::vector<at::Tensor>& live)
{
    m_watched.clear();
    for (const at::Tensor& t : live)
        m_watched.push_back({t, inputVersionOf(t)});
}

ForwardInputs FreshInputs::pristineCopy() const
{
    ForwardInputs copy;
    for (const auto& a : m_pristine.args)
        copy.args.push_back(cloneInputValue(a));
    for (const auto& [name, value] : m_pristine.kwargs)
        copy.kwargs.emplace(name, cloneInputValue(value));
    return copy;
}

ForwardInputs FreshInputs::take(std::vector<c10::IValue>& args, std::unordered_map<std::string, c10::IValue>& kwargs)
{
    std::lock_guard lock(m_mutex);
    // The copies are ours, not the model's: neither a profile's op records nor autograd should see them.
    at::RecordFunctionGuard notRecorded(false);
    at::NoGradGuard noGrad;
    const std::vector<at::Tensor> live = tensorsOf(args, kwargs);
    const bool sameInputs =
        live.size() == m_watched.size() &&
        std::equal(live.begin(), live.end(), m_watched.begin(), [](const auto& t, const Watched& w) {
            return t.unsafeGetTensorImpl() == w.tensor.unsafeGetTensorImpl();
        });
    if (!sameInputs) { // new inputs (set, loaded, moved to another device): their values now are the pristine ones
        m_written = false;
        m_pristine.args.clear();
        m_pristine.kwargs.clear();
        for (const auto& a : args)
            m_pristine.args.push_back(cloneInputValue(a));
        for (const auto& [name, value] : kwargs)
            m_pristine.kwargs.emplace(name, cloneInputValue(value));
        watch(live);
    } else if (!m_written) {
        m_written = std::any_of(m_watched.begin(), m_watched.end(), [](const Watched& w) {
            return w.version >= 0 && inputVersionOf(w.tensor) != w.version;
        });
        if (m_written) { // a forward wrote to them: the session's inputs get their values back, once
            ForwardInputs restored = pristineCopy();
            args = std::move(restored.args);
            kwargs = std::move(restored.kwargs);
            watch(tensorsOf(args, kwargs));
        }
    }
    if (m_written)
        return pristineCopy();
    return {args, kwargs};
}

bool FreshInputs::inputsWritten() const
{
    std::lock_guard lock(m_mutex);
    return m_written;
}

} // namespace kforge
