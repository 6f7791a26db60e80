// SPDX-License-Identifier: Apache-2.0
#include "profiling/op_input_shapes.h"

#include <ATen/record_function.h>

namespace kforge::profiling {
namespace {

void appendSizes(std::string& out, c10::IntArrayRef sizes)
{
    out += '[';
    for (size_t i = 0; i < sizes.size(); ++i)
        out += (i ? ", " : "") + std::to_string(sizes[i]);
    out += ']';
}

} // namespace

std::string opInputShapes(const at::RecordFunction& fn)
{
    // A boxed call records the interpreter's stack, whose top holds the op's arguments: keep the schema's count.
    c10::ArrayRef<const c10::IValue> inputs = fn.inputs();
    const size_t arguments = fn.num_inputs();
    if (arguments < inputs.size())
        inputs = inputs.slice(inputs.size() - arguments);
    std::string out = "[";
    bool first = true;
    for (const c10::IValue& input : inputs) {
        out += first ? "" : ", ";
        first = false;
        if (input.isTensor() && input.toTensor().defined()) {
            appendSizes(out, input.toTensor().sizes());
        } else if (input.isTensorList()) {
            out += '[';
            bool firstTensor = true;
            for (const at::Tensor& t : input.toTensorVector()) {
                out += firstTensor ? "" : ", ";
                firstTensor = false;
                appendSizes(out, t.defined() ? t.sizes() : c10::IntArrayRef());
            }
            out += ']';
        } else {
            out += "[]";
        }
    }
    return out + ']';
}

} // namespace kforge::profiling
