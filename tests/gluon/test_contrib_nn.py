"""gluon.contrib.nn and nn.BatchNormReLU against MXNet 1.9.1.

Fixtures (``tests/fixtures/contrib``) come from ``tools/make_contrib_fixtures.py``:
the same layers with seeded parameters, a training-mode forward and backward
(outputs, input and parameter gradients, running statistics) and a predict-mode
forward. Pixel-shuffle layouts are also checked against NumPy.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.gluon import nn
from gluonjax.gluon.contrib import nn as cnn

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "contrib"
TOL = dict(rtol=1e-4, atol=1e-5)


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


MAKE = {
    "hybrid_concurrent": _concurrent,
    "concurrent": _plain_concurrent,
    "pixelshuffle1d": lambda: cnn.PixelShuffle1D(3),
    "pixelshuffle2d": lambda: cnn.PixelShuffle2D((2, 3)),
    "pixelshuffle3d": lambda: cnn.PixelShuffle3D((2, 1, 3)),
    "syncbatchnorm": lambda: cnn.SyncBatchNorm(in_channels=3, num_devices=1, prefix="sbn_"),
    "syncbatchnorm_fixgamma": lambda: cnn.SyncBatchNorm(
        num_devices=1, scale=False, momentum=0.8, prefix="sbnf_"
    ),
    "batchnormrelu": lambda: nn.BatchNormReLU(prefix="bnr_"),
    "sparse_embedding": lambda: cnn.SparseEmbedding(7, 3, prefix="emb_"),
}


@pytest.fixture(scope="module")
def io():
    with np.load(FIXTURES / "contrib.npz") as f:
        return {k: f[k] for k in f.files}


def _cases():
    return json.loads((FIXTURES / "cases.json").read_text())


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["id"])
def test_layer_matches_mxnet(case, hybridize, io):
    cid = case["id"]
    net = MAKE[cid]()
    net.initialize()
    params = net._collect_params_with_prefix()
    x = mx.nd.array(io[f"{cid}.x"])
    if cid == "sparse_embedding":
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd")
        if net.weight._trainer is None:  # what MXNet's Trainer does for its parameters
            net.weight._set_trainer(trainer)
    else:
        net(x)
    got = [[k, p.name, list(p.shape)] for k, p in params.items()]
    assert got == case["params"]
    for key, p in params.items():
        p.set_data(io[f"{cid}.p.{key}"])
    if hybridize and isinstance(net, mx.gluon.HybridBlock):
        net.hybridize()
    integer = f"{cid}.xgrad" not in io
    if not integer:
        x.attach_grad()
    with mx.autograd.record():
        y = net(x)
    y.backward(mx.nd.array(io[f"{cid}.head"]))
    np.testing.assert_allclose(y.asnumpy(), io[f"{cid}.y"], **TOL)
    if not integer:
        np.testing.assert_allclose(x.grad.asnumpy(), io[f"{cid}.xgrad"], **TOL)
    for key, p in params.items():
        if p.grad_req != "null":
            np.testing.assert_allclose(p.grad().asnumpy(), io[f"{cid}.g.{key}"], **TOL)
        elif key.endswith(("running_mean", "running_var")):
            # (MXNet's SyncBatchNorm kernel also writes 1 into a fix_gamma layer's gamma
            # array; gluonjax leaves the unused parameter alone: both compute with 1)
            np.testing.assert_allclose(p.data().asnumpy(), io[f"{cid}.a.{key}"], **TOL)
    np.testing.assert_allclose(net(x).asnumpy(), io[f"{cid}.ypred"], **TOL)


@pytest.mark.parametrize(
    "factors, shape", [((3,), (2, 12, 5)), ((2, 3), (1, 12, 3, 4)), ((2, 3, 2), (1, 24, 2, 3, 2))]
)
def test_pixel_shuffle_layout(factors, shape):
    """out[n, c, d*f1+i, h*f2+j, ...] = x[n, c*f1*f2*.. + (i*f2 + j).., d, h, ...] (NumPy)."""
    layer = {1: cnn.PixelShuffle1D, 2: cnn.PixelShuffle2D, 3: cnn.PixelShuffle3D}[len(factors)]
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    k = len(factors)
    n, c = shape[0], shape[1] // int(np.prod(factors))
    spatial = shape[2:]
    ref = x.reshape(n, c, *factors, *spatial)
    order = [0, 1] + [a for i in range(k) for a in (2 + k + i, 2 + i)]
    ref = ref.transpose(order).reshape(n, c, *(s * f for s, f in zip(spatial, factors)))
    np.testing.assert_array_equal(
        layer(factors if k > 1 else factors[0])(mx.nd.array(x)).asnumpy(), ref
    )
    assert repr(layer(factors if k > 1 else factors[0])).startswith(layer.__name__)


def test_pixel_shuffle_rejects_bad_factors():
    with pytest.raises(mx.base.MXNetError, match="PixelShuffle2D"):
        cnn.PixelShuffle2D((2, 2, 2))


def test_sync_batchnorm_on_one_device_equals_batchnorm():
    x = mx.nd.array(np.random.RandomState(3).standard_normal((6, 4, 3)).astype(np.float32))
    sbn, bn = cnn.SyncBatchNorm(num_devices=1), nn.BatchNorm()
    sbn.initialize()
    bn.initialize()
    for net in (sbn, bn):
        x.attach_grad()
        with mx.autograd.record():
            y = net(x)
        y.backward()
        net.out, net.xgrad = y.asnumpy(), x.grad.asnumpy()
    np.testing.assert_allclose(sbn.out, bn.out, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(sbn.xgrad, bn.xgrad, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        sbn.running_var.data().asnumpy(), bn.running_var.data().asnumpy(), rtol=1e-6
    )


def test_sync_batchnorm_symbol_and_default_devices():
    with pytest.warns(UserWarning, match="num_devices"):
        sbn = cnn.SyncBatchNorm(prefix="s_")
    out = sbn(mx.sym.var("data"))
    assert out.list_arguments() == ["data", "s_gamma", "s_beta"]
    assert out.list_auxiliary_states() == ["s_running_mean", "s_running_var"]
    assert out.infer_shape(data=(2, 5, 3))[2] == [(5,), (5,)]


def test_sparse_embedding_needs_a_trainer():
    emb = cnn.SparseEmbedding(5, 2)
    emb.initialize()
    with pytest.raises(RuntimeError, match="Trainer"):
        emb(mx.nd.array([1, 2]))
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        emb.weight.data()
    assert repr(emb) == "SparseEmbedding(5 -> 2, float32)"


def test_contrib_sparse_embedding_op_picks_rows_like_numpy():
    # MXNet's _contrib_SparseEmbedding (used by Module code) gives Embedding's rows
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    idx = np.array([3, 0, 3], np.float32)
    got = mx.nd.contrib.SparseEmbedding(mx.nd.array(idx), mx.nd.array(w), input_dim=4, output_dim=3)
    np.testing.assert_array_equal(got.asnumpy(), w[idx.astype(int)])
    sym = mx.sym.contrib.SparseEmbedding(
        data=mx.sym.var("d"), weight=mx.sym.var("w"), input_dim=4, output_dim=3
    )
    out = sym.eval(d=mx.nd.array(idx), w=mx.nd.array(w))[0]
    np.testing.assert_array_equal(out.asnumpy(), w[idx.astype(int)])
