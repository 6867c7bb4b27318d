"""PyTorch-exported ONNX models for tests/onnx/test_import_torch.py.

Run with a venv holding torch (CPU) and onnx 1.16.2, from the repository root::

    python3.11 -m venv venv-torch
    venv-torch/bin/pip install torch==2.13.0 onnx==1.16.2 numpy
    venv-torch/bin/python tools/make_torch_onnx_fixtures.py

It writes ``tests/fixtures/onnx_torch/``. The models are exported by
``torch.onnx.export`` with the TorchScript exporter (``dynamo=False``), so the files have
PyTorch's own node patterns (BatchNorm folded into Conv in eval mode, Flatten + Gemm,
GlobalAveragePool for the adaptive pool, LSTM nodes wrapped in Shape / Gather / Concat /
ConstantOfShape / Slice for the zero initial states and Squeeze / Transpose / Reshape
after them, Constant nodes):

- ``resnet18_opset13.onnx``: ResNet-18 (torchvision's architecture, written here), eval
  mode, default export (Conv+BN folded), batch 2.
- ``resnet18_opset17.onnx``: the same at opset 17, exported with
  ``training=TrainingMode.PRESERVE`` so the BatchNormalization nodes stay, and a
  symbolic batch axis.
- ``lstm_opset13.onnx``: ``nn.LSTM(16, 32, num_layers=2)`` (time-major) + ``nn.Linear``,
  a symbolic batch axis, zero initial states made in the graph.
- ``bilstm_opset13.onnx``: a bidirectional 2-layer ``nn.LSTM`` (batch_first) taking
  ``h0``, ``c0`` as inputs, returning the outputs and the final states.
- ``shape_ops_opset13.onnx``: sizes read from the input (``view(n, -1)``,
  ``expand(n, -1)``, ``zeros(n, 5)``, ``new_ones(y.shape)``) with a symbolic batch axis:
  Shape / Gather / Unsqueeze / Concat into Reshape, Expand (through PyTorch's
  Equal / Where for -1) and ConstantOfShape.

ResNet-18's 45 MB of weights are not committed: every initializer of more than
``STRIP`` elements keeps its name, type and dims but no data, and the test fills it with
seeded weights (tests/onnx/test_import_torch.py, ``fill_weights``). The LSTM models keep
torch's weights, and ``torch_io.npz`` stores a fixed input and torch's outputs for them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import torch
from torch import nn

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "onnx_torch"
STRIP = 1024  # initializers larger than this lose their data


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm, and the identity or a 1x1 projection."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x):
        skip = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + skip)


class ResNet18(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        stages, cin = [], 64
        for i, cout in enumerate((64, 128, 256, 512)):
            stride = 1 if i == 0 else 2
            stages.append(nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
            cin = cout
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class LSTMHead(nn.Module):
    """Time-major 2-layer LSTM, then a Linear on every step."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(16, 32, num_layers=2)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(self.lstm(x)[0])


class BiLSTM(nn.Module):
    """Batch-major bidirectional 2-layer LSTM with given initial states."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 12, num_layers=2, bidirectional=True, batch_first=True)

    def forward(self, x, h0, c0):
        y, (h, c) = self.lstm(x, (h0, c0))
        return y, h, c


class ShapeOps(nn.Module):
    """Sizes read from tensors: ``view(n, -1)``, ``expand(n, -1)``, ``zeros(n, 5)``,
    ``new_ones(y.shape)``, ``reshape(n, 4, 9)``, for a symbolic batch axis."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(36, 5)
        self.bias = nn.Parameter(torch.randn(1, 5))

    def forward(self, x):
        n = x.size(0)
        y = self.fc(x.view(n, -1)) + self.bias.expand(n, -1)
        z = torch.zeros(n, 5) + y.new_ones(y.shape)
        return y * z, x.reshape(n, 4, 9).transpose(1, 2)


def _randomize_bn(model, gen):
    """Non-trivial BatchNorm statistics (a fresh model's are 0 and 1)."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.rand(n, generator=gen) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=gen) * 0.5 + 0.5)
            m.bias.data.copy_(torch.rand(n, generator=gen) * 0.2 - 0.1)


def _strip(model):
    """The graph without the data of its large initializers."""
    for t in model.graph.initializer:
        n = int(np.prod(t.dims)) if len(t.dims) else 1
        if n > STRIP:
            dims, dtype, name = list(t.dims), t.data_type, t.name
            t.Clear()
            t.name, t.data_type = name, dtype
            t.dims.extend(dims)
    return model


def _export(model, args, name, opset, **kw):
    path = OUT / name
    torch.onnx.export(model, args, str(path), dynamo=False, opset_version=opset, **kw)
    return path


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        resnet = ResNet18().eval()
        _randomize_bn(resnet, gen)
        x = torch.randn(2, 3, 64, 64, generator=gen)
        names = dict(input_names=["input"], output_names=["logits"])
        _export(resnet, (x,), "resnet18_opset13.onnx", 13, **names)
        _export(
            resnet,
            (x,),
            "resnet18_opset17.onnx",
            17,
            training=torch.onnx.TrainingMode.PRESERVE,
            dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
            **names,
        )
        for f in ("resnet18_opset13.onnx", "resnet18_opset17.onnx"):
            m = onnx.load(str(OUT / f))
            onnx.save(_strip(m), str(OUT / f))

        io = {}
        lstm = LSTMHead().eval()
        x = torch.randn(5, 3, 16, generator=gen)
        _export(
            lstm,
            (x,),
            "lstm_opset13.onnx",
            13,
            input_names=["x"],
            output_names=["y"],
            dynamic_axes={"x": {1: "batch"}, "y": {1: "batch"}},
        )
        io["lstm.x"], io["lstm.y"] = x.numpy(), lstm(x).numpy()

        bi = BiLSTM().eval()
        x = torch.randn(2, 6, 8, generator=gen)
        h0 = torch.randn(4, 2, 12, generator=gen) * 0.5
        c0 = torch.randn(4, 2, 12, generator=gen) * 0.5
        _export(
            bi,
            (x, h0, c0),
            "bilstm_opset13.onnx",
            13,
            input_names=["x", "h0", "c0"],
            output_names=["y", "h", "c"],
        )
        y, h, c = bi(x, h0, c0)
        io.update({"bilstm.x": x.numpy(), "bilstm.h0": h0.numpy(), "bilstm.c0": c0.numpy()})
        io.update({"bilstm.y": y.numpy(), "bilstm.h": h.numpy(), "bilstm.c": c.numpy()})

        ops = ShapeOps().eval()
        x = torch.randn(2, 4, 3, 3, generator=gen)
        _export(
            ops,
            (x,),
            "shape_ops_opset13.onnx",
            13,
            input_names=["x"],
            output_names=["y", "t"],
            dynamic_axes={"x": {0: "n"}, "y": {0: "n"}, "t": {0: "n"}},
        )
        y, t = ops(x)
        io.update({"shape_ops.x": x.numpy(), "shape_ops.y": y.numpy(), "shape_ops.t": t.numpy()})
        np.savez_compressed(OUT / "torch_io.npz", **io)
    for p in sorted(OUT.iterdir()):
        print(f"{p.name}: {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
