"""Record MXNet 1.9.1's ``gluon.contrib.nn`` layers and ``nn.BatchNormReLU`` for
``tests/gluon/test_contrib_nn.py``.

Run with the reference interpreter::

    .venv-mxnet/bin/python tools/make_contrib_fixtures.py [--out DIR]

Every case builds one layer with a fixed prefix, sets its parameters to seeded
random values (BatchNorm running statistics included), runs a training-mode
forward under ``autograd.record`` with a random head gradient, then a
predict-mode forward. ``_contrib_BatchNormWithReLU`` only exists in MXNet's
oneDNN (MKLDNN) build, so this script keeps MKLDNN enabled.

Layout of DIR (default ``tests/fixtures/contrib``): ``cases.json`` (per case: the
structural and display names and shapes of its parameters) and ``contrib.npz``:
``<id>.x``, ``<id>.y`` (training-mode output), ``<id>.head``, ``<id>.xgrad``,
``<id>.ypred`` (predict-mode output), ``<id>.p.<structural name>`` (values set),
``<id>.g.<structural name>`` (gradients) and ``<id>.a.<structural name>`` (running
statistics after the training step).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import mxnet as mx
import numpy as np
from mxnet.gluon import nn
from mxnet.gluon.contrib import nn as cnn

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "contrib"


def _concurrent():
    net = cnn.HybridConcurrent(axis=1, prefix="cat_")
    with net.name_scope():
        net.add(nn.Conv2D(3, 3, padding=1), cnn.Identity(), nn.Conv2D(2, 1))
    return net


def _plain_concurrent():
    net = cnn.Concurrent(axis=-1, prefix="pcat_")
    with net.name_scope():
        net.add(nn.Dense(3, flatten=False), cnn.Identity(), nn.Dense(2, flatten=False))
    return net


# (id, constructor, input shape, integer input)
CASES = [
    ("hybrid_concurrent", _concurrent, (2, 4, 5, 5), False),
    ("concurrent", _plain_concurrent, (2, 3, 4), False),
    ("pixelshuffle1d", lambda: cnn.PixelShuffle1D(3), (2, 6, 5), False),
    ("pixelshuffle2d", lambda: cnn.PixelShuffle2D((2, 3)), (2, 12, 3, 4), False),
    ("pixelshuffle3d", lambda: cnn.PixelShuffle3D((2, 1, 3)), (1, 12, 2, 3, 2), False),
    (
        "syncbatchnorm",
        lambda: cnn.SyncBatchNorm(in_channels=3, num_devices=1, prefix="sbn_"),
        (4, 3, 5, 2),
        False,
    ),
    (
        "syncbatchnorm_fixgamma",
        lambda: cnn.SyncBatchNorm(num_devices=1, scale=False, momentum=0.8, prefix="sbnf_"),
        (4, 3, 6),
        False,
    ),
    ("batchnormrelu", lambda: nn.BatchNormReLU(prefix="bnr_"), (3, 4, 3, 3), False),
    ("sparse_embedding", lambda: cnn.SparseEmbedding(7, 3, prefix="emb_"), (2, 3), True),
]


def run_case(rng, cid, make, shape, integer, io):
    net = make()
    net.initialize()
    if integer:
        x = mx.nd.array(rng.randint(0, 7, shape))
    else:
        x = mx.nd.array(rng.standard_normal(shape).astype(np.float32))
    params = net._collect_params_with_prefix()
    if cid == "sparse_embedding":
        mx.gluon.Trainer(net.collect_params(), "sgd")  # row_sparse weights need a Trainer
    else:
        net(x)  # finish deferred initialization
    for key, p in params.items():
        if key.endswith("running_var"):
            value = rng.uniform(0.5, 1.5, p.shape)
        else:
            value = rng.standard_normal(p.shape)
        p.set_data(mx.nd.array(value.astype(np.float32)))
        io[f"{cid}.p.{key}"] = value.astype(np.float32)
    if not integer:
        x.attach_grad()
    with mx.autograd.record():
        y = net(x)
    head = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(mx.nd.array(head))
    io[f"{cid}.x"] = x.asnumpy()
    io[f"{cid}.y"] = y.asnumpy()
    io[f"{cid}.head"] = head
    if not integer:
        io[f"{cid}.xgrad"] = x.grad.asnumpy()
    for key, p in params.items():
        if p.grad_req != "null":
            io[f"{cid}.g.{key}"] = p.grad().asnumpy()
        else:
            io[f"{cid}.a.{key}"] = p.data().asnumpy()
    io[f"{cid}.ypred"] = net(x).asnumpy()
    return {
        "id": cid,
        "params": [[k, p.name, list(p.shape)] for k, p in params.items()],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.RandomState(11)
    io, cases = {}, []
    for cid, make, shape, integer in CASES:
        print("case", cid, flush=True)
        cases.append(run_case(rng, cid, make, shape, integer, io))
    (args.out / "cases.json").write_text(json.dumps(cases, indent=1) + "\n")
    np.savez_compressed(args.out / "contrib.npz", **io)
    for f in sorted(args.out.iterdir()):
        print(f"{f.name:16s} {f.stat().st_size:9d}")


if __name__ == "__main__":
    main()
