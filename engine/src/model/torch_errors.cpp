// SPDX-License-Identifier: Apache-2.0
#include "model/torch_errors.h"

#include <kforge/error.h>
#include <kforge/exported_program.h>

#include <caffe2/serialize/inline_container.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string_view>

namespace kforge {

std::string firstLine(const std::string& message)
{
    // Some errors start with a blank line ("\nUnknown builtin op: torchvision::nms..."): the cause is the first line
    // with text.
    const auto start = std::min(message.find_first_not_of("\n "), message.size());
    const auto end = message.find('\n', start);
    return message.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

namespace {

// Advice c10's CUDA errors append after the cause; never the cause itself.
bool isCudaErrorAdvice(std::string_view line)
{
    for (const std::string_view advice :
         {"CUDA kernel errors might be asynchronously reported", "For debugging consider passing CUDA_LAUNCH_BLOCKING",
          "Compile with `TORCH_USE_CUDA_DSA`", "Search for `cuda"})
        if (line.substr(0, advice.size()) == advice)
            return true;
    return false;
}

std::string withoutCudaErrorAdvice(const std::string& message)
{
    std::string out;
    size_t start = 0;
    while (start < message.size()) {
        size_t end = message.find('\n', start);
        if (end == std::string::npos)
            end = message.size();
        const std::string_view line(message.data() + start, end - start);
        if (!isCudaErrorAdvice(line))
            out.append(line).push_back('\n');
        start = end + 1;
    }
    return out;
}

} // namespace

std::string describeErrorMessage(std::string msg)
{
    msg = withoutCudaErrorAdvice(msg);
    // The interpreter prefixes a TorchScript traceback; the cause is its last non-empty line.
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
        msg.pop_back();
    if (msg.find("TorchScript") != std::string::npos) {
        const auto last = msg.rfind('\n');
        if (last != std::string::npos)
            msg = msg.substr(last + 1);
        for (const char* prefix : {"RuntimeError: ", "Exception: "})
            if (msg.rfind(prefix, 0) == 0)
                msg = msg.substr(std::string(prefix).size());
    }
    return firstLine(msg);
}

std::string describeTorchError(const c10::Error& error) { return describeErrorMessage(error.what_without_backtrace()); }

namespace {

// What a zip that torch.jit.load refuses holds when it is a torch.save() file (data.pkl, no constants.pkl): the
// weights of a model (a state_dict) or a pickled module, both Python objects with no TorchScript code to run.
// "" when it is not one.
std::string torchSaveContent(const std::string& path)
{
    try {
        caffe2::serialize::PyTorchStreamReader reader(path);
        if (!reader.hasRecord("data.pkl") || reader.hasRecord("constants.pkl"))
            return {};
        const auto [data, size] = reader.getRecord("data.pkl");
        const std::string_view pickle(static_cast<const char*>(data.get()), size);
        if (pickle.find("torch.nn.modules") != std::string_view::npos)
            return "a pickled module (torch.save(model)): Python objects, not TorchScript";
        if (pickle.find("_rebuild_tensor") != std::string_view::npos)
            return "a state_dict or other tensors (torch.save(model.state_dict())): weights without the model's code";
        return "Python objects saved with torch.save(), not a TorchScript model";
    } catch (const std::exception&) {
        return {};
    }
}

// The op LibTorch could not resolve while loading the model's code ("Unknown builtin op: torchvision::nms."), or "".
std::string unknownOpOf(const std::string& message)
{
    constexpr std::string_view marker = "Unknown builtin op: ";
    const auto at = message.find(marker);
    if (at == std::string::npos)
        return {};
    const auto start = at + marker.size();
    const auto end =
        message.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:", start);
    return message.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The error for a model that calls a custom op no loaded library defines: which op, and what loads it.
std::string unknownOpAdvice(const std::string& op)
{
    const std::string space = op.substr(0, op.find("::"));
    std::string advice = "the model calls the custom op '" + op +
                         "', which no library loaded in this process defines: load the library that registers "
                         "it (TORCH_LIBRARY(" +
                         space +
                         ", ...)) with --ops-library LIB.so, from a folder of KFORGE_OPS_PATH or, in the desktop app, "
                         "Preferences > Op Libraries";
    if (space == "torchvision")
        advice += " (torchvision's ops are in the torchvision wheel's torchvision/_C.so)";
    return advice;
}

} // namespace

torch::jit::Module loadTorchScriptFile(const std::string& path)
{
    namespace fs = std::filesystem;
    const std::string where = "model '" + path + "'";
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status))
        throw Error(where, "file not found");
    if (fs::is_directory(status))
        throw Error(where, "is a directory, not a TorchScript file");
    if (fs::file_size(path, ec) == 0)
        throw Error(where, "file is empty");

    char magic[4] = {};
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(where, "cannot be read (permission denied?)");
    in.read(magic, sizeof magic);
    if (in.gcount() < 4 || magic[0] != 'P' || magic[1] != 'K')
        throw Error(where, "not a TorchScript archive (the file is not a zip archive; save models with "
                           "torch.jit.save)");

    try {
        torch::jit::Module module = torch::jit::load(path, c10::kCPU);
        if (!module.find_method("forward"))
            throw Error(where, "the model has no forward() method");
        return module;
    } catch (const c10::Error& e) {
        if (const std::string op = unknownOpOf(e.what_without_backtrace()); !op.empty())
            throw Error(where, unknownOpAdvice(op));
        std::string cause = describeTorchError(e);
        // PyTorch's zip reader appends a paragraph of advice to every error; the cause is before it.
        if (const auto advice = cause.find(". This is an internal miniz error"); advice != std::string::npos)
            cause.resize(advice);
        if (cause.find("central directory") != std::string::npos || cause.find("zip archive") != std::string::npos)
            throw Error(where, "damaged or truncated zip archive (" + cause + ")");
        // PyTorch's reader skips the zip CRC checks, so flipped bytes surface as an internal assert while
        // decoding: a damaged file, not a PyTorch bug to report.
        if (const auto assertAt = cause.find(" INTERNAL ASSERT FAILED"); assertAt != std::string::npos) {
            cause = cause.substr(0, cause.find(", please report a bug"));
            throw Error(where, "damaged TorchScript archive: an entry does not decode (" + cause +
                                   "); the file was probably modified or corrupted after saving");
        }
        if (const std::string saved = torchSaveContent(path); !saved.empty())
            throw Error(where, "this file is " + saved +
                                   "; save the model itself with torch.jit.script(model)."
                                   "save(path), torch.jit.trace(model, example).save(path) or torch.export.save("
                                   "torch.export.export(model, (example,)), path)");
        throw Error(where, "not a loadable TorchScript archive (" + cause + ")");
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) { // the TorchScript compiler's ErrorReport among them
        if (const std::string op = unknownOpOf(e.what()); !op.empty())
            throw Error(where, unknownOpAdvice(op));
        throw Error(where, std::string("not a loadable TorchScript archive (") + firstLine(e.what()) + ")");
    }
}

} // namespace kforge
