// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a forward may change besides its output: a TorchScript model's buffers and attributes (counters, caches,
// running statistics) and the random generators it draws from. Saved before checking forwards and put back before
// each and after the last, so that every checking forward starts from the same state (a model with a counter or with
// random noise computes the same thing each time) and checking a plan never changes what the user's next forward
// computes (kforge verify, re-validation).
#include "model/session_impl.h"

#include <ATen/core/Generator.h>

#include <memory>
#include <string>
#include <vector>

namespace kforge {

class SavedForwardState {
public:
    enum class Randomness { Replayed, Fresh };
    // Saves the state now, with the CPU generator's (and the session device's CUDA generator's). With
    // Randomness::Replayed restore() puts the generators back too: each forward then draws the same random numbers.
    SavedForwardState(ModelSession::Impl& impl, Randomness randomness);
    ~SavedForwardState(); // restore(), the generators included whatever the randomness: the user's next draw is as it
                          // would have been
    SavedForwardState(const SavedForwardState&) = delete;
    SavedForwardState& operator=(const SavedForwardState&) = delete;

    // Puts back every buffer and attribute a forward changed since the state was saved (and the generators' state
    // when replayed).
    void restore();
    // What a forward changed and restore() put back, for the report ("buffer 'count' of counter"); empty when none.
    const std::vector<std::string>& restored() const { return m_restoredNames; }
    // Parameters a forward wrote to in place: they are not saved (a copy of every weight would double the model's
    // memory) and so cannot be put back.
    const std::vector<std::string>& changedParameters() const { return m_changedParameters; }

private:
    struct Slot;
    struct GeneratorState {
        at::Generator generator;
        at::Tensor state;
    };
    void saveObject(const c10::intrusive_ptr<c10::ivalue::Object>& object, const std::string& path,
                    std::vector<const c10::ivalue::Object*>& seen);
    void restoreSlots();
    void restoreGenerators();

    std::vector<Slot> m_slots;
    std::vector<GeneratorState> m_generators;
    Randomness m_randomness;
    std::vector<std::string> m_restoredNames;
    std::vector<std::string> m_changedParameters;
};

} // namespace kforge
