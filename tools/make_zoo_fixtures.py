"""Export reduced MXNet 1.9.1 model-zoo networks for ``tests/gluon/test_zoo_import.py``.

Run with the reference interpreter::

    .venv-mxnet/bin/python tools/make_zoo_fixtures.py [--out DIR]

Each family is built from ``mxnet.gluon.model_zoo.vision`` with tiny widths:
``ResNetV1``/``ResNetV2``, ``MobileNet``/``MobileNetV2`` (multiplier 0.25) and
``DenseNet`` are the zoo classes themselves. SqueezeNet, Inception3, VGG and
AlexNet hard-code widths (or 4096-unit Dense layers) that would make the files
tens of MB, so they are rebuilt here at small width from the same layer types,
with the zoo's own helpers where it has them (``squeezenet._make_fire``,
``inception._make_branch``/``_make_basic_conv``, ``VGG._make_features``); the
tiny Inception adds one ``count_include_pad=False`` average pooling branch.

For every model: fixed seeds, Xavier weights, random BatchNorm gamma/beta, a
few training-mode forwards (non-trivial running statistics), ``hybridize()``,
one predict-mode forward, ``export``. Layout of DIR (default
``tests/fixtures/zoo``): ``<name>-symbol.json``, ``<name>-0000.params`` and
``io.npz`` with ``<name>.x`` (input, float16-exact values stored as float16),
``<name>.y`` (predict-mode output), for the models in ``WITH_GRAD``
``<name>.gy``, ``<name>.head``, ``<name>.xgrad`` (output of one more forward on ``x``
in the mode ``WITH_GRAD`` names, and d sum(gy * head) / dx) and,
for ``resnet1`` only, ``.xtrain`` / ``.ytrain`` / ``.aux.<name>`` (a training-mode
output and the running statistics after that one training step; MXNet 1.x
writes them in the backward, gluonjax in the forward).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("MXNET_MKLDNN_ENABLED", "0")  # MKLDNN's DenseNet backward fails on CPU
os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")

import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402
from mxnet.gluon import nn  # noqa: E402
from mxnet.gluon.contrib.nn import HybridConcurrent  # noqa: E402
from mxnet.gluon.model_zoo import vision  # noqa: E402
from mxnet.gluon.model_zoo.vision import inception, squeezenet  # noqa: E402
from mxnet.gluon.model_zoo.vision.resnet import BasicBlockV1, BottleneckV2  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "zoo"
SEED = 7
# input gradients: MXNet 1.9.1's BatchNorm backward in predict mode uses batch statistics
# (not the gradient of its predict-mode output), so BatchNorm models are differentiated
# in training mode; they have no Dropout, so that is deterministic.
WITH_GRAD = {
    "resnet1": "train",
    "resnet2": "train",
    "squeezenet11": "predict",
    "alexnet": "predict",
}


class TinySqueezeNet(mx.gluon.HybridBlock):
    """SqueezeNet 1.0 / 1.1 layout (ceil-mode max pools, fire modules) at small width."""

    def __init__(self, version, classes=10, **kwargs):
        super().__init__(**kwargs)
        fire = squeezenet._make_fire
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            if version == "1.0":
                self.features.add(nn.Conv2D(8, kernel_size=7, strides=2))
                self.features.add(nn.Activation("relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                self.features.add(fire(4, 8, 8))
                self.features.add(fire(4, 8, 8))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                self.features.add(fire(6, 12, 12))
            else:
                self.features.add(nn.Conv2D(8, kernel_size=3, strides=2))
                self.features.add(nn.Activation("relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                self.features.add(fire(4, 8, 8))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                self.features.add(fire(6, 12, 12))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1))
            self.output.add(nn.Activation("relu"))
            self.output.add(nn.AvgPool2D(3))
            self.output.add(nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def _concurrent(prefix, *branches):
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        for b in branches:
            out.add(b)
    return out


class TinyInception3(mx.gluon.HybridBlock):
    """Inception v3 block types A-E once each, at small width (input 75x75)."""

    def __init__(self, classes=10, **kwargs):
        super().__init__(**kwargs)
        br = inception._make_branch
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(inception._make_basic_conv(channels=8, kernel_size=3, strides=2))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(
                _concurrent(  # A
                    "A1_",
                    br(None, (4, 1, None, None)),
                    br(None, (4, 1, None, None), (6, 5, None, 2)),
                    br(None, (4, 1, None, None), (6, 3, None, 1), (6, 3, None, 1)),
                    br("avg", (4, 1, None, None)),
                )
            )
            self.features.add(
                _concurrent(  # B
                    "B_",
                    br(None, (8, 3, 2, None)),
                    br(None, (4, 1, None, None), (6, 3, None, 1), (6, 3, 2, None)),
                    br("max"),
                )
            )
            self.features.add(
                _concurrent(  # C
                    "C1_",
                    br(None, (8, 1, None, None)),
                    br(
                        None,
                        (4, 1, None, None),
                        (4, (1, 7), None, (0, 3)),
                        (8, (7, 1), None, (3, 0)),
                    ),
                    br(
                        None,
                        (4, 1, None, None),
                        (4, (7, 1), None, (3, 0)),
                        (8, (1, 7), None, (0, 3)),
                    ),
                    br("avg", (8, 1, None, None)),
                )
            )
            self.features.add(
                _concurrent(  # D
                    "D_",
                    br(None, (4, 1, None, None), (8, 3, 2, None)),
                    br(None, (4, 1, None, None), (4, (1, 7), None, (0, 3)), (8, 3, 2, None)),
                    br("max"),
                )
            )
            self.features.add(self._make_e())
            self.features.add(nn.AvgPool2D(pool_size=3))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    @staticmethod
    def _make_e():
        br = inception._make_branch
        out = HybridConcurrent(axis=1, prefix="E1_")
        with out.name_scope():
            out.add(br(None, (8, 1, None, None)))
            for first in ((4, 1, None, None), None):
                seq = nn.HybridSequential(prefix="")
                if first is None:
                    seq.add(br(None, (4, 1, None, None), (6, 3, None, 1)))
                else:
                    seq.add(br(None, first))
                split = HybridConcurrent(axis=1, prefix="")
                split.add(br(None, (6, (1, 3), None, (0, 1))))
                split.add(br(None, (6, (3, 1), None, (1, 0))))
                seq.add(split)
                out.add(seq)
            pool = nn.HybridSequential(prefix="")
            pool.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1, count_include_pad=False))
            pool.add(inception._make_basic_conv(channels=4, kernel_size=1))
            out.add(pool)
        return out

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class TinyVGG(mx.gluon.HybridBlock):
    """VGG features (``VGG._make_features``) with 32-unit instead of 4096-unit Dense layers."""

    def __init__(self, layers, filters, classes=10, batch_norm=True, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = vision.VGG._make_features(self, layers, filters, batch_norm)
            for _ in range(2):
                self.features.add(nn.Dense(32, activation="relu"))
                self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class TinyAlexNet(mx.gluon.HybridBlock):
    """AlexNet's layer sequence (11x11/4 conv, 3/2 max pools, dropout MLP) at small width."""

    def __init__(self, classes=10, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                self.features.add(
                    nn.Conv2D(8, kernel_size=11, strides=4, padding=2, activation="relu")
                )
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Conv2D(12, kernel_size=5, padding=2, activation="relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                for c in (16, 12, 12):
                    self.features.add(nn.Conv2D(c, kernel_size=3, padding=1, activation="relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Flatten())
                for _ in range(2):
                    self.features.add(nn.Dense(32, activation="relu"))
                    self.features.add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def models():
    """(name, constructor, input shape)."""
    return [
        (
            "resnet1",
            lambda: vision.ResNetV1(BasicBlockV1, [1, 1, 1, 1], [8, 8, 16, 32, 64], classes=10),
            (2, 3, 32, 32),
        ),
        (
            "resnet2",
            lambda: vision.ResNetV2(BottleneckV2, [1, 1, 1, 1], [8, 16, 24, 32, 48], classes=10),
            (1, 3, 32, 32),
        ),
        ("mobilenet", lambda: vision.MobileNet(0.25, classes=10), (1, 3, 32, 32)),
        ("mobilenet2", lambda: vision.MobileNetV2(0.25, classes=10), (1, 3, 32, 32)),
        ("squeezenet10", lambda: TinySqueezeNet("1.0"), (1, 3, 64, 64)),
        ("squeezenet11", lambda: TinySqueezeNet("1.1"), (1, 3, 64, 64)),
        (
            "densenet",
            lambda: vision.DenseNet(8, 4, [2, 2], bn_size=2, dropout=0.1, classes=10),
            (1, 3, 56, 56),
        ),
        ("inception3", lambda: TinyInception3(), (1, 3, 75, 75)),
        ("vgg_bn", lambda: TinyVGG([1, 1, 1, 1, 1], [8, 8, 16, 16, 16]), (1, 3, 32, 32)),
        ("alexnet", lambda: TinyAlexNet(), (1, 3, 64, 64)),
    ]


def build(name, make, shape, out, io):
    mx.random.seed(SEED)
    np.random.seed(SEED)
    net = make()
    net.initialize(mx.init.Xavier(magnitude=2.0))
    net(mx.nd.zeros(shape))  # finish deferred initialization
    for pname, p in net.collect_params().items():
        if pname.endswith(("_gamma", "_beta")):
            base = 1.0 if pname.endswith("_gamma") else 0.0
            p.set_data(mx.nd.array(base + 0.2 * np.random.randn(*p.shape)))
    for _ in range(3):  # training-mode passes give non-trivial running statistics
        with mx.autograd.record():
            y = net(mx.nd.array(np.random.randn(*shape) * 2 + 0.5))
        y.backward()  # MXNet 1.x updates BatchNorm's running statistics in the backward
    net.hybridize()
    x = np.random.randn(*shape).astype(np.float16).astype(np.float32)  # stored as float16
    y = net(mx.nd.array(x))
    io[f"{name}.x"] = x.astype(np.float16)
    io[f"{name}.y"] = y.asnumpy()
    net.export(str(out / name), epoch=0)
    if name == "resnet1":  # one training step: batch statistics and updated running stats
        xt = np.random.randn(*shape).astype(np.float32)
        with mx.autograd.record(train_mode=True):
            yt = net(mx.nd.array(xt))
        yt.backward()
        io[f"{name}.xtrain"] = xt
        io[f"{name}.ytrain"] = yt.asnumpy()
        for pname, p in net.collect_params().items():
            if pname.endswith(("running_mean", "running_var")):
                io[f"{name}.aux.{pname}"] = p.data().asnumpy()
    if name in WITH_GRAD:
        xs = mx.nd.array(x)
        xs.attach_grad()
        with mx.autograd.record(train_mode=WITH_GRAD[name] == "train"):
            yg = net(xs)
        head = np.random.randn(*yg.shape).astype(np.float32)
        yg.backward(mx.nd.array(head))
        io[f"{name}.gy"] = yg.asnumpy()
        io[f"{name}.head"] = head
        io[f"{name}.xgrad"] = xs.grad.asnumpy()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    io = {}
    for name, make, shape in models():
        print("building", name, flush=True)
        build(name, make, shape, args.out, io)
    np.savez_compressed(args.out / "io.npz", **io)
    total = 0
    for f in sorted(args.out.iterdir()):
        total += f.stat().st_size
        print(f"{f.name:32s} {f.stat().st_size:9d}")
    print(f"{'total':32s} {total:9d}")


if __name__ == "__main__":
    main()
