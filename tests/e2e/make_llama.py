#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes OUT/llama.trace.pt and OUT/llama.input.pt for the end-to-end test: a Hugging Face Llama built from a small
config (random weights, no download), traced as users trace it (its logits), and the token ids it was traced with,
saved with torch.save. Run with the bootstrap venv's python: make_llama.py OUT"""
import os
import sys

import torch
import transformers


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, input_ids):
        return self.m(input_ids=input_ids).logits


def main(out):
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    model = Logits(transformers.LlamaForCausalLM(config).eval()).eval()
    ids = torch.randint(0, 128, (1, 12))
    torch.jit.trace(model, (ids,), check_trace=False).save(os.path.join(out, "llama.trace.pt"))
    torch.save((ids,), os.path.join(out, "llama.input.pt"))


if __name__ == "__main__":
    main(sys.argv[1])
