#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Exports the real-model corpus the corpus tests (tests/corpus) run through kforge.

  corpus_export.py --kforge build/bin/kforge [--out DIR] [--models NAME...] [--force]
  corpus_export.py --self-test        the call counter on a toy module with known counts (and the trap below)
  corpus_export.py --list | --print-out-dir
Run it with the venv python scripts/bootstrap makes (torch and the matching torchvision); the CTest fixture
corpus_export does (tests/corpus/CMakeLists.txt). About 30 s for the whole corpus on two idle cores, 4 s when cached.

For each torchvision architecture in MODELS it writes, into the corpus folder:
  <name>.script.pt   torch.jit.script of the model (eval, weights=None, torch.manual_seed(0) before building it)
  <name>.trace.pt    torch.jit.trace of it (under torch.no_grad(), strict=False, check_trace=False)
  <name>.input.pt    the input tensor (torch.save), for `kforge run --inputs-file`
  <name>.output.pt   the eager model's output for that input, under torch.no_grad() (torch.save)
  <name>.json        the Python-side references: module_paths (named_modules(), root "" included), calls (catalog
                     function -> calls per forward, counted as described below), input_shape, forms (which of
                     script/trace were exported, or the error of the one that failed), versions
  <name>.done        the completion marker: written last, so an interrupted export never counts as done
and manifest.json (the models) and catalog.json (the function catalog the counts were made with).

The folder is ${KFORGE_CACHE:-~/.cache/kforge}/corpus-torch<torch>-tv<torchvision> (--out overrides it). It is a
cache: a model whose files and marker exist for this torch, torchvision and version of this script (a hash of this
file) is not exported again; when only the catalog changed, only its counts are made again. Every file is written
under a temporary name and renamed into place.

The function catalog comes from `kforge functions --json` (--kforge names the binary): rows {"name", "forms":
[{"op": "aten::relu_", "overload": "", "kind": ...}], "python": ["torch.nn.functional.relu", ...], ...}.
--catalog FILE reads the same JSON from a file instead, and --catalog fallback (or KFORGE_CORPUS_CATALOG=fallback)
uses the small built-in FALLBACK_CATALOG below: for testing this script only, while a kforge without `functions`
is all there is.

