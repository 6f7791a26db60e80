# SPDX-License-Identifier: Apache-2.0
"""Writes tiny_mlp_inputs.pt: inputs for tiny_mlp.pt as torch.save writes them (a tuple with one float32[3, 8]
tensor of ones), for the UI tests of File › Load Inputs and --inputs-file (a few hundred bytes, checked in).

Run with the bootstrap venv's python:  python tests/ui/data/make_tiny_mlp_inputs.py
"""
import pathlib

import torch

torch.save((torch.ones(3, 8),), pathlib.Path(__file__).with_name("tiny_mlp_inputs.pt"))
