"""``gluon.contrib.cnn``'s deformable convolutions against real MXNet 1.9.1: outputs of both
layers and parameter gradients of DeformableConvolution, with non-zero offset weights."""

import json

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.gluon.contrib.cnn import DeformableConvolution, ModulatedDeformableConvolution
from tests.mxnet_ref import needs_mxnet, run_mxnet

CASES = {
    "plain": ("DeformableConvolution", dict(channels=4, kernel_size=(3, 2), padding=1)),
    "groups": (
        "DeformableConvolution",
        dict(channels=4, kernel_size=3, num_deformable_group=2, activation="relu"),
    ),
    "modulated": ("ModulatedDeformableConvolution", dict(channels=3, kernel_size=3, padding=1)),
}


def _inputs(layer_params):
    rs = np.random.RandomState(0)
    x = rs.uniform(-1, 1, (2, 4, 6, 5)).astype(np.float32)
    return x, {n: (rs.uniform(-0.3, 0.3, s)).astype(np.float32) for n, s in layer_params}


def _shapes(cls, kw):
    layer = {"DeformableConvolution": DeformableConvolution}.get(
        cls, ModulatedDeformableConvolution
    )(**kw)
    layer.initialize()
    layer(mx.nd.ones((2, 4, 6, 5)))
    return layer, [(n[len(layer.prefix) :], p.shape) for n, p in layer.collect_params().items()]


@pytest.fixture(scope="module")
def mxnet_results():
    todo = {}
    for case, (cls, kw) in CASES.items():
        _, shapes = _shapes(cls, kw)
        x, params = _inputs(shapes)
        todo[case] = (cls, kw, x.tolist(), {n: v.tolist() for n, v in params.items()})
    script = f"""
import json, numpy as np, mxnet as mx
from mxnet.gluon.contrib import cnn
out = {{}}
for case, (cls, kw, x, params) in json.loads({json.dumps(json.dumps(todo))}).items():
    layer = getattr(cnn, cls)(**kw)
    layer.initialize()
    x = mx.nd.array(x)
    layer(x)
    for name, p in layer.collect_params().items():
        p.set_data(mx.nd.array(params[name[len(layer.prefix) :]]))
    grads = {{}}
    with mx.autograd.record():
        y = layer(x)
        loss = (y * y).sum()
    if cls == "DeformableConvolution":  # MXNet's CPU build has no modulated backward
        loss.backward()
        grads = {{n[len(layer.prefix) :]: p.grad().asnumpy().tolist()
                 for n, p in layer.collect_params().items()}}
    out[case] = {{"y": y.asnumpy().tolist(), "grads": grads}}
print(json.dumps(out))
"""
    return json.loads(run_mxnet(script).strip().splitlines()[-1])


@needs_mxnet
@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("case", list(CASES))
def test_deformable_layers_match_mxnet(case, hybridize, mxnet_results):
    cls, kw = CASES[case]
    layer, shapes = _shapes(cls, kw)
    x, params = _inputs(shapes)
    for name, p in layer.collect_params().items():
        p.set_data(mx.nd.array(params[name[len(layer.prefix) :]]))
    if hybridize:
        layer.hybridize()
    xn = mx.nd.array(x)
    with mx.autograd.record():
        y = layer(xn)
        loss = (y * y).sum()
    loss.backward()
    want = mxnet_results[case]
    np.testing.assert_allclose(y.asnumpy(), np.array(want["y"]), rtol=1e-4, atol=1e-5)
    # the modulated layer's gradients: MXNet 1.9.1 computes them on GPU only (its values
    # are checked in tests/ops/test_contrib_math_ops.py against DeformableConvolution's)
    for name, p in layer.collect_params().items() if want["grads"] else ():
        np.testing.assert_allclose(
            p.grad().asnumpy(),
            np.array(want["grads"][name[len(layer.prefix) :]]),
            rtol=1e-3,
            atol=1e-4,
            err_msg=name,
        )


def test_bad_layout_raises():
    with pytest.raises(ValueError, match="layout"):
        DeformableConvolution(4, layout="NCW")
