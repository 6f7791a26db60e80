// SPDX-License-Identifier: Apache-2.0
#pragma once
// The same inputs for every forward: a model that changes its inputs in place (`x.sub_(0.5).div_(0.25)`, as
// preprocessing wrappers do) would otherwise see the last forward's result, and every command that runs it twice
// (verify's baselines, bench's rounds, a profile's iterations) would measure or judge a drifting input.
#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace kforge {

struct ForwardInputs {
    std::vector<c10::IValue> args;
    std::unordered_map<std::string, c10::IValue> kwargs;
};

// A deep copy: every tensor cloned, tuples, lists and dicts rebuilt with their types.
c10::IValue cloneInputValue(const c10::IValue& value);

// Watches a session's inputs through their tensors' version counters (bumped by every in-place write): while no
// forward writes to them, each forward gets them as they are (no copy); once one has, they are put back from a
// pristine copy and every later forward gets its own copy. New inputs (other tensors) start a new watch.
class FreshInputs {
public:
    // The inputs for one forward of `args`/`kwargs` (the session's).
    ForwardInputs take(std::vector<c10::IValue>& args, std::unordered_map<std::string, c10::IValue>& kwargs);
    // Whether a forward was seen writing to its inputs (from then on each forward gets a copy).
    bool inputsWritten() const;

private:
    struct Watched {
        at::Tensor tensor;
        std::int64_t version = -1; // -1: not watchable (an inference tensor cannot be written outside inference mode)
    };
    void watch(const std::vector<at::Tensor>& live);
    ForwardInputs pristineCopy() const;

    mutable std::mutex m_mutex;
    std::vector<Watched> m_watched;
    ForwardInputs m_pristine;
    bool m_written = false;
};

} // namespace kforge