How a catalog function's calls are counted (the Python reference)
-----------------------------------------------------------------
The eager model runs once under torch.no_grad() with a TorchFunctionMode (CatalogCallCounter) that sees every
overridable Python-level call. A function's callables are the dotted names of its "python" list plus, for every
form op aten::X, whichever of torch.X, torch.Tensor.X, torch._C._nn.X and torch._C._VariableFunctions.X exist;
they are matched by identity with __torch_function__'s `func`. Only OUTERMOST calls count, like a Python user's
torch.nn.functional patch (AITune's runtime) or kforge's interposer, which runs an original with itself excluded:
  - a catalog callable is counted once and runs with the mode off, so what it calls inside (F.relu's torch.relu_,
    F.layer_norm's torch.layer_norm, F.softmax's Tensor.softmax) is part of that one call;
  - any other callable runs with the mode on again, so catalog calls nested in non-catalog Python functions
    (F.multi_head_attention_forward's linear and scaled_dot_product_attention) still count. Such a function
    begins with `if has_torch_function...(args): return handle_torch_function(...)`, which would send it straight
    back to the mode; for its own check only, the module global it reads is made to answer False once
    (_run_body_observed). Builtins (C++) run with the mode off: nothing inside them is a Python call.
_convolution/convolution (shared by conv1d/2d/3d and conv_transpose1d/2d/3d) are attributed by the weight's rank
and `transposed`, as the engine does.

The trap: an observed model takes another path
----------------------------------------------
An active TorchFunctionMode makes torch.overrides.has_torch_function(...) return True. nn.MultiheadAttention and
nn.TransformerEncoderLayer read exactly that (torch.overrides.has_torch_function(tensor_args), looked up at call
time) to refuse their fused inference fast path. Under the mode an eval/no_grad ViT would run
F.multi_head_attention_forward (linear, scaled_dot_product_attention, linear) while the unobserved model, eager or
scripted in C++, runs one torch._native_multi_head_attention per block with no linear or SDPA call inside. So the
counted run patches torch.overrides.has_torch_function to answer False (unobserved_fast_paths), and only then.
The scripted and traced files are also run under torch.profiler here; the outermost catalog ops it records are
saved per form (forms.<form>.profiler_calls) so a test failure shows whether Python, torch's own execution of the
file and kforge agree. On the ViT they equal the counts (one _native_multi_head_attention per block, no linear
inside it); so they do on full vit_b_16 (linear 25, no SDPA; without the patch the counter says linear 49, SDPA 12).

Known limits of the reference: a Python function TorchScript records as another catalog op is counted as what
Python called (F.interpolate(mode="area") is one interpolate call here, an adaptive_avg_pool2d in any .pt file).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import importlib.metadata as md
import json
import os
import subprocess
import sys
import time
import types
from collections import Counter

SCRIPT_VERSION = hashlib.sha256(open(__file__, "rb").read()).hexdigest()[:16]

# The models, each built the way its users build it, with random weights (torch.manual_seed(0) first; no downloads):
#   source        torchvision, transformers (a *Config of a tiny size and the model class) or timm (create_model)
#   builder       the expression that builds it (the three packages are `models`, `transformers`, `timm`)
#   inputs        ((name, kind, shape), ...): kind "float" (standard normal) or "int:N" (token ids below N); one
#                 input is passed positionally, several by keyword (as a Hugging Face user calls a seq2seq model)
#   forms         which files to write: script and trace are TorchScript (torch.jit.script, torch.jit.trace), pt2 is
#                 torch.export.save's package. Hugging Face models do not script (their configs have no source
#                 TorchScript reads): their users trace them.
#   note          what is special about it
def _tv(builder, shape, note=""):
    return {"source": "torchvision", "builder": builder, "inputs": (("x", "float", shape),),
            "forms": ("script", "trace", "pt2"), "note": note}


def _hf(builder, inputs, note):
    return {"source": "transformers", "builder": builder, "inputs": inputs, "forms": ("trace", "pt2"), "note": note}


def _timm(builder, note):
    return {"source": "timm", "builder": builder, "inputs": (("x", "float", (1, 3, 64, 64)),),
            "forms": ("script", "trace", "pt2"), "note": note}


# The ViT is vit_b_16's code path (VisionTransformer, nn.MultiheadAttention's fast path) at a third of its depth
# and width: the full vit_b_16 is a 330 MB file per form and about 2 s per forward on two cores.
MODELS = {
    "resnet18": _tv("models.resnet18(weights=None)", (1, 3, 64, 64)),
    "mobilenet_v3_small": _tv("models.mobilenet_v3_small(weights=None)", (1, 3, 64, 64)),
    "efficientnet_b0": _tv("models.efficientnet_b0(weights=None)", (1, 3, 64, 64)),
    "convnext_tiny": _tv("models.convnext_tiny(weights=None)", (1, 3, 64, 64)),
    "vit": _tv(
        "models.VisionTransformer(image_size=224, patch_size=16, num_layers=4, num_heads=4, hidden_dim=256,"
        " mlp_dim=1024)",
        (1, 3, 224, 224),
        "vit_b_16's code path (torchvision VisionTransformer) with 4 layers, 4 heads, hidden 256, MLP 1024 instead of"
        " 12/12/768/3072: same modules and calls per block, a 15 MB file instead of 330 MB; its zero-initialised head"
        " gets N(0, 0.02) weights and bias (else the output is all zeros)"),
    "swin_t": _tv("models.swin_t(weights=None)", (1, 3, 64, 64)),
    "regnet_y_400mf": _tv("models.regnet_y_400mf(weights=None)", (1, 3, 64, 64)),
    "lraspp_mobilenet_v3_large": _tv(
        "models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)", (1, 3, 64, 64),
        "segmentation head; output is a dict {'out': tensor}"),
    "squeezenet1_1": _tv("models.squeezenet1_1(weights=None)", (1, 3, 64, 64)),
    "shufflenet_v2_x0_5": _tv("models.shufflenet_v2_x0_5(weights=None)", (1, 3, 64, 64)),
    "mobilenet_v2": _tv("models.mobilenet_v2(weights=None)", (1, 3, 64, 64)),
    "hf_llama": _hf(
        "transformers.LlamaForCausalLM(transformers.LlamaConfig(hidden_size=64, intermediate_size=128,"
        " num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=256,"
        " max_position_embeddings=64, attn_implementation='sdpa', use_cache=False))",
        (("input_ids", "int:256", (1, 16)),),
        "a decoder LLM: grouped-query attention (4 query heads, 2 key/value heads), rotary embeddings, RMSNorm, SiLU"
        " MLP, scaled_dot_product_attention"),
    "hf_t5": _hf(
        "transformers.T5ForConditionalGeneration(transformers.T5Config(d_model=32, d_ff=64, num_layers=2,"
        " num_decoder_layers=2, num_heads=4, d_kv=8, vocab_size=128, use_cache=False))",
        (("input_ids", "int:128", (1, 12)), ("decoder_input_ids", "int:128", (1, 8))),
        "an encoder-decoder called with keyword inputs; the token embedding is tied (shared, encoder and decoder"
        " embed_tokens and the LM head hold one tensor)"),
    "hf_wav2vec2": _hf(
        "transformers.Wav2Vec2Model(transformers.Wav2Vec2Config(hidden_size=32, num_hidden_layers=2,"
        " num_attention_heads=4, intermediate_size=64, conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3),"
        " num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4))",
        (("input_values", "float", (1, 1600)),),
        "a speech model: a convolutional feature encoder on the waveform (conv1d, group_norm) and a weight-normed"
        " positional convolution (its weight is computed at run time)"),
    "hf_clip_vision": _hf(
        "transformers.CLIPVisionModel(transformers.CLIPVisionConfig(hidden_size=32, intermediate_size=64,"
        " num_hidden_layers=2, num_attention_heads=4, image_size=32, patch_size=8))",
        (("pixel_values", "float", (1, 3, 32, 32)),),
        "CLIP's vision tower: patch embedding, quick-GELU MLPs, pre- and post-layernorm"),
    "timm_vit_tiny": _timm("timm.create_model('vit_tiny_patch16_224', pretrained=False, img_size=64)",
                           "timm's VisionTransformer: its own fused attention (scaled_dot_product_attention)"),
    "timm_efficientvit_b0": _timm("timm.create_model('efficientvit_b0', pretrained=False)",
                                  "a mobile hybrid (MIT EfficientViT): MBConv blocks and ReLU linear attention"),
}
FORMS = ("script", "trace", "pt2")  # every form some model is written in
INPUT_SEED = 1  # the inputs come from their own generator, so they do not depend on the model's construction

# For testing this script while kforge has no `functions` command: the engine's first catalog (10 functions).
FALLBACK_CATALOG = [
    {"name": n, "forms": [{"op": op, "overload": ov, "kind": "normal"} for op, ov in forms],
     "python": ["torch.nn.functional." + n], "reference_provider": ref}
    for n, forms, ref in [
        ("gelu", [("aten::gelu", "")], "AtenGeluProvider"),
        ("silu", [("aten::silu", "")], "AtenSiluProvider"),
        ("relu", [("aten::relu", "")], "AtenReluProvider"),
        ("layer_norm", [("aten::layer_norm", "")], "AtenLayerNormProvider"),
        ("rms_norm", [("aten::rms_norm", "")], "AtenRmsNormProvider"),
        ("group_norm", [("aten::group_norm", "")], "AtenGroupNormProvider"),
        ("softmax", [("aten::softmax", "int")], "AtenSoftmaxProvider"),
        ("linear", [("aten::linear", "")], "AtenLinearProvider"),
        ("conv2d", [("aten::conv2d", ""), ("aten::conv2d", "padding")], "AtenConv2dProvider"),
        ("scaled_dot_product_attention", [("aten::scaled_dot_product_attention", "")],
         "AtenScaledDotProductAttentionProvider"),
    ]
]
# Shared forms whose function depends on the call's arguments, and ops whose ATen implementation calls catalog ops
# internally that are not torch.nn.functional calls (used when the catalog JSON does not list them itself).
CONVOLUTION_OPS = {"aten::_convolution", "aten::convolution", "aten::_convolution_mode"}
DEFAULT_OPAQUE_OPS = {
    "aten::_native_multi_head_attention", "aten::_transformer_encoder_layer_fwd", "aten::lstm", "aten::gru",
    "aten::rnn_tanh", "aten::rnn_relu", "aten::lstm_cell", "aten::gru_cell", "aten::rnn_tanh_cell",
    "aten::rnn_relu_cell",
}


def log(msg: str) -> None:
    print(f"corpus_export: {msg}", file=sys.stderr, flush=True)


def versions() -> tuple[str, str]:
    return md.version("torch").split("+")[0], md.version("torchvision").split("+")[0]


def default_out_dir() -> str:
    torch_ver, tv_ver = versions()
    cache = os.environ.get("KFORGE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "kforge")
    return os.path.join(cache, f"corpus-torch{torch_ver}-tv{tv_ver}")


def quiet_torch() -> None:
    """Before torch is imported: no Kineto log lines about missing GPUs, no tracer and profiler warnings."""
    import warnings

    os.environ.setdefault("KINETO_LOG_LEVEL", "5")
    warnings.filterwarnings("ignore", message=".*Profiler clears events.*")
    warnings.filterwarnings("ignore", message=".*Converting a tensor to a Python.*")
    warnings.filterwarnings("ignore", category=UserWarning, module="torch.jit")


# ---- files ---------------------------------------------------------------------------------------------------------

def write_atomic(path: str, write) -> None:
    """write(tmp_path) fills a temporary file next to path, which then replaces path in one rename."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def write_json(path: str, data) -> None:
    def w(tmp):
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.write("\n")
    write_atomic(path, w)


def read_json(path: str):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# ---- the catalog ---------------------------------------------------------------------------------------------------

def normalize_catalog(data) -> dict:
    """{"functions": [...], "shared_forms": [...]} from `kforge functions --json` (an array of rows, or an object
    holding one), with the defaults a row may leave out."""
    shared = []
    if isinstance(data, dict):
        shared = data.get("shared_forms") or []
        data = data.get("functions")
    if not isinstance(data, list) or not data:
        raise ValueError("the catalog is not a non-empty array of functions")
    functions = []
    for row in data:
        name = row["name"]
        forms = [{"op": f["op"], "overload": f.get("overload", ""), "kind": f.get("kind", "")}
                 for f in row.get("forms", [])]
        nf = row.get("normal_form")  # "aten::softmax.int" or {"op": "aten::softmax", "overload": "int"}
        if isinstance(nf, str):
            ns, _, rest = nf.partition("::")
            op, _, overload = rest.partition(".")
            nf = {"op": f"{ns}::{op}", "overload": overload}
        if isinstance(nf, dict) and not any(f["op"] == nf.get("op") for f in forms):
            forms.insert(0, {"op": nf["op"], "overload": nf.get("overload", ""), "kind": "normal"})
        python = row.get("python")
        if python is None:  # no Python names listed: the function's own and its aliases' in torch.nn.functional
            python = ["torch.nn.functional." + n for n in [name] + list(row.get("aliases", []))]
        camel = "".join(part.capitalize() for part in name.split("_"))
        functions.append({"name": name, "forms": forms, "python": list(python),
                          "reference_provider": row.get("reference_provider") or f"Aten{camel}Provider"})
    return {"functions": functions, "shared_forms": shared}


def catalog_hash(catalog: dict) -> str:
    return hashlib.sha256(json.dumps(catalog, sort_keys=True).encode()).hexdigest()[:16]


def load_catalog(kforge: str | None, source: str | None) -> tuple[dict, str]:
    if source == "fallback":
        return normalize_catalog(FALLBACK_CATALOG), "fallback: the built-in 10-function list (testing only)"
    if source:
        with open(source) as f:
            return normalize_catalog(json.load(f)), f"file {source}"
    if not kforge:
        raise SystemExit("corpus_export: --kforge KFORGE is needed (its `functions --json` is the catalog)")
    proc = subprocess.run([kforge, "functions", "--json"], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise SystemExit(f"corpus_export: `{kforge} functions --json` failed (exit {proc.returncode}): "
                         f"{(proc.stderr or proc.stdout).strip()[:400]}\n"
                         "  (to test this script without it: --catalog fallback or KFORGE_CORPUS_CATALOG=fallback)")
    return normalize_catalog(json.loads(proc.stdout)), f"{kforge} functions --json"


def resolve_dotted(name: str):
    import torch

    parts = name.split(".")
    if parts[0] != "torch":
        raise AttributeError(name)
    obj = torch
    for p in parts[1:]:
        obj = getattr(obj, p)
    return obj


def convolution_function(op: str, args, kwargs) -> str:
    """conv1d/2d/3d or conv_transpose1d/2d/3d for a call of _convolution, convolution or _convolution_mode."""
    weight = args[1] if len(args) > 1 else kwargs.get("weight")
    rank = weight.dim() - 2
    transposed = False
    if op != "aten::_convolution_mode":
        transposed = bool(args[6] if len(args) > 6 else kwargs.get("transposed", False))
    return f"conv_transpose{rank}d" if transposed else f"conv{rank}d"


class Matcher:
    """The catalog's Python callables, by identity: id(obj) -> (obj, function name or resolver(args, kwargs))."""

    def __init__(self, catalog: dict):
        names = {f["name"] for f in catalog["functions"]}
        self.names = names
        self.by_id: dict[int, tuple[object, object]] = {}
        self.unresolved: list[str] = []
        self.conflicts: list[str] = []
        op_functions: dict[str, set[str]] = {}
        for f in catalog["functions"]:
            for form in f["forms"]:
                op_functions.setdefault(form["op"], set()).add(f["name"])
        for s in catalog["shared_forms"]:
            op_functions.setdefault(s["op"], set())
        self.op_functions = op_functions
        self.opaque = {s["op"] for s in catalog["shared_forms"] if s.get("kind") == "Opaque"} or DEFAULT_OPAQUE_OPS
        for f in catalog["functions"]:
            for dotted in f["python"]:
                try:
                    self._add(resolve_dotted(dotted), f["name"], dotted)
                except AttributeError:
                    self.unresolved.append(dotted)
        for op, fns in sorted(op_functions.items()):
            for obj, where in self.op_callables(op):
                if op in CONVOLUTION_OPS:
                    self._add(obj, lambda a, k, op=op: self._conv(op, a, k), where)
                elif len(fns) == 1:
                    self._add(obj, next(iter(fns)), where)
                elif fns:
                    self.conflicts.append(f"{where}: {op} belongs to {sorted(fns)}")

    def _conv(self, op, args, kwargs):
        name = convolution_function(op, args, kwargs)
        return name if name in self.names else None

    @staticmethod
    def op_callables(op: str):
        import torch

        base = op.split("::", 1)[1]
        for owner, prefix in ((torch, "torch"), (torch.Tensor, "torch.Tensor"), (torch._C._nn, "torch._C._nn"),
                              (torch._C._VariableFunctions, "torch._C._VariableFunctions")):
            obj = getattr(owner, base, None)
            if obj is not None and callable(obj):
                yield obj, f"{prefix}.{base}"

    def _add(self, obj, fn, where: str) -> None:
        old = self.by_id.get(id(obj))
        if old is not None and old[1] != fn and not (callable(old[1]) or callable(fn)):
            self.conflicts.append(f"{where}: already {old[1]}, also {fn}")
            return
        if old is None:
            self.by_id[id(obj)] = (obj, fn)

    def function_of(self, func, args, kwargs):
        """(is a catalog callable, the function it is a call of or None)."""
        hit = self.by_id.get(id(func))
        if hit is None or hit[0] is not func:
            return False, None
        fn = hit[1]
        if callable(fn):
            fn = fn(args, kwargs)
            return fn is not None, fn
        return True, fn


# ---- counting ------------------------------------------------------------------------------------------------------

TORCH_FUNCTION_CHECKS = ("has_torch_function", "has_torch_function_unary", "has_torch_function_variadic")


@contextlib.contextmanager
def unobserved_fast_paths():
    """The trap in the module docstring: nn.MultiheadAttention and nn.TransformerEncoderLayer look up
    torch.overrides.has_torch_function at call time to refuse their fused fast path whenever a TorchFunctionMode is
    active. Answering False for the counted run makes them take the path the unobserved model takes."""
    import torch.overrides

    original = torch.overrides.has_torch_function
    torch.overrides.has_torch_function = lambda *args, **kwargs: False
    try:
        yield
    finally:
        torch.overrides.has_torch_function = original


def make_counter(matcher: Matcher):
    from torch.overrides import TorchFunctionMode

    class CatalogCallCounter(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.counts: Counter = Counter()
            self.reentered: Counter = Counter()  # non-catalog Python functions observed inside (diagnostics)
            self._inside: list = []  # the non-catalog functions whose bodies run observed, innermost last

        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = kwargs or {}
            is_catalog, fn = matcher.function_of(func, args, kwargs)
            if is_catalog:
                self.counts[fn] += 1
                return func(*args, **kwargs)  # mode off: what it calls inside is part of this call
            return self._run_body_observed(func, args, kwargs)

        def _run_body_observed(self, func, args, kwargs):
            checks = []
            if isinstance(func, types.FunctionType):
                g = func.__globals__
                checks = [n for n in TORCH_FUNCTION_CHECKS if n in func.__code__.co_names and n in g]
            if not checks or any(f is func for f in self._inside):
                # A builtin, a function without its own check, or func again from inside its own observed body
                # (Tensor.unflatten's super().unflatten() dispatches as Tensor.unflatten; a check that did not take
                # the one-shot answer): run it unobserved, or it would come back here forever.
                return func(*args, **kwargs)
            g = func.__globals__
            saved = {n: g[n] for n in checks}
            armed = [True]

            def disarm():
                if armed[0]:
                    armed[0] = False
                    g.update(saved)

            def one_shot(original):
                def check(*a, **k):
                    if armed[0]:
                        disarm()
                        return False  # the function's own check: run its body, with the mode on
                    return original(*a, **k)
                return check

            g.update({n: one_shot(saved[n]) for n in checks})
            self._inside.append(func)
            self.reentered[getattr(func, "__qualname__", repr(func))] += 1
            try:
                with self:
                    return func(*args, **kwargs)
            finally:
                disarm()
                self._inside.pop()

    return CatalogCallCounter()


def count_calls(model, inp, matcher: Matcher) -> tuple[dict, dict]:
    """inp: (args, kwargs)."""
    import torch

    counter = make_counter(matcher)
    with torch.no_grad(), unobserved_fast_paths(), counter:
        model(*inp[0], **inp[1])
    return dict(sorted(counter.counts.items())), dict(sorted(counter.reentered.items()))


def profiler_calls(module, inp, matcher: Matcher) -> tuple[dict, object]:
    """The outermost catalog ops torch.profiler records for the first forward of a freshly loaded scripted or
    traced module (not nested in another catalog op or an opaque one), by function; and the forward's output.
    inp: (args, kwargs)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        output = module(*inp[0], **inp[1])
    counts: Counter = Counter()

    def visit(event):
        name = event.name
        if name in CONVOLUTION_OPS:
            shapes = event.input_shapes
            concrete = getattr(event, "concrete_inputs", None) or []
            transposed = bool(concrete[6]) if name != "aten::_convolution_mode" and len(concrete) > 6 else False
            rank = len(shapes[1]) - 2 if len(shapes) > 1 and shapes[1] else 2
            fn = f"conv_transpose{rank}d" if transposed else f"conv{rank}d"
            if fn in matcher.names:
                counts[fn] += 1
                return
        fns = matcher.op_functions.get(name)
        if fns:
            counts["|".join(sorted(fns))] += 1
            return
        if name in matcher.opaque:
            return
        for child in event.cpu_children:
            visit(child)

    for event in prof.events():
        if event.cpu_parent is None:
            visit(event)
    return dict(sorted(counts.items())), output


# ---- export --------------------------------------------------------------------------------------------------------

def build(name: str):
    import torch

    packages = {}
    if MODELS[name]["source"] == "torchvision":
        from torchvision import models
        packages["models"] = models
    elif MODELS[name]["source"] == "transformers":
        import transformers
        packages["transformers"] = transformers
    else:
        import timm
        packages["timm"] = timm
    torch.manual_seed(0)
    model = eval(MODELS[name]["builder"], packages)
    if name == "vit":
        # torchvision zero-initialises the ViT's head: its output would be all zeros, whatever ran before it.
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)
        torch.nn.init.normal_(model.heads.head.bias, std=0.02)
    return model.eval()


def make_input(name: str):
    """(args, kwargs): one input positionally, several by keyword."""
    import torch

    generator = torch.Generator().manual_seed(INPUT_SEED)
    values = {}
    for input_name, kind, shape in MODELS[name]["inputs"]:
        if kind == "float":
            values[input_name] = torch.randn(shape, generator=generator)
        else:
            values[input_name] = torch.randint(0, int(kind.split(":")[1]), shape, generator=generator)
    if len(values) == 1:
        return (next(iter(values.values())),), {}
    return (), values


def saved_input(inp):
    """What <name>.input.pt holds, for `kforge run --inputs-file`: the tensor, or a dict of keyword inputs."""
    args, kwargs = inp
    return kwargs if kwargs else (args[0] if len(args) == 1 else args)


def input_shapes(name: str) -> dict:
    return {input_name: list(shape) for input_name, _, shape in MODELS[name]["inputs"]}


def flatten_outputs(out, path=""):
    """(path, tensor) per tensor of a forward's output: "" for a tensor, the key or index below a container."""
    import torch

    if isinstance(out, torch.Tensor):
        return [(path, out)]
    items = out.items() if isinstance(out, dict) else enumerate(out)
    flat = []
    for key, value in items:
        flat += flatten_outputs(value, f"{path}.{key}" if path else str(key))
    return flat


def output_digests(out) -> dict:
    """Per flattened output tensor: shape, dtype, sum, sum of |x|, max |x| and size, in float64 (what the corpus test
    compares kforge's output digest with, without loading torch itself)."""
    digests = {}
    for path, t in flatten_outputs(out):
        d = t.detach().double()
        digests[path] = {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
                         "sum": d.sum().item(), "abs_sum": d.abs().sum().item(),
                         "max_abs": d.abs().max().item() if t.numel() else 0.0, "numel": t.numel()}
    return digests


def max_abs_diff(a, b) -> float:
    fa, fb = flatten_outputs(a), flatten_outputs(b)
    if [p for p, _ in fa] != [p for p, _ in fb]:
        return float("inf")
    return max(((x.double() - y.double()).abs().max().item() for (_, x), (_, y) in zip(fa, fb)), default=0.0)


def marker_key(name: str) -> dict:
    torch_ver, tv_ver = versions()
    spec = MODELS[name]
    key = {"script": SCRIPT_VERSION, "torch": torch_ver, "torchvision": tv_ver, "model": [spec["builder"],
           spec["inputs"], spec["forms"]]}
    if spec["source"] != "torchvision":
        key[spec["source"]] = md.version(spec["source"])
    return json.loads(json.dumps(key))  # as read back from the marker (tuples become lists)


def load_form(prefix: str, form: str):
    """A saved form back as a callable module: TorchScript loaded, or the .pt2 package's program as a GraphModule
    (the exported graph's ops, which the profiler counts as the exported model runs them)."""
    import torch

    if form == "pt2":
        return torch.export.load(prefix + "pt2").module()
    return torch.jit.load(prefix + f"{form}.pt").eval()


def export_model(name: str, out: str, matcher: Matcher, catalog_info: dict, force: bool) -> dict:
    import torch

    p = lambda suffix: os.path.join(out, f"{name}.{suffix}")  # noqa: E731
    marker = read_json(p("done"))
    meta = read_json(p("json"))
    files_done = (not force and marker is not None and meta is not None and marker.get("key") == marker_key(name)
                  and all(os.path.exists(os.path.join(out, s)) for s in [f"{name}.input.pt", f"{name}.output.pt"] + [
                      info["file"] for info in meta.get("forms", {}).values() if info.get("exported")]))
    if files_done and marker.get("catalog") == catalog_info["hash"]:
        return {"name": name, "status": "cached"}

    t0 = time.time()
    model = build(name)
    inp = make_input(name)
    if files_done:  # only the catalog changed: count again, keep the files
        status = "recounted"
        forms = meta["forms"]
        with torch.no_grad():
            eager = model(*inp[0], **inp[1])
    else:
        status = "exported"
        if os.path.exists(p("done")):
            os.remove(p("done"))
        with torch.no_grad():
            eager = model(*inp[0], **inp[1])
        write_atomic(p("input.pt"), lambda tmp: torch.save(saved_input(inp), tmp))
        write_atomic(p("output.pt"), lambda tmp: torch.save(eager, tmp))
        forms = {}
        for form in MODELS[name]["forms"]:
            t = time.time()
            try:
                if form == "pt2":
                    program = torch.export.export(model, *inp)

                    def write_pt2(tmp):
                        with open(tmp, "wb") as f:  # a file object: torch.export.save wants a name ending in .pt2
                            torch.export.save(program, f)

                    write_atomic(p("pt2"), write_pt2)
                    forms[form] = {"exported": True, "file": f"{name}.pt2", "seconds": round(time.time() - t, 2)}
                    continue
                if form == "script":
                    module = torch.jit.script(model)
                else:
                    with torch.no_grad():
                        args, kwargs = inp
                        module = (torch.jit.trace(model, example_kwarg_inputs=kwargs, strict=False, check_trace=False)
                                  if kwargs else torch.jit.trace(model, args, strict=False, check_trace=False))
                write_atomic(p(f"{form}.pt"), module.save)
                forms[form] = {"exported": True, "file": f"{name}.{form}.pt", "seconds": round(time.time() - t, 2)}
            except Exception as e:  # noqa: BLE001 (a form that does not export is recorded, not fatal)
                forms[form] = {"exported": False, "error": f"{type(e).__name__}: {str(e).strip()[:2000]}"}
                log(f"{name}: {form} failed: {forms[form]['error'].splitlines()[0]}")
                stale = p("pt2") if form == "pt2" else p(f"{form}.pt")
                if os.path.exists(stale):
                    os.remove(stale)

    calls, reentered = count_calls(model, inp, matcher)
    for form, info in forms.items():
        if not info.get("exported"):
            continue
        info["profiler_calls"], output = profiler_calls(load_form(p(""), form), inp, matcher)
        info["max_abs_diff_vs_eager"] = max_abs_diff(output, eager)
    torch_ver, tv_ver = versions()
    meta = {
        "name": name,
        "architecture": MODELS[name]["source"] + ": " + MODELS[name]["builder"],
        "source": MODELS[name]["source"],
        "note": MODELS[name]["note"],
        "input_shape": input_shapes(name),
        "input_file": f"{name}.input.pt",
        "output_file": f"{name}.output.pt",
        "outputs": [{"path": path, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                    for path, t in flatten_outputs(eager)],
        "output_digests": output_digests(eager),
        "module_paths": [n for n, _ in model.named_modules()],
        "parameters": sum(p.numel() for p in model.parameters()),  # a tied weight once
        "calls": calls,
        "python_functions_observed_inside": reentered,
        "forms": forms,
        "catalog_hash": catalog_info["hash"],
        "catalog_source": catalog_info["source"],
        "torch": torch_ver,
        "torchvision": tv_ver,
        "script_version": SCRIPT_VERSION,
    }
    write_json(p("json"), meta)
    write_json(p("done"), {"key": marker_key(name), "catalog": catalog_info["hash"]})
    seconds = round(time.time() - t0, 1)
    log(f"{name}: {status} in {seconds} s, {sum(calls.values())} catalog calls "
        f"({', '.join(f'{k} {v}' for k, v in calls.items())})")
    return {"name": name, "status": status, "seconds": seconds}


# ---- the counter's self-test ---------------------------------------------------------------------------------------

def self_test() -> int:
    """The counting rules on a toy module whose calls are known: outermost calls only, nested calls of non-catalog
    Python functions counted, shared convolution forms attributed, and the MultiheadAttention trap."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    rows = {"relu": ["aten::relu", "aten::relu_"], "gelu": ["aten::gelu"], "layer_norm": ["aten::layer_norm"],
            "linear": ["aten::linear"], "softmax": ["aten::softmax"], "conv2d": ["aten::conv2d"],
            "conv_transpose2d": ["aten::conv_transpose2d"],
            "scaled_dot_product_attention": ["aten::scaled_dot_product_attention"]}
    catalog = normalize_catalog({
        "functions": [{"name": n, "forms": [{"op": op} for op in ops], "python": ["torch.nn.functional." + n]}
                      for n, ops in rows.items()],
        "shared_forms": [{"op": "aten::convolution", "overload": "", "kind": "Convolution"},
                         {"op": "aten::_native_multi_head_attention", "overload": "", "kind": "Opaque"}]})
    matcher = Matcher(catalog)

    def helper(x):  # a plain Python function: not a torch function, its calls are seen one by one
        return F.gelu(x)

    class Toy(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(8)
            self.mha = nn.MultiheadAttention(8, 2, batch_first=True)
            self.conv = nn.Conv2d(2, 2, 1)
            self.w = nn.Parameter(torch.randn(2, 2, 1, 1))

        def forward(self, x):  # [1, 4, 8]
            y = F.relu(x)  # relu 1
            y = y.relu()  # relu 2 (Tensor.relu: form aten::relu)
            y = torch.relu_(y.clone())  # relu 3 (torch.relu_: form aten::relu_)
            y = F.relu(y, inplace=True)  # relu 4 (the torch.relu_ inside F.relu is the same call)
            y = self.ln(y)  # layer_norm 1 (F.layer_norm's torch.layer_norm inside is the same call)
            y = helper(y)  # gelu 1
            q = y.transpose(0, 1)
            a, _ = F.multi_head_attention_forward(  # not in the catalog: linear 2, sdpa 1 inside it count
                q, q, q, 8, 2, self.mha.in_proj_weight, self.mha.in_proj_bias, None, None, False, 0.0,
                self.mha.out_proj.weight, self.mha.out_proj.bias, training=False, need_weights=False)
            b, _ = self.mha(y, y, y, need_weights=False)  # the fused fast path: nothing counted
            img = (a.transpose(0, 1) + b).reshape(1, 2, 4, 4)
            c = self.conv(img)  # conv2d 1
            d = torch.convolution(img, self.w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)  # conv2d 2
            e = torch.convolution(img, self.w, None, [1, 1], [0, 0], [1, 1], True, [0, 0], 1)  # conv_transpose2d 1
            return F.softmax(c + d + e, -1)  # softmax 1 (its Tensor.softmax inside is the same call)

    torch.manual_seed(0)
    toy = Toy().eval()
    x = torch.randn(1, 4, 8)
    expected = {"conv2d": 2, "conv_transpose2d": 1, "gelu": 1, "layer_norm": 1, "linear": 2, "relu": 4,
                "scaled_dot_product_attention": 1, "softmax": 1}
    problems = []
    counts, reentered = count_calls(toy, ((x,), {}), matcher)
    if counts != expected:
        problems.append(f"toy counts {counts}, expected {expected}")
    if "multi_head_attention_forward" not in reentered:
        problems.append(f"F.multi_head_attention_forward was not observed inside: {reentered}")
    prof, _ = profiler_calls(toy, ((x,), {}), matcher)  # torch's own record of the unobserved eager run
    if prof != expected:
        problems.append(f"torch.profiler on the toy: {prof}, expected {expected}")

    # The trap: without unobserved_fast_paths an observed MultiheadAttention leaves its fast path.
    counter = make_counter(matcher)
    with torch.no_grad(), counter:
        toy.mha(x, x, x, need_weights=False)
    if dict(counter.counts) != {"linear": 2, "scaled_dot_product_attention": 1}:
        problems.append(f"observed MultiheadAttention without the fast-path patch: {dict(counter.counts)}; "
                        "expected linear 2, sdpa 1 (has the trap gone? then unobserved_fast_paths may go too)")
    counter = make_counter(matcher)
    with torch.no_grad(), unobserved_fast_paths(), counter:
        toy.mha(x, x, x, need_weights=False)
    if dict(counter.counts):
        problems.append(f"MultiheadAttention with the fast-path patch: {dict(counter.counts)}, expected nothing")
    for p in problems:
        print(f"FAIL {p}")
    if not problems:
        print(f"counter self-test passed: {counts}")
    return 1 if problems else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kforge", help="the kforge binary: its `functions --json` is the catalog")
    ap.add_argument("--out", help="corpus folder (default ${KFORGE_CACHE:-~/.cache/kforge}/corpus-torch<v>-tv<v>)")
    ap.add_argument("--models", nargs="+", choices=sorted(MODELS), metavar="NAME",
                    help="export only these (default: all): " + ", ".join(MODELS))
    ap.add_argument("--catalog", default=os.environ.get("KFORGE_CORPUS_CATALOG") or None,
                    help="read the catalog JSON from FILE instead of kforge; 'fallback' = built-in list (testing)")
    ap.add_argument("--force", action="store_true", help="export again even when cached")
    ap.add_argument("--list", action="store_true", help="print the model names and exit (does not import torch)")
    ap.add_argument("--print-out-dir", action="store_true", help="print the default corpus folder and exit")
    ap.add_argument("--self-test", action="store_true", help="check the call counter on a toy module and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(MODELS))
        return 0
    try:
        out = args.out or default_out_dir()
    except md.PackageNotFoundError as e:
        log(f"{e.name} is not installed in {sys.executable}: run scripts/bootstrap")
        return 77
    if args.print_out_dir:
        print(out)
        return 0
    quiet_torch()
    if args.self_test:
        return self_test()

    t0 = time.time()
    import torch  # noqa: F401
    import torchvision  # noqa: F401

    catalog, source = load_catalog(args.kforge, args.catalog)
    info = {"hash": catalog_hash(catalog), "source": source}
    matcher = Matcher(catalog)
    if matcher.unresolved:
        log(f"catalog names with no Python callable (not counted): {', '.join(matcher.unresolved)}")
    if matcher.conflicts:
        log("catalog callables claimed twice (first kept): " + "; ".join(matcher.conflicts))
    os.makedirs(out, exist_ok=True)
    lock = open(os.path.join(out, ".lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # two build trees testing at once: one exports, the other then finds it done
    for leftover in os.listdir(out):  # the temporary files of an export that was killed
        if ".tmp-" in leftover:
            os.remove(os.path.join(out, leftover))
    write_json(os.path.join(out, "catalog.json"), {"source": source, "hash": info["hash"], **catalog})
    names = args.models or list(MODELS)
    results = []
    for n in names:
        try:
            results.append(export_model(n, out, matcher, info, args.force))
        except Exception as e:  # noqa: BLE001 (one model that cannot be built or run does not stop the others)
            import traceback

            traceback.print_exc()
            results.append({"name": n, "status": "failed", "error": f"{type(e).__name__}: {e}"[:2000]})
            log(f"{n}: FAILED: {results[-1]['error']}")
    manifest_path = os.path.join(out, "manifest.json")
    manifest = read_json(manifest_path) or {}
    models = {m["name"]: m for m in manifest.get("models", [])}
    for r in results:
        if r["status"] == "failed":
            models[r["name"]] = {"name": r["name"], "error": r["error"]}
            continue
        meta = read_json(os.path.join(out, f"{r['name']}.json"))
        models[r["name"]] = {
            "name": r["name"], "architecture": meta["architecture"], "note": meta["note"],
            "input_shape": meta["input_shape"],
            "forms": {f: (i.get("file") if i.get("exported") else "failed: " + i["error"].splitlines()[0][:200])
                      for f, i in meta["forms"].items()},
            "catalog_calls": sum(meta["calls"].values()), "modules": len(meta["module_paths"]),
        }
    torch_ver, tv_ver = versions()
    write_json(manifest_path, {
        "torch": torch_ver, "torchvision": tv_ver, "script_version": SCRIPT_VERSION,
        "catalog": {"source": source, "hash": info["hash"], "functions": len(catalog["functions"])},
        "models": [models[n] for n in MODELS if n in models],
    })
    done = Counter(r["status"] for r in results)
    log(f"{out}: {', '.join(f'{v} {k}' for k, v in done.items())} in {time.time() - t0:.1f} s")
    return 1 if done["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
