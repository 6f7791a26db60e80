# SPDX-License-Identifier: Apache-2.0
"""Writes a small decoder exported with dynamic shapes, as users export language models (test_exported_program.cpp):
  dynamic_decoder.pt2       torch.export.save of the prompt pass, batch and sequence Dim.DYNAMIC
  dynamic_decode_step.pt2   torch.export.save of one decode step with a key/value cache, batch and cache length
                            Dim.DYNAMIC
  dynamic_decoder.expected.json   Python's named_modules() paths, which `kforge modules` must list exactly
Export gives the sym_size nodes of the dynamic dimensions a placeholder module stack
("_empty_nn_module_stack_from_metadata_hook"), which is no module of the model.
Run with the bootstrap venv's python: ~/.cache/kforge/torch-2.11.0/bin/python make_dynamic_decoder.py"""
import json
import os

import torch
import torch.nn.functional as F
from torch.export import Dim

HEADS, DIM, VOCAB = 2, 16, 50


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(DIM, 3 * DIM)
        self.out = torch.nn.Linear(DIM, DIM)

    def forward(self, x, past_k=None, past_v=None):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4)
        if past_k is not None:
            k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=past_k is None)
        return self.out(y.transpose(1, 2).reshape(b, t, DIM)), k, v


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, DIM)
        self.norm = torch.nn.LayerNorm(DIM)
        self.attn = Attention()
        self.mlp = torch.nn.Sequential(torch.nn.Linear(DIM, 4 * DIM), torch.nn.GELU(), torch.nn.Linear(4 * DIM, DIM))
        self.head = torch.nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, ids, past_k=None, past_v=None):
        h = self.embed(ids)
        a, k, v = self.attn(self.norm(h), past_k, past_v)
        h = h + a
        h = h + self.mlp(h)
        return self.head(h), k, v


class DecodeStep(torch.nn.Module):
    def __init__(self, decoder):
        super().__init__()
        self.decoder = decoder

    def forward(self, ids, past_k, past_v):
        return self.decoder(ids, past_k, past_v)


here = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)
decoder = Decoder().eval()
ids = torch.randint(0, VOCAB, (2, 5))
prompt = torch.export.export(decoder, (ids,), dynamic_shapes={"ids": {0: Dim.DYNAMIC, 1: Dim.DYNAMIC}})
torch.export.save(prompt, os.path.join(here, "dynamic_decoder.pt2"))

cache = torch.randn(2, HEADS, 5, DIM // HEADS)
step = DecodeStep(decoder).eval()
cached = {0: Dim.DYNAMIC, 2: Dim.DYNAMIC}
decode = torch.export.export(step, (ids[:, :1], cache, cache.clone()),
                             dynamic_shapes={"ids": {0: Dim.DYNAMIC}, "past_k": cached, "past_v": cached})
torch.export.save(decode, os.path.join(here, "dynamic_decode_step.pt2"))

for name, program in (("prompt", prompt), ("decode step", decode)):
    stacks = {k for n in program.graph.nodes for k in (n.meta.get("nn_module_stack") or {})}
    print(name, "module stack keys:", sorted(stacks))
with open(os.path.join(here, "dynamic_decoder.expected.json"), "w") as f:
    json.dump({"dynamic_decoder.pt2": [name for name, _ in decoder.named_modules()],
               "dynamic_decode_step.pt2": [name for name, _ in step.named_modules()]}, f, indent=1)
    f.write("\n")
