// SPDX-License-Identifier: Apache-2.0
#include "model/exported_values.h"

#include "model/pickled_weights.h"

#include <kforge/error.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace kforge {
namespace {

using nlohmann::json;

at::ScalarType scalarType(int serde, const std::string& where)
{
    switch (serde) {
    case 1:
        return at::kByte;
    case 2:
        return at::kChar;
    case 3:
        return at::kShort;
    case 4:
        return at::kInt;
    case 5:
        return at::kLong;
    case 6:
        return at::kHalf;
    case 7:
        return at::kFloat;
    case 8:
        return at::kDouble;
    case 9:
        return at::kComplexHalf;
    case 10:
        return at::kComplexFloat;
    case 11:
        return at::kComplexDouble;
    case 12:
        return at::kBool;
    case 13:
        return at::kBFloat16;
    case 28:
        return at::kUInt16;
    case 29:
        return at::kFloat8_e4m3fn;
    case 30:
        return at::kFloat8_e5m2;
    case 31:
        return at::kFloat8_e4m3fnuz;
    case 32:
        return at::kFloat8_e5m2fnuz;
    default:
        throw Error(where, "unknown serialized dtype " + std::to_string(serde));
    }
}

at::MemoryFormat memoryFormat(int serde)
{
    switch (serde) {
    case 2:
        return at::MemoryFormat::ChannelsLast;
    case 3:
        return at::MemoryFormat::ChannelsLast3d;
    case 4:
        return at::MemoryFormat::Preserve;
    default:
        return at::MemoryFormat::Contiguous;
    }
}

// The serializer writes inf and nan as strings.
double number(const json& value)
{
    if (!value.is_string())
        return value.get<double>();
    const std::string text = value;
    if (text == "Infinity" || text == "inf")
        return std::numeric_limits<double>::infinity();
    if (text == "-Infinity" || text == "-inf")
        return -std::numeric_limits<double>::infinity();
    if (text == "NaN" || text == "nan")
        return std::numeric_limits<double>::quiet_NaN();
    return std::stod(text);
}

std::vector<int64_t> ints(const json& list)
{
    std::vector<int64_t> out;
    for (const json& v : list)
        out.push_back(v.is_object() ? v.value("as_int", int64_t(0)) : v.get<int64_t>());
    return out;
}

at::Tensor storedTensor(const ExportedPackage& package, const std::string& record, const json& meta,
                        const std::string& where)
{
    const at::ScalarType type = scalarType(meta.value("dtype", 7), where);
    const std::vector<int64_t> sizes = ints(meta.value("sizes", json::array()));
    const std::vector<int64_t> strides = ints(meta.value("strides", json::array()));
    const int64_t offset = meta.value("storage_offset", json::object()).value("as_int", int64_t(0));
    auto [data, bytes] = package.reader->getRecord(record);
    const int64_t elementSize = int64_t(c10::elementSize(type));
    if (bytes % elementSize != 0)
        throw Error(where, record + " holds " + std::to_string(bytes) + " bytes, not a whole number of " +
                               std::string(c10::toString(type)) + " elements");
    int64_t needed = sizes.empty() ? 1 : 0; // elements the view reaches, past the offset
    if (!sizes.empty() && std::all_of(sizes.begin(), sizes.end(), [](int64_t s) { return s > 0; })) {
        needed = 1;
        for (size_t d = 0; d < sizes.size(); ++d)
            needed += (sizes[d] - 1) * strides[d];
    }
    if (int64_t(bytes) / elementSize < offset + needed)
        throw Error(where, record + " is too small for its tensor's sizes and strides");
    at::Tensor storage = at::empty({int64_t(bytes) / elementSize}, at::TensorOptions().dtype(type));
    if (bytes)
        std::memcpy(storage.data_ptr(), data.get(), bytes);
    return storage.as_strided(sizes, strides, offset);
}

} // namespace

