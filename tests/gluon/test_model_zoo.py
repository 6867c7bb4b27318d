"""gluon.model_zoo.vision against MXNet 1.9.1's model zoo.

Fixtures (``tests/fixtures/model_zoo``) come from ``tools/make_model_zoo_fixtures.py``
run with real MXNet: every get_model name's parameters (structural and display
names, shapes, grad_req) and its output on the deterministic weights and input of
``zoo_recipe`` (the same NumPy recipe fills both MXNet's and gluonjax's weights).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import numpy as np
import pytest
from zoo_recipe import MODEL_INPUT, recipe_input, recipe_value

import gluonjax as mx
from gluonjax.gluon.model_zoo import vision

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "model_zoo"
# the forwards of the other models are marked slow (seconds of XLA compilation each)
QUICK = ("resnet18_v1", "resnet18_v2", "mobilenet0.25", "mobilenetv2_0.25", "squeezenet1.1")


@pytest.fixture(scope="module")
def structure():
    with gzip.open(FIXTURES / "structure.json.gz", "rt") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def outputs():
    with np.load(FIXTURES / "outputs.npz") as f:
        return {k: f[k] for k in f.files}


def _build(name, structure):
    """The model with MXNet's recipe weights (the shapes test_parameters_match_mxnet checks)."""
    net = vision.get_model(name)
    shapes = {key: shape for key, _, shape, _ in structure[name]["params"]}
    for key, p in net._collect_params_with_prefix().items():
        p.set_data(recipe_value(key, shapes[key]))
    return net, mx.nd.array(recipe_input(name))


def _close(got, want, tol=1e-4):
    scale = np.abs(want).max()
    assert scale > 1e-3  # the comparison is not vacuous
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


def test_get_model_knows_every_mxnet_name(structure):
    assert set(vision._MODELS) == set(structure) == set(MODEL_INPUT)
    assert vision.get_model("ResNet18_V1", classes=3).output._units == 3
    with pytest.raises(ValueError, match="resnet18_v1"):
        vision.get_model("resnet19_v1")


@pytest.mark.parametrize("name", sorted(MODEL_INPUT))
def test_parameters_match_mxnet(name, structure):
    want = structure[name]
    net = vision.get_model(name)
    net.initialize()
    net.infer_shape(mx.nd.zeros((1, 3, MODEL_INPUT[name], MODEL_INPUT[name])))
    # the prefix's number counts the models built before in the process: compare the rest
    assert re.sub(r"\d+_$", "", net.prefix) == re.sub(r"\d+_$", "", want["prefix"])

    def strip(display, prefix):
        assert display.startswith(prefix)
        return display[len(prefix) :]

    got = [
        [k, strip(p.name, net.prefix), list(p.shape), p.grad_req]
        for k, p in net._collect_params_with_prefix().items()
    ]
    assert got == [[k, strip(d, want["prefix"]), s, g] for k, d, s, g in want["params"]]
    got = [strip(d, net.prefix) for d in net.collect_params().keys()]
    assert got == [strip(d, want["prefix"]) for d in want["collect"]]


@pytest.mark.parametrize(
    "name",
    [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in sorted(MODEL_INPUT)],
)
def test_output_matches_mxnet(name, structure, outputs):
    net, x = _build(name, structure)
    _close(net(x).asnumpy(), outputs[f"{name}.y"])
    if name in ("resnet18_v1", "squeezenet1.1"):  # built-in layers run compiled either way
        net.hybridize()
        _close(net(x).asnumpy(), outputs[f"{name}.y"])


@pytest.mark.parametrize("name", ["resnet18_v1", "mobilenet0.25"])
def test_training_forward_backward_match_mxnet(name, structure, outputs):
    net, _ = _build(name, structure)
    x = mx.nd.array(recipe_input(name, batch=2, side=64))
    x.attach_grad()
    with mx.autograd.record():
        y = net(x)
    y.backward(mx.nd.array(outputs[f"{name}.head"]))
    _close(y.asnumpy(), outputs[f"{name}.yt"])
    # through ~30 ReLU/ReLU6 kinks the input gradient's float32 noise is larger: MXNet's
    # own float32 and float64 gradients of mobilenet0.25 here differ by 1.8e-4 of their scale
    _close(x.grad.asnumpy(), outputs[f"{name}.xgrad"], tol=5e-4)
    params = net._collect_params_with_prefix()
    stats = [k for k in outputs if k.startswith(f"{name}.aux.")]
    assert stats
    for k in stats:
        key = k[len(f"{name}.aux.") :]
        np.testing.assert_allclose(params[key].data().asnumpy(), outputs[k], rtol=1e-4, atol=1e-5)
