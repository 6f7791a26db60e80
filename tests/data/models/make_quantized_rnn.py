# SPDX-License-Identifier: Apache-2.0
"""Writes quantized_rnn.script.pt: a 2-layer LSTM followed by a GRU, dynamically quantized
(torch.ao.quantization.quantize_dynamic, qint8) and scripted, as speech and sequence models are deployed on CPUs. Their
forwards call aten::quantized_lstm and aten::quantized_gru, whose gates' sigmoid and tanh run inside ATen's C++: no
torch.nn.functional call (test_function_catalog.cpp). Run with the bootstrap venv's python:
~/.cache/kforge/torch-2.11.0/bin/python make_quantized_rnn.py"""
import os

import torch


class Recurrent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, num_layers=2)
        self.gru = torch.nn.GRU(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.lstm(x)
        z, _ = self.gru(y)
        return torch.sigmoid(z)


torch.manual_seed(0)
model = torch.ao.quantization.quantize_dynamic(Recurrent().eval(), {torch.nn.LSTM, torch.nn.GRU}, dtype=torch.qint8)
torch.jit.script(model).save(os.path.join(os.path.dirname(os.path.abspath(__file__)), "quantized_rnn.script.pt"))