std::unordered_map<std::string, at::Tensor> exportedStoredTensors(const ExportedPackage& package)
{
    std::unordered_map<std::string, at::Tensor> out;
    for (const auto& [config, folder] :
         {std::pair{&package.weightsConfig, "data/weights/"}, {&package.constantsConfig, "data/constants/"}}) {
        if (!config->is_object() || !config->contains("config"))
            continue;
        for (const auto& [name, entry] : config->at("config").items()) {
            const std::string where = package.path + ": " + folder + entry.value("path_name", "");
            if (entry.value("use_pickle", false)) {
                const auto [data, bytes] = package.reader->getRecord(folder + entry.value("path_name", ""));
                throw Error(
                    where, pickledWeightRefusal(name, pickledTensorClass(static_cast<const char*>(data.get()), bytes)));
            }
            out.emplace(name, storedTensor(package, folder + entry.value("path_name", ""),
                                           entry.value("tensor_meta", json::object()), where));
        }
    }
    return out;
}

ExportedSource exportedSource(const json& argument, const std::string& where,
                              const std::function<int(const std::string&)>& slotOf)
{
    using Kind = ExportedSource::Kind;
    if (!argument.is_object() || argument.empty())
        throw Error(where, "an empty argument");
    const auto& [kind, value] = *argument.items().begin();
    ExportedSource s;
    if (kind == "as_none")
        return s;
    if (kind == "as_tensor")
        return ExportedSource::ofSlot(slotOf(value.at("name")));
    if (kind == "as_optional_tensor")
        return value.contains("as_tensor") ? ExportedSource::ofSlot(slotOf(value.at("as_tensor").at("name"))) : s;
    if (kind == "as_tensors" || kind == "as_optional_tensors") {
        s.kind = kind == "as_tensors" ? Kind::TensorList : Kind::OptionalTensorList;
        for (const json& t : value)
            s.slots.push_back(t.contains("as_tensor") ? slotOf(t.at("as_tensor").at("name"))
                              : t.contains("name")    ? slotOf(t.at("name"))
                                                      : -1);
        return s;
    }
    if (kind == "as_sym_int")
        return value.contains("as_name") ? ExportedSource::ofSlot(slotOf(value.at("as_name")))
                                         : ExportedSource::ofConstant(value.at("as_int").get<int64_t>());
    if (kind == "as_sym_bool")
        return value.contains("as_name") ? ExportedSource::ofSlot(slotOf(value.at("as_name")))
                                         : ExportedSource::ofConstant(value.at("as_bool").get<bool>());
    if (kind == "as_sym_float")
        return value.contains("as_name") ? ExportedSource::ofSlot(slotOf(value.at("as_name")))
                                         : ExportedSource::ofConstant(number(value.at("as_float")));
    if (kind == "as_sym_ints") {
        s.kind = Kind::IntList;
        for (const json& v : value) {
            s.slots.push_back(v.contains("as_name") ? slotOf(v.at("as_name")) : -1);
            s.ints.push_back(v.value("as_int", int64_t(0)));
        }
        return s;
    }
    if (kind == "as_int")
        s.constant = value.get<int64_t>();
    else if (kind == "as_ints")
        s.constant = ints(value);
    else if (kind == "as_float")
        s.constant = number(value);
    else if (kind == "as_floats") {
        std::vector<double> v;
        for (const json& f : value)
            v.push_back(number(f));
        s.constant = v;
    } else if (kind == "as_bool")
        s.constant = value.get<bool>();
    else if (kind == "as_bools")
        s.constant = value.get<std::vector<bool>>();
    else if (kind == "as_string")
        s.constant = value.get<std::string>();
    else if (kind == "as_strings")
        s.constant = value.get<std::vector<std::string>>();
    else if (kind == "as_scalar_type")
        s.constant = scalarType(value.get<int>(), where);
    else if (kind == "as_memory_format")
        s.constant = memoryFormat(value.get<int>());
    else if (kind == "as_layout")
        s.constant = value.get<int>() == 7 ? at::kStrided : at::kSparse;
    else if (kind == "as_device")
        s.constant = c10::Device(value.value("type", std::string("cpu")) +
                                 (value.contains("index") && !value.at("index").is_null()
                                      ? ":" + std::to_string(value.at("index").get<int>())
                                      : ""));
    else
        throw Error(where, "an argument of kind " + kind + ", which kforge cannot run yet");
    return s;
}

