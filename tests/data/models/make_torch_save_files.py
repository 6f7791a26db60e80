# SPDX-License-Identifier: Apache-2.0
"""Writes what users often try to open instead of a model: state_dict.pt (torch.save(model.state_dict())) and
pickled_module.pt (torch.save(model)), both zip archives of pickled Python objects that torch.jit.load refuses
(test_bad_models.cpp). Run with the bootstrap venv's python:
~/.cache/kforge/torch-2.11.0/bin/python make_torch_save_files.py"""
import os

import torch

here = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)
model = torch.nn.Linear(2, 2)
torch.save(model.state_dict(), os.path.join(here, "state_dict.pt"))
torch.save(model, os.path.join(here, "pickled_module.pt"))
