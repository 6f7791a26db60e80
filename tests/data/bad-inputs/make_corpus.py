#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Regenerates the bad-input corpus (quality gates, docs/quality.md).

Run with the bootstrap venv's python (it has torch):
    ~/.cache/kforge/torch-2.11.0/bin/python tests/data/bad-inputs/make_corpus.py

models/  TorchScript archives damaged in one way each (how: see make_models below).
plans/   one plan file per error the plan reader or the validator reports (make_plans below).
inputs/  input specs (DTYPE[SHAPE]) that must be refused (make_inputs below).
Each folder's expected.json maps every file (or spec) to the fragment its error must contain; the tests
(tests/engine/test_bad_input_corpus.cpp, tests/cli/test_cli_bad_inputs.cpp) walk the folder and fail on a
file without an expectation, so a new file must come with one. Huge plans (100,000 entries) are generated at
test time, not committed.
"""
import io
import json
import os
import struct
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def write_expected(folder, expected):
    with open(os.path.join(HERE, folder, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2, sort_keys=True)
        f.write("\n")


# ---- models ------------------------------------------------------------------------------------------------------


def tiny_torchscript():
    """A valid TorchScript archive of a two-layer module (a few KB)."""
    import torch

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            return torch.nn.functional.gelu(self.lin(x))

    torch.manual_seed(0)
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(Tiny()), buf)
    return buf.getvalue()


def zip_entries(data):
    """(name, local header offset, data offset, size) of each stored entry."""
    out = []
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for info in z.infolist():
            name_len, extra_len = struct.unpack_from("<HH", data, info.header_offset + 26)
            start = info.header_offset + 30 + name_len + extra_len
            out.append((info.filename, info.header_offset, start, info.compress_size))
    return out


def central_directory_offset(data, name):
    """Offset of `name`'s central directory header."""
    pos = data.find(b"PK\x01\x02")
    while pos >= 0:
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, pos + 28)
        if data[pos + 46 : pos + 46 + name_len].decode() == name:
            return pos
        pos = data.find(b"PK\x01\x02", pos + 46 + name_len + extra_len + comment_len)
    raise KeyError(name)