c10::IValue exportedValue(const ExportedSource& source, const std::vector<c10::IValue>& slots)
{
    using Kind = ExportedSource::Kind;
    switch (source.kind) {
    case Kind::Constant:
        return source.constant;
    case Kind::Slot:
        return slots[source.slot];
    case Kind::TensorList: {
        c10::List<at::Tensor> list;
        list.reserve(source.slots.size());
        for (int s : source.slots)
            list.push_back(slots[s].toTensor());
        return list;
    }
    case Kind::OptionalTensorList: {
        c10::List<std::optional<at::Tensor>> list;
        for (int s : source.slots)
            list.push_back(s < 0 ? std::nullopt : std::optional<at::Tensor>(slots[s].toTensor()));
        return list;
    }
    case Kind::IntList: {
        std::vector<int64_t> values = source.ints;
        for (size_t i = 0; i < values.size(); ++i)
            if (source.slots[i] >= 0)
                values[i] = slots[source.slots[i]].toInt();
        return values;
    }
    }
    return {};
}

json parseTreeSpec(const std::string& text, const std::string& where)
{
    const json parsed = parseJsonText(text, where);
    if (!parsed.is_array() || parsed.size() != 2 || !parsed[1].is_object())
        throw Error(where, "a tree spec that is not [version, spec]");
    return parsed[1];
}

namespace {

// The context of a dict node is a JSON text of its keys.
std::vector<c10::IValue> dictKeys(const json& node)
{
    std::vector<c10::IValue> keys;
    const json context = node.value("context", json()).is_string()
                             ? json::parse(node.at("context").get<std::string>(), nullptr, false)
                             : json();
    if (context.is_array())
        for (const json& key : context)
            keys.push_back(key.is_string() ? c10::IValue(key.get<std::string>()) : c10::IValue(key.get<int64_t>()));
    return keys;
}

c10::IValue unflatten(const json& node, const std::vector<c10::IValue>& flat, size_t& next)
{
    const json type = node.value("type", json());
    const json children = node.value("children_spec", json::array());
    if (type.is_null())
        return next < flat.size() ? flat[next++] : c10::IValue();
    std::vector<c10::IValue> values;
    for (const json& child : children)
        values.push_back(unflatten(child, flat, next));
    const std::string name = type;
    // Dicts, and the mappings other libraries register as pytree nodes with their keys as context (Hugging Face's
    // ModelOutput: "transformers.modeling_outputs.CausalLMOutputWithPast" with ["logits"]): named outputs.
    const auto keys = dictKeys(node);
    const bool keyed = !keys.empty() && keys.size() == values.size() &&
                       std::all_of(keys.begin(), keys.end(), [](const c10::IValue& k) { return k.isString(); });
    if (name.find("dict") != std::string::npos || name.find("Dict") != std::string::npos ||
        (keyed && name != "builtins.tuple" && name != "builtins.list")) {
        c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
        if (!keys.empty() && keys.front().isInt())
            dict = c10::impl::GenericDict(c10::IntType::get(), c10::AnyType::get());
        for (size_t i = 0; i < values.size() && i < keys.size(); ++i)
            dict.insert(keys[i], values[i]);
        return dict;
    }
    if (name == "builtins.list") {
        c10::impl::GenericList list(c10::AnyType::get());
        for (auto& v : values)
            list.push_back(v);
        return list;
    }
    return c10::ivalue::Tuple::create(std::move(values)); // tuples, named tuples, torch.return_types
}

} // namespace

c10::IValue unflattenTreeSpec(const json& spec, const std::vector<c10::IValue>& flat)
{
    size_t next = 0;
    return unflatten(spec, flat, next);
}

std::vector<std::string> treeSpecKeywords(const json& inSpec)
{
    std::vector<std::string> names;
    const json children = inSpec.value("children_spec", json::array());
    if (children.size() == 2)
        for (const c10::IValue& key : dictKeys(children[1]))
            if (key.isString())
                names.push_back(key.toStringRef());
    return names;
}

} // namespace kforge
