"""Record real MXNet 1.9.1 ``gluon.nn`` layer results for ``tests/gluon/test_conv_layers.py``
and ``tests/gluon/test_activation_layers.py``.

Run with the reference interpreter::

    .venv-mxnet/bin/python tools/make_layer_fixtures.py [--out DIR]

Every case builds one layer, runs it once under ``autograd.record`` on a random
input (which also completes deferred initialization), replaces every parameter
with random values, runs it again and back-propagates a random head gradient.

Layout of DIR (default ``tests/fixtures/layers``):

* ``cases.json``: one record per case: ``id``, ``cls`` (``gluon.nn`` class name),
  ``kwargs`` (tuples written as ``{"__tuple__": [...]}``), ``file`` (npz name),
  ``prefix`` (the layer's name prefix, e.g. ``conv0_``),
  ``repr_init`` (``repr`` right after construction), ``repr`` (after the forward)
  and ``params`` (structural names from ``_collect_params_with_prefix``, with the
  display names MXNet gives them and their shapes).
* ``<family>.npz``: ``<id>.x``, ``<id>.y``, ``<id>.head``, ``<id>.xgrad``,
  ``<id>.p.<structural name>`` and ``<id>.g.<structural name>`` (parameter gradients).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "layers"
SEED = 1234

# (id, family, class, kwargs, input shape).  MXNet's CPU build cannot run channel-last
# Convolution/Deconvolution (MKLDNN refuses them), so those are checked against NumPy only.
CASES = [
    ("conv1d_basic", "conv", "Conv1D", dict(channels=4, kernel_size=3), (2, 3, 7)),
    (
        "conv1d_full",
        "conv",
        "Conv1D",
        dict(
            channels=4,
            kernel_size=3,
            strides=2,
            padding=1,
            dilation=2,
            groups=2,
            use_bias=False,
            activation="relu",
        ),
        (2, 4, 9),
    ),
    ("conv2d_basic", "conv", "Conv2D", dict(channels=4, kernel_size=3), (2, 3, 6, 6)),
    (
        "conv2d_full",
        "conv",
        "Conv2D",
        dict(
            channels=6,
            kernel_size=(3, 2),
            strides=(2, 1),
            padding=(1, 0),
            dilation=(1, 2),
            groups=3,
            activation="tanh",
        ),
        (1, 3, 7, 8),
    ),
    ("conv3d_basic", "conv", "Conv3D", dict(channels=2, kernel_size=2), (1, 2, 4, 4, 4)),
    (
        "conv3d_full",
        "conv",
        "Conv3D",
        dict(channels=4, kernel_size=(1, 2, 3), strides=2, padding=1, groups=2),
        (1, 4, 5, 5, 5),
    ),
    ("deconv1d_basic", "deconv", "Conv1DTranspose", dict(channels=3, kernel_size=3), (2, 2, 5)),
    (
        "deconv1d_full",
        "deconv",
        "Conv1DTranspose",
        dict(
            channels=4,
            kernel_size=3,
            strides=2,
            padding=1,
            output_padding=1,
            groups=2,
            in_channels=4,
        ),
        (1, 4, 5),
    ),
    (
        "deconv2d_basic",
        "deconv",
        "Conv2DTranspose",
        dict(channels=3, kernel_size=3, strides=2),
        (1, 2, 4, 4),
    ),
    (
        "deconv2d_full",
        "deconv",
        "Conv2DTranspose",
        dict(
            channels=4,
            kernel_size=(3, 2),
            strides=(2, 3),
            padding=(1, 0),
            output_padding=(1, 2),
            dilation=(2, 1),
            groups=2,
            activation="sigmoid",
            use_bias=False,
            in_channels=2,
        ),
        (1, 2, 4, 5),
    ),
    (
        "deconv3d_basic",
        "deconv",
        "Conv3DTranspose",
        dict(channels=2, kernel_size=2, strides=2),
        (1, 2, 3, 3, 3),
    ),
    ("maxpool1d_default", "pool", "MaxPool1D", {}, (2, 3, 8)),
    (
        "maxpool1d_ceil",
        "pool",
        "MaxPool1D",
        dict(pool_size=3, strides=2, padding=1, ceil_mode=True),
        (2, 3, 8),
    ),
    ("maxpool1d_nwc", "pool", "MaxPool1D", dict(pool_size=3, strides=2, layout="NWC"), (2, 8, 3)),
    ("maxpool2d_default", "pool", "MaxPool2D", {}, (1, 2, 6, 6)),
    (
        "maxpool2d_ceil",
        "pool",
        "MaxPool2D",
        dict(pool_size=(3, 2), strides=(2, 1), padding=(1, 0), ceil_mode=True),
        (1, 2, 7, 6),
    ),
    (
        "maxpool2d_nhwc",
        "pool",
        "MaxPool2D",
        dict(pool_size=3, strides=2, padding=1, layout="NHWC"),
        (1, 6, 6, 2),
    ),
    ("maxpool3d_default", "pool", "MaxPool3D", {}, (1, 2, 4, 4, 4)),
    (
        "maxpool3d_ceil",
        "pool",
        "MaxPool3D",
        dict(pool_size=3, strides=2, padding=1, ceil_mode=True),
        (1, 1, 5, 5, 6),
    ),
    ("maxpool3d_ndhwc", "pool", "MaxPool3D", dict(layout="NDHWC"), (1, 4, 4, 4, 2)),
    ("avgpool1d_pad", "pool", "AvgPool1D", dict(pool_size=3, strides=2, padding=1), (2, 3, 8)),
    (
        "avgpool1d_nopad",
        "pool",
        "AvgPool1D",
        dict(pool_size=3, strides=2, padding=1, count_include_pad=False),
        (2, 3, 8),
    ),
    (
        "avgpool1d_ceil",
        "pool",
        "AvgPool1D",
        dict(pool_size=3, strides=2, ceil_mode=True),
        (2, 3, 8),
    ),
    ("avgpool2d_default", "pool", "AvgPool2D", {}, (1, 2, 6, 6)),
    (
        "avgpool2d_nopad",
        "pool",
        "AvgPool2D",
        dict(pool_size=3, strides=2, padding=1, count_include_pad=False),
        (1, 2, 7, 6),
    ),
    (
        "avgpool2d_ceil",
        "pool",
        "AvgPool2D",
        dict(pool_size=(3, 2), strides=2, padding=1, ceil_mode=True),
        (1, 2, 7, 6),
    ),
    (
        "avgpool2d_nhwc",
        "pool",
        "AvgPool2D",
        dict(pool_size=3, strides=2, padding=1, layout="NHWC"),
        (1, 6, 6, 2),
    ),
    ("avgpool3d_default", "pool", "AvgPool3D", {}, (1, 2, 4, 4, 4)),
    (
        "avgpool3d_nopad_ceil",
        "pool",
        "AvgPool3D",
        dict(pool_size=3, strides=2, padding=1, count_include_pad=False, ceil_mode=True),
        (1, 1, 5, 6, 5),
    ),
    ("gmaxpool1d", "pool", "GlobalMaxPool1D", {}, (2, 3, 5)),
    ("gmaxpool2d", "pool", "GlobalMaxPool2D", {}, (2, 3, 4, 5)),
    ("gmaxpool3d", "pool", "GlobalMaxPool3D", {}, (1, 2, 3, 4, 5)),
    ("gavgpool1d", "pool", "GlobalAvgPool1D", {}, (2, 3, 5)),
    ("gavgpool2d", "pool", "GlobalAvgPool2D", {}, (2, 3, 4, 5)),
    ("gavgpool2d_nhwc", "pool", "GlobalAvgPool2D", dict(layout="NHWC"), (2, 4, 5, 3)),
    ("gavgpool3d", "pool", "GlobalAvgPool3D", {}, (1, 2, 3, 4, 5)),
    ("gmaxpool3d_ndhwc", "pool", "GlobalMaxPool3D", dict(layout="NDHWC"), (1, 3, 4, 5, 2)),
    ("reflpad_int", "pad", "ReflectionPad2D", dict(padding=1), (1, 2, 4, 5)),
    (
        "reflpad_tuple",
        "pad",
        "ReflectionPad2D",
        dict(padding=(0, 0, 0, 0, 1, 2, 3, 0)),
        (1, 2, 5, 6),
    ),
    ("leaky", "act", "LeakyReLU", dict(alpha=0.1), (2, 3, 4)),
    ("leaky_zero", "act", "LeakyReLU", dict(alpha=0), (2, 3)),
    ("prelu_shared", "act", "PReLU", {}, (2, 3, 4)),
    ("prelu_channels", "act", "PReLU", dict(in_channels=3), (2, 3, 4, 5)),
    ("elu", "act", "ELU", {}, (2, 3, 4)),
    ("elu_alpha", "act", "ELU", dict(alpha=0.5), (2, 3, 4)),
    ("selu", "act", "SELU", {}, (2, 3, 4)),
    ("gelu", "act", "GELU", {}, (2, 3, 4)),
    ("swish", "act", "Swish", {}, (2, 3, 4)),
    ("swish_beta", "act", "Swish", dict(beta=2.0), (2, 3, 4)),
]


def encode(v):
    if isinstance(v, tuple):
        return {"__tuple__": [encode(x) for x in v]}
    return v


def run_case(mx, rng, cid, cls, kwargs, shape):
    layer = getattr(mx.gluon.nn, cls)(**kwargs)
    repr_init = repr(layer)
    layer.initialize()
    x = mx.nd.array(rng.uniform(-2, 2, shape).astype(np.float32))
    layer(x)  # finishes deferred initialization
    params = layer._collect_params_with_prefix()
    data = {"x": x.asnumpy()}
    for name, p in params.items():
        value = rng.uniform(-1, 1, p.shape).astype(np.float32)
        p.set_data(mx.nd.array(value))
        data[f"p.{name}"] = value
    x.attach_grad()
    with mx.autograd.record():
        y = layer(x)
    head = rng.uniform(-1, 1, y.shape).astype(np.float32)
    y.backward(mx.nd.array(head))
    data.update(y=y.asnumpy(), head=head, xgrad=x.grad.asnumpy())
    for name, p in params.items():
        data[f"g.{name}"] = p.grad().asnumpy()
    record = {
        "id": cid, "cls": cls, "kwargs": {k: encode(v) for k, v in kwargs.items()},
        "shape": list(shape), "prefix": layer.prefix, "repr_init": repr_init,
        "repr": repr(layer),
        "params": {n: {"name": p.name, "shape": list(p.shape)} for n, p in params.items()},
    }  # fmt: skip
    return record, data


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    import mxnet as mx

    mx.random.seed(SEED)
    rng = np.random.RandomState(SEED)
    args.out.mkdir(parents=True, exist_ok=True)
    records, files = [], {}
    for cid, family, cls, kwargs, shape in CASES:
        record, data = run_case(mx, rng, cid, cls, kwargs, shape)
        record["file"] = f"{family}.npz"
        records.append(record)
        files.setdefault(family, {}).update({f"{cid}.{k}": v for k, v in data.items()})
    for family, arrays in files.items():
        np.savez_compressed(args.out / f"{family}.npz", **arrays)
    lines = ",\n".join(json.dumps(r) for r in records)
    (args.out / "cases.json").write_text("[\n" + lines + "\n]\n")
    print(f"wrote {len(records)} cases to {args.out}")


if __name__ == "__main__":
    main()
