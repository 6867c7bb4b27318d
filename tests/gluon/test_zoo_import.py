"""Import reduced MXNet 1.9.1 model-zoo exports with gluon.SymbolBlock.imports.

Fixtures (``tests/fixtures/zoo``) come from ``tools/make_zoo_fixtures.py`` run with
real MXNet: ``<name>-symbol.json`` / ``<name>-0000.params`` from ``export`` and
MXNet's outputs (and input gradients) in ``io.npz``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd

ZOO = Path(__file__).resolve().parents[1] / "fixtures" / "zoo"
FAMILIES = [
    "resnet1",
    "resnet2",
    "mobilenet",
    "mobilenet2",
    "squeezenet10",
    "squeezenet11",
    "densenet",
    "inception3",
    "vgg_bn",
    "alexnet",
]
TOL = dict(rtol=1e-4, atol=1e-4)


@pytest.fixture(scope="module")
def io():
    with np.load(ZOO / "io.npz") as f:
        return {k: f[k] for k in f.files}


def _load(name):
    return mx.gluon.SymbolBlock.imports(
        str(ZOO / f"{name}-symbol.json"), ["data"], str(ZOO / f"{name}-0000.params")
    )


def _x(io, name, key="x"):
    return nd.array(io[f"{name}.{key}"].astype(np.float32))


def _graphs():
    return {n: json.loads((ZOO / f"{n}-symbol.json").read_text()) for n in FAMILIES}


@pytest.mark.parametrize("name", FAMILIES)
def test_matches_mxnet_eager_and_hybridized(name, io):
    net = _load(name)
    x = _x(io, name)
    want = io[f"{name}.y"]
    np.testing.assert_allclose(net(x).asnumpy(), want, **TOL)
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), want, **TOL)
    assert np.abs(want).max() > 1e-2  # the comparison is not vacuous


# MXNet 1.9.1's BatchNorm backward in predict mode uses batch statistics, so the
# fixtures differentiate BatchNorm models in training mode (they have no Dropout)
GRAD_MODE = {
    "resnet1": "train",
    "resnet2": "train",
    "squeezenet11": "predict",
    "alexnet": "predict",
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.slow) if n.startswith("resnet") else n
        for n in sorted(GRAD_MODE)
    ],
)
def test_input_gradient_matches_mxnet(name, io):
    net = _load(name)
    net.hybridize(name != "squeezenet11")  # one eager (per-op tape) check
    x = _x(io, name)
    x.attach_grad()
    with mx.autograd.record(train_mode=GRAD_MODE[name] == "train"):
        y = net(x)
    y.backward(nd.array(io[f"{name}.head"]))
    np.testing.assert_allclose(y.asnumpy(), io[f"{name}.gy"], **TOL)
    want = io[f"{name}.xgrad"]
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.slow
@pytest.mark.parametrize("hybrid", [False, True])
def test_training_mode_matches_mxnet(hybrid, io):
    """Batch statistics, and running statistics after one training step (resnet1)."""
    net = _load("resnet1")
    net.hybridize(hybrid)
    with mx.autograd.record(train_mode=True):
        y = net(_x(io, "resnet1", "xtrain"))
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), io["resnet1.ytrain"], **TOL)
    params = net.collect_params()
    keys = [k for k in io if k.startswith("resnet1.aux.")]
    assert len(keys) == 24
    for k in keys:
        np.testing.assert_allclose(
            params[k[len("resnet1.aux.") :]].data().asnumpy(),
            io[k],
            rtol=1e-5,
            atol=1e-6,
            err_msg=k,
        )


@pytest.mark.slow
def test_trainable(io):
    net = _load("squeezenet11")
    net.hybridize()
    params = net.collect_params()
    trainer = mx.gluon.Trainer(params, "sgd", {"learning_rate": 0.1})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    x, label = _x(io, "squeezenet11"), nd.array([3])
    before = {k: p.data().asnumpy().copy() for k, p in params.items()}
    with mx.autograd.record():
        loss = loss_fn(net(x), label)
    loss.backward()
    grads = {k: p.grad().asnumpy().copy() for k, p in params.items() if p.grad_req != "null"}
    trainer.step(1)
    assert any(np.abs(g).max() > 0 for g in grads.values())
    for k, g in grads.items():
        np.testing.assert_allclose(
            params[k].data().asnumpy(), before[k] - 0.1 * g, rtol=1e-5, atol=1e-6, err_msg=k
        )


def test_reexport_roundtrip(io, tmp_path):
    net = _load("inception3")
    net.hybridize()
    x = _x(io, "inception3")
    net(x)
    net.export(str(tmp_path / "inc"), example_inputs=[x], stablehlo=False)
    again = mx.gluon.SymbolBlock.imports(
        str(tmp_path / "inc-symbol.json"), ["data"], str(tmp_path / "inc-0000.params")
    )
    np.testing.assert_allclose(again(x).asnumpy(), io["inception3.y"], **TOL)


def test_op_coverage():
    ops, pools = set(), []
    for g in _graphs().values():
        for node in g["nodes"]:
            ops.add(node["op"])
            if node["op"] == "Pooling":
                pools.append(node["attrs"])
    assert {
        "Convolution",
        "BatchNorm",
        "Activation",
        "Pooling",
        "FullyConnected",
        "Flatten",
        "Dropout",
        "Concat",
        "elemwise_add",
        "clip",
    } <= ops
    assert {p.get("global_pool", "False") for p in pools} == {"True", "False"}
    assert {p.get("pooling_convention", "valid") for p in pools} == {"valid", "full"}
    assert {p["count_include_pad"] for p in pools if "count_include_pad" in p} == {"True", "False"}
    assert {p["pool_type"] for p in pools} == {"max", "avg"}


def test_parameters_named_like_mxnet():
    net = _load("resnet1")
    names = list(net.collect_params())
    assert names[0] == "resnetv10_conv0_weight"
    assert net.collect_params()["resnetv10_batchnorm0_running_mean"].grad_req == "null"
    # structural names drop the common prefix, as MXNet 1.9.1's SymbolBlock does
    assert next(iter(net._collect_params_with_prefix())) == "conv0_weight"


def test_fixture_sizes():
    sizes = {f.name: f.stat().st_size for f in ZOO.iterdir()}
    assert len(sizes) == 2 * len(FAMILIES) + 1
    assert sum(sizes.values()) < 4_000_000
