// SPDX-License-Identifier: Apache-2.0
#include "model/forward_state.h"

#include "model/fresh_inputs.h"
#include "model/program_runner.h"

#include <ATen/Context.h>
#include <ATen/core/grad_mode.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <mutex>

namespace kforge {

struct SavedForwardState::Slot {
    c10::intrusive_ptr<c10::ivalue::Object> object; // null for a program's buffer (written in place only)
    size_t index = 0;
    std::string name;  // "blocks.0.attn.count": for the report
    c10::IValue value; // the slot's value when saved (for a tensor: the tensor object itself)
    at::Tensor copy;   // a tensor's values when saved; undefined for a parameter (not copied)
    std::int64_t version = -1;
    bool parameter = false;
    bool container = false; // a list or dict: saved as a deep copy, put back as a fresh one
};

namespace {

std::int64_t stateVersionOf(const at::Tensor& t)
{
    return t.defined() && !t.is_inference() ? std::int64_t(t._version()) : -1;
}

std::string attributePath(const std::string& path, const std::string& name)
{
    return path.empty() ? name : path + "." + name;
}

} // namespace

void SavedForwardState::saveObject(const c10::intrusive_ptr<c10::ivalue::Object>& object, const std::string& path,
                                   std::vector<const c10::ivalue::Object*>& seen)
{
    if (std::find(seen.begin(), seen.end(), object.get()) != seen.end())
        return; // a module under two names, or an object that refers back to its owner
    seen.push_back(object.get());
    const c10::ClassTypePtr type = object->type();
    for (size_t i = 0; i < object->slots().size(); ++i) {
        const c10::IValue& value = object->getSlot(i);
        const std::string name = attributePath(path, type->getAttributeName(i));
        if (value.isObject()) {
            saveObject(value.toObject(), name, seen); // a submodule (or a scripted class instance)
            continue;
        }
        Slot slot;
        slot.object = object;
        slot.index = i;
        slot.name = name;
        slot.value = value;
        if (value.isTensor()) {
            const at::Tensor& t = value.toTensor();
            slot.parameter = type->is_parameter(i);
            slot.version = stateVersionOf(t);
            if (t.defined() && !slot.parameter)
                slot.copy = t.clone();
        } else if (value.isList() || value.isGenericDict()) {
            slot.container = true; // mutable in place: kept as a copy, put back as a fresh one
            slot.value = cloneInputValue(value);
        }
        m_slots.push_back(std::move(slot));
    }
}

SavedForwardState::SavedForwardState(ModelSession::Impl& impl, Randomness randomness) : m_randomness(randomness)
{
    at::RecordFunctionGuard notRecorded(false);
    at::NoGradGuard noGrad;
    std::vector<const c10::ivalue::Object*> seen;
    if (!impl.program) {
        saveObject(impl.module._ivalue(), "", seen);
    } else { // a program's buffers, which its graph may write to in place (a counter's add_)
        for (auto& [name, tensor] : impl.program->stateTensors()) {
            Slot slot;
            slot.name = name;
            slot.value = tensor;
            slot.version = stateVersionOf(tensor);
            slot.copy = tensor.clone();
            m_slots.push_back(std::move(slot));
        }
    }
    std::vector<at::Generator> generators{at::detail::getDefaultCPUGenerator()};
    const c10::Device device(impl.device);
    if (device.is_cuda() && at::globalContext().hasCUDA())
        generators.push_back(at::globalContext().defaultGenerator(device));
    for (at::Generator& g : generators) {
        std::lock_guard lock(g.mutex());
        m_generators.push_back({g, g.get_state()});
    }
}

SavedForwardState::~SavedForwardState()
{
    try {
        restoreSlots();
        restoreGenerators();
    } catch (...) { // a destructor must not throw; what could not be put back stays as the last forward left it
    }
}

void SavedForwardState::restore()
{
    restoreSlots();
    if (m_randomness == Randomness::Replayed)
        restoreGenerators();
}

void SavedForwardState::restoreGenerators()
{
    for (GeneratorState& g : m_generators) {
        std::lock_guard lock(g.generator.mutex());
        g.generator.set_state(g.state);
    }
}

void SavedForwardState::restoreSlots()
{
    at::RecordFunctionGuard notRecorded(false);
    at::NoGradGuard noGrad;
    const auto note = [](std::vector<std::string>& names, const std::string& name) {
        if (std::find(names.begin(), names.end(), name) == names.end())
            names.push_back(name);
    };
    for (Slot& slot : m_slots) {
        const c10::IValue now = slot.object ? slot.object->getSlot(slot.index) : slot.value; // a program's: in place
        if (slot.container) {
            slot.object->setSlot(slot.index, cloneInputValue(slot.value));
            continue;
        }
        if (!slot.value.isTensor()) {
            if (!(now == slot.value)) {
                slot.object->setSlot(slot.index, slot.value);
                note(m_restoredNames, slot.name);
            }
            continue;
        }
        const at::Tensor& saved = slot.value.toTensor();
        const bool replaced =
            slot.object && (!now.isTensor() || now.toTensor().unsafeGetTensorImpl() != saved.unsafeGetTensorImpl());
        const bool written = slot.version >= 0 && stateVersionOf(saved) != slot.version;
        if (slot.parameter) {
            if (written || replaced)
                note(m_changedParameters, slot.name);
            continue;
        }
        if (replaced)
            slot.object->setSlot(slot.index, slot.value);
        if (written) {
            at::Tensor target = saved;
            if (target.sizes().equals(slot.copy.sizes()) && target.dtype() == slot.copy.dtype())
                target.copy_(slot.copy);
            else
                target.set_(slot.copy.clone());
            slot.version = stateVersionOf(target);
        }
        if (replaced || written)
            note(m_restoredNames, slot.name);
    }
}

} // namespace kforge