def make_models():
    good = tiny_torchscript()
    entries = {name.split("/", 1)[1]: (hdr, start, size) for name, hdr, start, size in zip_entries(good)}
    prefix = zip_entries(good)[0][0].split("/", 1)[0]
    expected = {}

    def model(name, data, fragment, why):
        write(os.path.join(HERE, "models", name), data)
        expected[name] = {"fragment": fragment, "how": why}

    model("empty.pt", b"", "file is empty", "zero bytes")
    model("text_named_pt.pt", "import torch\nmodel = torch.nn.Linear(4, 4)\n", "not a zip archive",
          "a Python source file with a .pt name")
    # Cut at several points: inside the first local header, in the middle, inside the end-of-central-directory.
    model("truncated_in_first_header.pt", good[:20], "damaged or truncated zip archive",
          "the first 20 bytes of a valid archive")
    model("truncated_half.pt", good[: len(good) // 2], "damaged or truncated zip archive",
          "the first half of a valid archive")
    model("truncated_in_central_directory.pt", good[: central_directory_offset(good, prefix + "/data.pkl") + 10],
          "damaged or truncated zip archive", "cut 10 bytes into the central directory")
    model("truncated_last_bytes.pt", good[:-8], "damaged or truncated zip archive",
          "a valid archive without its last 8 bytes (inside the end-of-central-directory record)")

    # Byte flips inside data.pkl's stored bytes: the CRC no longer matches.
    hdr, start, size = entries["data.pkl"]
    flipped = bytearray(good)
    for i in range(start + size // 3, start + size // 3 + 4):
        flipped[i] ^= 0xFF
    model("crc_mismatch_data_pkl.pt", bytes(flipped), "damaged TorchScript archive: an entry does not decode",
          "4 bytes of data.pkl flipped (its CRC-32 no longer matches)")

    # An entry whose headers claim 4 GiB: the reader must refuse it, not allocate it.
    huge = bytearray(good)
    cd = central_directory_offset(good, prefix + "/data.pkl")
    struct.pack_into("<II", huge, cd + 20, 0xFFFFFF00, 0xFFFFFF00)  # compressed, uncompressed size
    struct.pack_into("<II", huge, hdr + 18, 0xFFFFFF00, 0xFFFFFF00)
    model("entry_claims_4gib.pt", bytes(huge), "damaged or truncated zip archive",
          "data.pkl's local and central headers claim 4 GiB")

    # PyTorch's archive layout (one top folder, a version record) without data.pkl and constants.pkl.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/version", "3\n")
        z.writestr("archive/readme.txt", "no data.pkl, no constants.pkl\n")
    model("wrong_entries.pt", buf.getvalue(), "not a loadable TorchScript archive",
          "archive/version and archive/readme.txt only")

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("notes.txt", "a valid zip, not a TorchScript archive\n")
        z.writestr("weights.bin", bytes(range(256)))
    model("plain_zip.zip", buf.getvalue(), "not a loadable TorchScript archive",
          "a valid deflated zip of two files, no PyTorch layout")

    import torch

    buf = io.BytesIO()
    torch.save(torch.ones(2, 2), buf)
    model("torch_save_tensor.pt", buf.getvalue(), "tensors (torch.save(model.state_dict())): weights without",
          "torch.save of a tensor: PyTorch's zip layout, but no TorchScript code")
    write_expected("models", expected)


# ---- plans -------------------------------------------------------------------------------------------------------
# stage "read": readPlan refuses the file (reader errors carry the JSON path or line/column);
# stage "validate": the file reads, validatePlan against builtin:tiny-gpt on cpu reports `kind` at `path`.


def kplan(*entries, **top):
    plan = {"format": "kforge-plan", "version": 1, "entries": list(entries)}
    plan.update(top)
    return plan


def entry(scope, function, provider, **more):
    e = {"scope": scope, "function": function, "provider": {"type": provider}}
    e.update(more)
    return e


def make_plans():
    expected = {}

    def plan(name, content, stage, fragment, path=None, kind=None):
        text = content if isinstance(content, (str, bytes)) else json.dumps(content, indent=2) + "\n"
        write(os.path.join(HERE, "plans", name), text)
        item = {"stage": stage, "fragment": fragment}
        if path is not None:
            item["path"] = path
        if kind is not None:
            item["kind"] = kind
        expected[name] = item

    gelu = entry("", "gelu", "AtenGeluProvider")
    # Reader errors.
    plan("empty.kfplan.json", "", "read", "file is empty, not a plan")
    plan("whitespace_only.kfplan.json", "  \n\t\n", "read", "file is empty, not a plan")
    plan("syntax_missing_comma.kfplan.json", '{"format": "kforge-plan"\n "entries": []}\n', "read",
         "malformed JSON at line 2, column 2")
    plan("syntax_truncated.kfplan.json", '{"format": "kforge-plan", "entries": [{"scope": ', "read",
         "malformed JSON at line 1")
    plan("syntax_trailing_garbage.kfplan.json", json.dumps(kplan()) + " }", "read", "malformed JSON at line 1")
    plan("not_utf8.kfplan.json", b'{"format": "kforge-plan", "entries": [], "note": "\xff\xfe"}\n',
         "read", "malformed JSON")
    plan("root_is_array.kfplan.json", [gelu], "read", "not a plan: expected a JSON object, found an array")
    plan("neither_dialect.kfplan.json", {"entries": [gelu]}, "read", "not a plan: expected")
    plan("both_dialects.kfplan.json", dict(kplan(gelu), providers=[{"type": "TorchSDPAKernelProvider"}]), "read",
         "/providers: a kforge plan (with \"format\") cannot also hold AITune's \"providers\" list")
    plan("both_dialects_aitune.json", {"providers": [{"type": "TorchSDPAKernelProvider"}], "entries": [gelu]}, "read",
         "/entries: an AITune plan")
    plan("format_unknown.kfplan.json", dict(kplan(gelu), format="kforge-plan-v2"), "read",
         "/format: unknown plan format 'kforge-plan-v2'")
    plan("format_not_string.kfplan.json", dict(kplan(gelu), format=1), "read", "/format: expected the string")
    plan("version_newer.kfplan.json", dict(kplan(gelu), version=99), "read",
         "/version: plan format version 99 is newer than this build understands")
    plan("version_huge.kfplan.json", dict(kplan(gelu), version=18446744073709551615), "read",
         "is newer than this build understands")
    plan("version_zero.kfplan.json", dict(kplan(gelu), version=0), "read", "/version: expected 1 or more")
    plan("version_negative.kfplan.json", dict(kplan(gelu), version=-3), "read", "/version: expected 1 or more")
    plan("version_string.kfplan.json", dict(kplan(gelu), version="1"), "read",
         "/version: expected an integer, found a string")
    plan("version_float.kfplan.json", dict(kplan(gelu), version=1.5), "read",
         "/version: expected an integer, found a number")
    plan("model_not_object.kfplan.json", kplan(gelu, model="tiny-gpt"), "read",
         "/model: expected an object, found a string")
    plan("model_unknown_key.kfplan.json", kplan(gelu, model={"name": "tiny-gpt", "hash": "x"}), "read",
         "/model/hash: unknown key 'hash'")
    plan("model_sha_not_string.kfplan.json", kplan(gelu, model={"sha256": 5}), "read",
         "/model/sha256: expected a string, found an integer")
    plan("entries_not_array.kfplan.json", dict(kplan(), entries={"0": gelu}), "read",
         "/entries: expected an array, found an object")
    plan("entry_not_object.kfplan.json", kplan(gelu, "gelu"), "read", "/entries/1: expected an object, found a string")
    plan("scope_not_string.kfplan.json", kplan(dict(gelu, scope=["blocks", 0])), "read",
         "/entries/0/scope: expected a string, found an array")
    plan("function_null.kfplan.json", kplan(dict(gelu, function=None)), "read",
         "/entries/0/function: expected a string, found null")
    plan("enabled_not_boolean.kfplan.json", kplan(dict(gelu, enabled="yes")), "read",
         "/entries/0/enabled: expected true or false, found a string")
    plan("note_not_string.kfplan.json", kplan(dict(gelu, note={"text": "x"})), "read",
         "/entries/0/note: expected a string, found an object")
    plan("provider_not_object.kfplan.json", kplan(dict(gelu, provider="AtenGeluProvider")), "read",
         "/entries/0/provider: expected an object")
    plan("provider_missing_type.kfplan.json", kplan(dict(gelu, provider={"approximate": "tanh"})), "read",
         "/entries/0/provider: missing \"type\"")
    plan("provider_type_not_string.kfplan.json", kplan(dict(gelu, provider={"type": 7})), "read",
         "/entries/0/provider/type: expected a string, found an integer")
    plan("entry_missing_provider.kfplan.json", kplan({"scope": "", "function": "gelu"}), "read",
         "/entries/0: missing \"provider\"")
    plan("entry_unknown_key.kfplan.json", kplan(dict(gelu, scop="blocks.0")), "read",
         "/entries/0/scop: unknown key 'scop'")
    plan("entry_key_with_slash.kfplan.json", kplan(dict(gelu, **{"a/b~c": 1})), "read", "/entries/0/a~1b~0c")
    plan("many_read_errors.kfplan.json", kplan(dict(gelu, scope=1), dict(gelu, enabled=0)), "read",
         "/entries/0/scope: expected a string, found an integer; /entries/1/enabled")
    plan("aitune_providers_not_array.json", {"providers": {"type": "TorchSDPAKernelProvider"}}, "read",
         "/providers: expected an array, found an object")
    plan("aitune_provider_not_object.json", {"providers": ["TorchSDPAKernelProvider"]}, "read",
         "/providers/0: expected an object, found a string")
    plan("aitune_provider_missing_type.json", {"providers": [{"backend": "MATH"}]}, "read",
         "/providers/0: missing \"type\"")
    plan("aitune_type_not_string.json", {"providers": [{"type": None}]}, "read",
         "/providers/0/type: expected a string, found null")
    # 30,000 levels crashed `plan show --json` (recursive copy and dump) before reading capped the depth.
    plan("deeply_nested.kfplan.json", '{"format": "kforge-plan", "x": ' + "[" * 30000 + "]" * 30000 + "}\n",
         "read", "JSON nesting deeper than 512 levels")
    plan("deeply_nested_aitune.json", '{"providers": [{"type": "TorchSDPAKernelProvider", "x": ' + "[" * 30000 + "]" * 30000
         + "}]}\n", "read", "JSON nesting deeper than 512 levels")
    # Validation problems (builtin:tiny-gpt, cpu).
    plan("unknown_scope.kfplan.json", kplan(entry("blocks.7.attn", "scaled_dot_product_attention",
                                                    "TorchSDPAKernelProvider")),
         "validate", "no module 'blocks.7.attn'", "/entries/0/scope", "unknown-scope")
    plan("function_not_called.kfplan.json", kplan(entry("blocks.0.ln1", "gelu", "AtenGeluProvider")), "validate",
         "'gelu' is not called in 'blocks.0.ln1'", "/entries/0/function", "function-not-called")
    plan("unknown_function.kfplan.json", kplan(entry("", "fast_gelu", "AtenGeluProvider")), "validate",
         "'fast_gelu' is not a replaceable function", "/entries/0/function", "unknown-function")
    plan("unknown_provider.kfplan.json", kplan(entry("", "gelu", "NoSuchGeluProvider")), "validate",
         "unknown provider type 'NoSuchGeluProvider'", "/entries/0/provider/type", "unknown-provider")
    plan("unavailable_provider.kfplan.json", kplan(entry("", "scaled_dot_product_attention",
                                                         "FlashAttention4KernelProvider")),
         "validate", "'FlashAttention4KernelProvider' is an AITune provider", "/entries/0/provider/type",
         "unavailable-provider")
    plan("wrong_function.kfplan.json", kplan(entry("", "layer_norm", "AtenGeluProvider")), "validate",
         "provider 'AtenGeluProvider' replaces 'gelu', not 'layer_norm'", "/entries/0/function", "wrong-function")
    plan("device_unavailable.kfplan.json", kplan(entry("", "gelu", "CudaGeluProvider")), "validate",
         "provider 'CudaGeluProvider' does not run on cpu", "/entries/0/provider/type", "device-unavailable")
    plan("duplicate.kfplan.json", kplan(gelu, entry("", "gelu", "CpuGeluProvider")), "validate",
         "same scope '' and function 'gelu' as entry 0", "/entries/1", "duplicate")
    plan("bad_setting_value.kfplan.json",
         kplan(entry("", "scaled_dot_product_attention", "TorchSDPAKernelProvider") |
               {"provider": {"type": "TorchSDPAKernelProvider", "backend": "FASTEST"}}),
         "validate", "FASTEST", "/entries/0/provider", "bad-settings")
    plan("bad_setting_key.kfplan.json",
         kplan(entry("", "gelu", "CpuGeluProvider") | {"provider": {"type": "CpuGeluProvider", "aproximate": "tanh"}}),
         "validate", "aproximate", "/entries/0/provider", "bad-settings")
    plan("setting_on_provider_without_settings.kfplan.json",
         kplan(entry("", "gelu", "AtenGeluProvider") | {"provider": {"type": "AtenGeluProvider", "fast": True}}),
         "validate", "fast", "/entries/0/provider", "bad-settings")
    plan("setting_wrong_type.kfplan.json",
         kplan(entry("", "gelu", "CpuGeluProvider") | {"provider": {"type": "CpuGeluProvider", "approximate": 1}}),
         "validate", "approximate", "/entries/0/provider", "bad-settings")
    write_expected("plans", expected)


# ---- input specs -------------------------------------------------------------------------------------------------


def make_inputs():
    # expected.json maps each spec to the fragment of its error. "parse": parseTensorSpec refuses it;
    # "tensor": it parses (at most 2^40 elements) but the tensor cannot be allocated (4 TiB of float32).
    parse_errors = {
        "float32[4294967296,4294967296]": "more than 2^40 elements",
        "float32[1048576,1048576,2]": "more than 2^40 elements",
        "int8[1099511627777]": "more than 2^40 elements",
        "float32[99999999999999999999]": "'99999999999999999999' is too large",
        "float32[9223372036854775808]": "is too large",
        "float32[-1,16]": "dimension -1 is negative",
        "float32[" + ",".join(["1"] * 65) + "]": "more than 64 dimensions",
        "complex512[1,16]": "unknown dtype 'complex512'",
        # The trailing space is trimmed; without it CLI11 would read "--input [1,16]" as a list of two values.
        "[1,16] ": "unknown dtype ''",
        "float32[1,,16]": "dimension '' is not a whole number",
        "float32[1,16,]": "trailing comma",
        "float32[0x10]": "dimension '0x10' is not a whole number",
        "float32[1e3]": "dimension '1e3' is not a whole number",
        "float32[1;16]": "is not a whole number",
        "float32(1,16)": "expected DTYPE[D0,D1,...]",
        "float32[1,16": "expected DTYPE[D0,D1,...]",
        "": "expected DTYPE[D0,D1,...]",
        "\u00e9\u00e9[1]": "unknown dtype",
    }
    expected = {spec: {"stage": "parse", "fragment": fragment} for spec, fragment in parse_errors.items()}
    expected["float32[1099511627776]"] = {"stage": "tensor", "fragment": "cannot create the tensor"}
    write_expected("inputs", expected)


if __name__ == "__main__":
    make_models()
    make_plans()
    make_inputs()
