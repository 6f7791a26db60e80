#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Surveys non-catalog ATen ops whose implementation calls catalog ops inside.

  survey_opaque_ops.py [--ops REGEX] [--samples N] [--op-seconds S] [--grad] [--no-extras] [--no-opaque]
                       [--all] [--unexercised] [--markdown]

Run it with the venv python scripts/bootstrap makes (torch CPU is enough): under a minute on one core for the whole
of op_db; --ops narrows it (a regex searched in OpInfo and probe names: "nn.functional.triplet", "extra").

Why: kforge's interposer serves the outermost catalog op it sees at the dispatcher. When a non-catalog op (a
CompositeImplicitAutograd decomposition, or a backend kernel that calls at::xxx) reaches a catalog op inside,
kforge would count and serve that inner call, although in Python (AITune patching torch.nn.functional) there is no
function call there. Such an outer op must be an Opaque shared form, or a form of the function it really is.

Method: every OpInfo of torch.testing's op_db (up to --samples float32 samples each, on CPU, one intra-op thread)
and a few extra probes (ops and module fast paths op_db lacks) run under torch.profiler with ATen overload names
captured. The profiler's RecordFunction sees every dispatcher call, composite ones included: the same calls the
interposer's dispatch key sees. In the resulting event tree, a catalog form or an Opaque form ends the walk (the
interposer runs its original with the key excluded, so nothing inside it is served); every other op that reaches a
catalog form through non-catalog ops is reported, with the catalog forms it reaches and the kind of its kernel.
"shape" guesses alias (direct children: one catalog call plus data movement) or distinct (it computes more).
"""

import argparse
import collections
import os
import re
import sys
import time
import types
import unittest
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CATALOG_DEF = os.path.join(ROOT, "engine", "include", "kforge", "function_catalog.def")

# Ops that only move or view data: if an outer op's direct children are one catalog call plus only these, the outer
# op is probably that function under another name (an alias); anything else means it computes something of its own.
NOISE_OPS = {
    "aten::to", "aten::_to_copy", "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::copy_",
    "aten::view", "aten::reshape", "aten::_reshape_alias", "aten::as_strided", "aten::contiguous", "aten::clone",
    "aten::expand", "aten::t", "aten::transpose", "aten::unsqueeze", "aten::squeeze", "aten::detach",
    "aten::alias", "aten::lift_fresh", "aten::resize_", "aten::result_type", "aten::fill_", "aten::zero_",
}


def parse_catalog(path):
    """{(op, overload): label} for every catalog row, and the set of Opaque shared forms."""
    text = "\n".join(line.split("//", 1)[0] for line in open(path, encoding="utf-8"))  # the header comment has rows
    q = r'\s*"([^"]*)"\s*'
    names, forms, opaque = {}, {}, set()
    for m in re.finditer(r"KFORGE_FUNCTION\(\s*(\w+)\s*," + q + "," + q + "," + q + "," + q + r"\)", text):
        names[m.group(1)] = m.group(2)
        forms[(m.group(4), m.group(5))] = m.group(2)
    for m in re.finditer(r"KFORGE_FORM\(\s*(\w+)\s*," + q + "," + q + r",\s*(\w+)\s*\)", text):
        forms[(m.group(2), m.group(3))] = names[m.group(1)]
    for m in re.finditer(r"KFORGE_SHARED_FORM\(" + q + "," + q + r",\s*(\w+)\s*\)", text):
        if m.group(3) == "Opaque":
            opaque.add((m.group(1), m.group(2)))
        else:
            forms[(m.group(1), m.group(2))] = "<" + m.group(3) + ">"
    return forms, opaque


def dispatch_kind(op, overload):
    """The kernel a CPU call runs (a backend kernel wins over composite ones): a composite kernel decomposes into
    other dispatcher calls; a CompositeImplicit op is not even seen below the autograd keys."""
    import torch

    name = op + ("." + overload if overload else "")
    for key, short in (("CPU", "CPU kernel"),
                       ("CompositeExplicitAutograd", "CompositeExplicit"),
                       ("CompositeExplicitAutogradNonFunctional", "CompositeExplicitNF"),
                       ("CompositeImplicitAutograd", "CompositeImplicit")):
        try:
            if torch._C._dispatch_has_kernel_for_dispatch_key(name, key):
                return short
        except RuntimeError:
            return "?"
    return "other"


def fmt(key):
    return key[0] + ("." + key[1] if key[1] else "")


class Survey:
    def __init__(self, forms, opaque):
        self.forms, self.opaque = forms, opaque
        self.calls = collections.Counter()  # outer op -> calls seen (outside catalog ops)
        self.hits = collections.defaultdict(collections.Counter)  # outer op -> catalog form -> calls inside
        self.calls_with_hits = collections.Counter()
        self.top_level = set()  # outer ops seen with no op above them
        self.alias_like = collections.defaultdict(lambda: True)  # direct children always: one catalog call + noise
        self.sources = collections.defaultdict(set)  # outer op -> probes (OpInfo names) that showed it
        # Not served today, but one catalog row away: a catalog op under an overload the catalog lacks (.out).
        self.op_names = {op for op, _ in forms}
        self.near = collections.defaultdict(collections.Counter)

    def add_tree(self, events, source):
        children = collections.defaultdict(list)
        roots = []
        for ev in events:
            if "::" not in ev.name:
                continue  # user annotations and the like are transparent
            parent = ev.cpu_parent
            while parent is not None and "::" not in parent.name:
                parent = parent.cpu_parent
            (children[id(parent)] if parent is not None else roots).append(ev)
        for ev in roots:
            self._visit(ev, children, source, top=True)

    def _visit(self, ev, children, source, top):
        """Returns the catalog forms reached below ev through non-catalog ops (ev itself not a catalog op)."""
        key = (ev.name, ev.overload_name or "")
        if key in self.forms or key in self.opaque:
            return None  # a served (or opaque) call: nothing inside it is served
        reached = collections.Counter()
        direct_catalog, direct_other = 0, 0
        for child in children.get(id(ev), ()):
            ckey = (child.name, child.overload_name or "")
            if ckey in self.forms:
                reached[ckey] += 1
                direct_catalog += 1
                continue
            if ckey in self.opaque:
                direct_other += 1
                continue
            if child.name not in NOISE_OPS:
                direct_other += 1
            if child.name in self.op_names:
                self.near[key][ckey] += 1
                self.sources[key].add(source)
            reached.update(self._visit(child, children, source, top=False))
        self.calls[key] += 1
        if top:
            self.top_level.add(key)
        if reached:
            self.calls_with_hits[key] += 1
            self.hits[key].update(reached)
            self.sources[key].add(source)
            if not (direct_catalog == 1 and direct_other == 0):
                self.alias_like[key] = False
        return reached


def extra_probes(torch):
    """Calls op_db does not make: module fast paths (to check the Opaque rows) and ops only reached directly."""
    F = torch.nn.functional
    x = torch.randn(2, 5, 8)

    def mha_fast():
        m = torch.nn.MultiheadAttention(8, 2, batch_first=True).eval()
        m(x, x, x, need_weights=False)

    def encoder_fast():
        m = torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True).eval()
        m(x)

    def quantized_cell(fn, gates):
        # The int8 cells of the old torch.jit.quantized RNNs; their weights go through fbgemm's packing.
        inp, h = torch.randn(2, 8), torch.randn(2, 4)
        w_ih, w_hh, b = torch.randn(gates * 4, 8), torch.randn(gates * 4, 4), torch.zeros(gates * 4)
        q_ih, co_ih, s_ih, z_ih = torch.fbgemm_linear_quantize_weight(w_ih)
        q_hh, co_hh, s_hh, z_hh = torch.fbgemm_linear_quantize_weight(w_hh)
        p_ih, p_hh = torch.fbgemm_pack_quantized_matrix(q_ih), torch.fbgemm_pack_quantized_matrix(q_hh)
        hx = [h, h] if gates == 4 else h
        return lambda: fn(inp, hx, w_ih, w_hh, b, b, p_ih, p_hh, co_ih, co_hh, s_ih, s_hh, z_ih, z_hh)

    q4 = torch.randn(2, 3, 5, 8)
    return {
        "extra.sdpa_math": lambda: torch.ops.aten._scaled_dot_product_attention_math(q4, q4, q4),
        # linear + relu/gelu fused; the CPU kernel applies the activation with a catalog op (encoder fast path).
        "extra._addmm_activation.relu": lambda: torch._addmm_activation(torch.zeros(4), x[0], torch.randn(8, 4)),
        "extra._addmm_activation.gelu": lambda: torch._addmm_activation(torch.zeros(4), x[0], torch.randn(8, 4),
                                                                        use_gelu=True),
        "extra.pad_enum.reflect": lambda: torch._C._nn._pad_enum(x, [1, 1], 1, None),
        "extra.pad_circular": lambda: torch._C._nn._pad_circular(x, [1, 1]),
        "extra.quantized_rnn_tanh_cell": lambda: quantized_cell(torch.quantized_rnn_tanh_cell, 1)(),
        "extra.quantized_rnn_relu_cell": lambda: quantized_cell(torch.quantized_rnn_relu_cell, 1)(),
        "extra.quantized_gru_cell": lambda: quantized_cell(torch.quantized_gru_cell, 3)(),
        "extra.quantized_lstm_cell": lambda: quantized_cell(torch.quantized_lstm_cell, 4)(),
        "extra.special.expit": lambda: torch.special.expit(x),
        "extra.rrelu_with_noise.eval": lambda: torch._C._nn.rrelu_with_noise(x, torch.empty_like(x), training=False),
        "extra.rrelu_with_noise.train": lambda: torch._C._nn.rrelu_with_noise(x, torch.empty_like(x), training=True),
        "extra.rrelu_with_noise_.eval": lambda: torch._C._nn.rrelu_with_noise_(x.clone(), torch.empty_like(x)),
        "extra.triplet_margin_loss": lambda: F.triplet_margin_loss(x, x + 1, x - 1),
        "extra.softmax.Dimname": lambda: x.refine_names("N", "C", "L").softmax("L"),
        "extra.log_softmax.Dimname": lambda: x.refine_names("N", "C", "L").log_softmax("L"),
        "extra.special.softmax": lambda: torch.special.softmax(x, 1),
        "extra.special.log_softmax": lambda: torch.special.log_softmax(x, 1),
        "extra.embedding_bag.default": lambda: torch.embedding_bag(torch.randn(10, 3), torch.tensor([1, 2, 4, 5]),
                                                                   torch.tensor([0, 2])),
        "extra.nn.LSTM": lambda: torch.nn.LSTM(8, 4, batch_first=True)(x),
        "extra.nn.GRU": lambda: torch.nn.GRU(8, 4, batch_first=True)(x),
        "extra.nn.RNN": lambda: torch.nn.RNN(8, 4, batch_first=True)(x),
        "extra.nn.LSTMCell": lambda: torch.nn.LSTMCell(8, 4)(x[0]),
        "extra.nn.MultiheadAttention.fast": mha_fast,
        "extra.nn.TransformerEncoderLayer.fast": encoder_fast,
    }


def opdb_probes(torch, pattern, samples, op_seconds, grad):
    """Yields (name, thunk) per OpInfo: the thunk runs up to `samples` sample inputs, skipping those that fail."""
    if "expecttest" not in sys.modules:
        try:
            import expecttest  # noqa: F401
        except ImportError:  # only the base of common_utils.TestCase; the survey runs no test
            sys.modules["expecttest"] = types.SimpleNamespace(TestCase=unittest.TestCase)
    from torch.testing._internal.common_methods_invocations import op_db

    for op in op_db:
        name = op.name + ("." + op.variant_test_name if op.variant_test_name else "")
        if pattern and not re.search(pattern, name):
            continue
        try:
            dtypes = op.supported_dtypes("cpu")
        except Exception:  # noqa: BLE001 - some OpInfos cannot answer for a device
            continue
        dtype = next((d for d in (torch.float32, torch.float64, torch.int64, torch.bool) if d in dtypes), None)
        if dtype is None:
            continue

        def run(op=op, dtype=dtype):
            start, ran = time.monotonic(), 0
            requires_grad = grad and dtype.is_floating_point
            for i, sample in enumerate(op.sample_inputs("cpu", dtype, requires_grad=requires_grad)):
                if i >= samples or time.monotonic() - start > op_seconds:
                    break
                try:
                    op.op(sample.input, *sample.args, **sample.kwargs)
                    ran += 1
                except Exception:  # noqa: BLE001 - a sample the op rejects is just skipped
                    pass
            return ran

        yield name, run


def unexercised(torch, survey):
    """op_db misses ops; a decomposition that calls a catalog op usually shares a word with the function's name."""
    stems = {op[len("aten::"):].strip("_") for op, _ in survey.forms} | {
        "relu", "sigmoid", "expit", "softmax", "conv", "pool", "norm", "dropout", "loss", "embedding", "upsample",
        "pad", "shuffle", "attention", "distance", "similarity", "linear", "rnn", "lstm", "gru", "elu", "tanh"}
    out = []
    for name in sorted(torch._C._dispatch_get_all_op_names()):
        op, _, overload = name.partition(".")
        key = (op, overload)
        if (not op.startswith("aten::") or key in survey.forms or key in survey.opaque or key in survey.calls
                or "backward" in op or overload.endswith("out")):
            continue
        if any(s in op for s in stems) and torch._C._dispatch_has_kernel_for_dispatch_key(
                name, "CompositeImplicitAutograd"):
            out.append(name)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", help="regex searched in OpInfo / probe names")
    parser.add_argument("--samples", type=int, default=30, help="sample inputs per OpInfo (default 30)")
    parser.add_argument("--op-seconds", type=float, default=2.0, help="stop an OpInfo's samples after this long")
    parser.add_argument("--no-extras", action="store_true", help="op_db only")
    parser.add_argument("--no-opaque", action="store_true",
                        help="treat the catalog's Opaque rows as ordinary ops: shows what each one shields")
    parser.add_argument("--grad", action="store_true",
                        help="op_db samples require grad and run with grad on (some decompositions branch on it)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--all", action="store_true", help="also list ops seen only nested in other ops")
    parser.add_argument("--unexercised", action="store_true",
                        help="also list composite ATen ops named like a catalog function that no probe reached")
    args = parser.parse_args()

    warnings.filterwarnings("ignore")
    import torch
    from torch._C._profiler import _ExperimentalConfig
    from torch.profiler import ProfilerActivity, profile

    torch.set_num_threads(1)  # ops in intra-op worker threads would show as roots of their own tree
    forms, opaque = parse_catalog(CATALOG_DEF)
    survey = Survey(forms, set() if args.no_opaque else opaque)
    probes = [] if args.no_extras else [(n, lambda f=f: (f(), None)[1]) for n, f in extra_probes(torch).items()
                                        if not args.ops or re.search(args.ops, n)]  # None: not a sample count
    probes += list(opdb_probes(torch, args.ops, args.samples, args.op_seconds, args.grad))

    config = _ExperimentalConfig(capture_overload_names=True)  # catalog rows are op + overload
    started, failed, ran, idle = time.monotonic(), [], 0, []
    torch.manual_seed(0)
    for name, thunk in probes:
        try:
            with torch.set_grad_enabled(args.grad), profile(
                    activities=[ProfilerActivity.CPU], experimental_config=config) as p:
                n = thunk()
            ran += 1 if n is None else n
            if n == 0:
                idle.append(name)
            survey.add_tree(p.events(), name)
        except Exception as e:  # noqa: BLE001
            failed.append(f"{name}: {type(e).__name__}")
    elapsed = time.monotonic() - started

    rows = sorted(k for k in survey.hits if args.all or k in survey.top_level)
    header = ["outer op", "kind", "top", "calls w/ hits", "catalog forms reached (calls)", "shape", "seen in"]
    table = []
    for key in rows:
        reached = ", ".join(f"{forms[f]}[{fmt(f)}] x{n}" for f, n in survey.hits[key].most_common())
        seen = sorted(survey.sources[key])
        table.append([fmt(key), dispatch_kind(*key), "yes" if key in survey.top_level else "nested",
                      f"{survey.calls_with_hits[key]}/{survey.calls[key]}", reached,
                      "alias?" if survey.alias_like[key] else "distinct?",
                      ", ".join(seen[:3]) + (f" +{len(seen) - 3}" if len(seen) > 3 else "")])
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in table:
            print("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    else:
        widths = [max(len(str(r[i])) for r in table + [header]) for i in range(len(header))]
        for r in [header] + table:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    print(f"\n{len(probes)} probes ({ran} samples ran; {len(idle)} OpInfos ran none: {' '.join(idle)}) in "
          f"{elapsed:.0f} s, {len(failed)} failed to profile; {len(survey.calls)} distinct ops seen; catalog: "
          f"{len(forms)} forms, {len(opaque)} opaque; torch {torch.__version__}", file=sys.stderr)
    for f in failed:
        print("  failed: " + f, file=sys.stderr)
    if args.unexercised:
        print("\nCompositeImplicit ops named like a catalog function, not exercised (candidates for --ops probes):")
        print("  " + " ".join(unexercised(torch, survey)))
    near = sorted(k for k in survey.near if k not in survey.hits and (args.all or k in survey.top_level))
    if near:
        print("\nNot served (the overload is not a catalog form), but reaching a catalog op by name:")
        for key in near:
            inner = ", ".join(f"{fmt(f)} x{n}" for f, n in survey.near[key].most_common())
            seen = ", ".join(sorted(survey.sources[key])[:3])
            print(f"  {fmt(key)} [{dispatch_kind(*key)}]: {inner}  (seen in {seen})")


if __name__ == "__main__":
    main()
