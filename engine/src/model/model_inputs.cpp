// SPDX-License-Identifier: Apache-2.0
#include "model/model_inputs.h"

#include <kforge/error.h>

#include "model/torch_errors.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace kforge {
namespace {

// Python's dtype names of the types kforge makes inputs of and names in digests.
constexpr std::pair<at::ScalarType, const char*> kDtypeNames[] = {
    {at::kFloat, "float32"}, {at::kHalf, "float16"}, {at::kBFloat16, "bfloat16"}, {at::kDouble, "float64"},
    {at::kLong, "int64"},    {at::kInt, "int32"},    {at::kShort, "int16"},       {at::kChar, "int8"},
    {at::kByte, "uint8"},    {at::kBool, "bool"}};

at::ScalarType scalarTypeOf(const std::string& dtype)
{
    for (const auto& [type, name] : kDtypeNames)
        if (dtype == name)
            return type;
    throw std::out_of_range("no dtype named '" + dtype + "'");
}

std::string gibibytes(double bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / double(1ull << 30));
    return text;
}

// Refuses a tensor that cannot fit in this machine's memory before allocating it: where the kernel overcommits
// (the H200 machine does), the allocation succeeds and filling it hangs the process instead of failing.
void checkFitsInMemory(const TensorSpec& spec, at::ScalarType type)
{
    double elements = 1;
    for (std::int64_t d : spec.shape)
        elements *= double(d);
    // Floating inputs are drawn in float32 and then converted: both exist for a moment.
    const double bytes =
        elements * double(c10::elementSize(type) + (at::isFloatingType(type) && type != at::kFloat ? 4 : 0));
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || pageSize <= 0)
        return; // unknown: let the allocator decide
    const double memory = double(pages) * double(pageSize);
    TORCH_CHECK(bytes <= memory, "it needs ", gibibytes(bytes), ", more than this machine's ", gibibytes(memory),
                " of memory");
}

} // namespace

at::Tensor makeInputTensor(const TensorSpec& spec)
{
    auto gen = at::make_generator<at::CPUGeneratorImpl>(1234);
    const at::ScalarType type = scalarTypeOf(spec.dtype);
    checkFitsInMemory(spec, type);
    if (at::isFloatingType(type))
        return at::normal(0.0, 1.0, spec.shape, gen).to(type);
    if (type == at::kBool)
        return at::zeros(spec.shape, at::kBool);
    return at::randint(0, 10, spec.shape, gen, at::TensorOptions().dtype(type));
}

std::string dtypeName(at::ScalarType type)
{
    for (const auto& [known, name] : kDtypeNames)
        if (type == known)
            return name;
    if (type == at::kComplexFloat) // outputs only: inputs are not made of complex dtypes
        return "complex64";
    if (type == at::kComplexDouble)
        return "complex128";
    return c10::toString(type);
}

std::string describeIValue(const c10::IValue& value)
{
    if (value.isTensor()) {
        const at::Tensor& t = value.toTensor();
        std::string shape;
        for (int64_t d : t.sizes()) {
            if (!shape.empty())
                shape += ',';
            shape += std::to_string(d); // (not `"," + to_string`: GCC 12 warns -Wrestrict on that form)
        }
        return dtypeName(t.scalar_type()) + "[" + shape + "]";
    }
    return value.tagKind();
}

LoadedInputs loadInputsFile(const std::string& path)
{
    const std::string where = "inputs file '" + path + "'";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw Error(where, std::filesystem::exists(path, ec) ? "is not a regular file" : "file not found");
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.empty())
        throw Error(where, "file is empty");
    c10::IValue value;
    try {
        value = torch::pickle_load(bytes);
    } catch (const c10::Error& e) {
        throw Error(where, "not a torch.save file (" + describeTorchError(e) + ")");
    } catch (const std::exception& e) {
        throw Error(where, std::string("not a torch.save file (") + firstLine(e.what()) + ")");
    }
    return inputsFromValue(value, where);
}

c10::IValue typedAs(const c10::IValue& value, const c10::TypePtr& type)
{
    if (const auto optional = type->cast<c10::OptionalType>())
        return value.isNone() ? value : typedAs(value, optional->getElementType());
    if (value.isList())
        if (const auto list = type->cast<c10::ListType>()) {
            const c10::TypePtr element = list->getElementType();
            c10::impl::GenericList out(element);
            for (const c10::IValue& item : value.toListRef()) {
                c10::IValue typed = typedAs(item, element);
                if (!typed.type()->isSubtypeOf(*element))
                    return value;
                out.push_back(std::move(typed));
            }
            return out;
        }
    if (value.isGenericDict())
        if (const auto dict = type->cast<c10::DictType>()) {
            c10::impl::GenericDict out(dict->getKeyType(), dict->getValueType());
            for (const auto& item : value.toGenericDict()) {
                c10::IValue key = typedAs(item.key(), dict->getKeyType());
                c10::IValue mapped = typedAs(item.value(), dict->getValueType());
                if (!key.type()->isSubtypeOf(*dict->getKeyType()) || !mapped.type()->isSubtypeOf(*dict->getValueType()))
                    return value;
                out.insert(std::move(key), std::move(mapped));
            }
            return out;
        }
    if (value.isTuple())
        if (const auto tuple = type->cast<c10::TupleType>();
            tuple && tuple->elements().size() == value.toTupleRef().size()) {
            std::vector<c10::IValue> elements;
            for (size_t i = 0; i < tuple->elements().size(); ++i)
                elements.push_back(typedAs(value.toTupleRef().elements()[i], tuple->elements()[i]));
            return c10::ivalue::Tuple::create(std::move(elements));
        }
    return value;
}

LoadedInputs inputsFromValue(const c10::IValue& value, const std::string& where)
{
    LoadedInputs out;
    const auto addArg = [&](const c10::IValue& v) {
        out.args.push_back(v);
        out.descriptions.push_back(describeIValue(v));
    };
    if (value.isTuple()) {
        for (const auto& v : value.toTupleRef().elements())
            addArg(v);
    } else if (value.isList()) {
        for (const auto& v : value.toListRef())
            addArg(v);
    } else if (value.isGenericDict()) {
        for (const auto& item : value.toGenericDict()) {
            if (!item.key().isString())
                throw Error(where, "a dict of inputs needs string keys (the forward's argument names)");
            out.kwargs[item.key().toStringRef()] = item.value();
            out.descriptions.push_back(item.key().toStringRef() + "=" + describeIValue(item.value()));
        }
    } else if (value.isTensor()) {
        addArg(value);
    } else {
        throw Error(where, "expected a tensor, a tuple, a list or a dict of tensors, found " + value.tagKind());
    }
    return out;
}

} // namespace kforge
