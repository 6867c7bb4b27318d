"""LayerNorm (hand-written gradient, ``_ops/defs/_layer_norm.py``), InstanceNorm and GroupNorm
(jax's autodiff) against a float64 NumPy version of MXNet's formulas and against MXNet 1.9.1.

The MXNet fixtures (the ``ln-``, ``in-`` and ``gn-`` cases of ``tests/fixtures/norm``) were
written by ``tools/make_norm_fixtures.py`` with head gradients on every visible output:
MXNet drops those of the mean and std outputs, and so must gluonjax. The tool's own
regeneration test is in ``test_batchnorm_fast.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import REPO_ROOT  # noqa: E402

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "norm"
CASES = [c for c in json.loads((FIXTURES / "cases.json").read_text()) if c["op"] != "BatchNorm"]
TOL = {"float32": 2e-5, "float16": 4e-3}  # relative to the largest expected magnitude


@pytest.fixture(scope="module")
def fixture():
    with np.load(FIXTURES / "norm.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def numpy_norm(op, x, gamma, beta, head, attrs):
    """MXNet 1.9.1's forward and backward in float64 (the output's head gradient only)."""
    x, gamma, beta, dy = (np.asarray(a, np.float64) for a in (x, gamma, beta, head))
    shape = x.shape
    if op == "LayerNorm":
        axis = attrs.get("axis", -1) % x.ndim
        axes, pshape, eps = (axis,), [1] * x.ndim, attrs.get("eps", 1e-5)
        pshape[axis] = -1
    elif op == "InstanceNorm":
        axes, pshape, eps = tuple(range(2, x.ndim)), [1, -1] + [1] * (x.ndim - 2), 1e-3
        eps = attrs.get("eps", eps)
    else:
        x, dy = (a.reshape(shape[0], attrs["num_groups"], -1) for a in (x, dy))
        axes, pshape, eps = (2,), [1, -1, 1], attrs.get("eps", 1e-5)
    others = tuple(i for i in range(x.ndim) if pshape[i] == 1)
    n = np.prod([x.shape[a] for a in axes])
    mean, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    std = np.sqrt(var + eps)
    xhat = (x - mean) / std
    g = gamma.reshape(pshape)
    gd = dy * g
    dx = n * gd - gd.sum(axes, keepdims=True) - xhat * (gd * xhat).sum(axes, keepdims=True)
    want = {
        "out0": (xhat * g + beta.reshape(pshape)).reshape(shape),
        "grad_x": (dx / (n * std)).reshape(shape),
        "grad_gamma": (dy * xhat).sum(others),
        "grad_beta": dy.sum(others),
    }
    if op == "GroupNorm":
        mean, std = mean[..., 0], std[..., 0]
    want.update(out1=mean, out2=std)
    return want


def run_gluonjax(op, x, gamma, beta, heads, attrs):
    xs = [nd.array(a, dtype=a.dtype) for a in (x, gamma, beta)]
    for v in xs:
        v.attach_grad()
    with mx.autograd.record():
        res = getattr(nd, op)(*xs, **attrs)
    outs = list(res) if isinstance(res, (list, tuple)) else [res]
    mx.autograd.backward(
        [outs[i] for i in heads], [nd.array(h, dtype=h.dtype) for h in heads.values()]
    )
    got = {f"out{i}": o.asnumpy() for i, o in enumerate(outs)}
    got.update({f"grad_{k}": v.grad.asnumpy() for k, v in zip(("x", "gamma", "beta"), xs)})
    return got


def _close(got, want, tol, what):
    got64, want64 = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got64.shape == want64.shape, f"{what}: shape {got64.shape} != {want64.shape}"
    err = np.max(np.abs(got64 - want64))
    scale = max(1.0, float(np.max(np.abs(want64))))
    assert err <= tol * scale, f"{what}: max abs error {err:.3g} > {tol:.1g} * {scale:.3g}"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_matches_numpy_and_mxnet(fixture, case):
    cid, op, attrs, dtype = case["id"], case["op"], case["attrs"], case["dtype"]
    x, gamma, beta = (fixture[f"{cid}.{k}"] for k in ("x", "gamma", "beta"))
    heads = {i: fixture[f"{cid}.head{i}"] for i in range(case["n_out"])}
    got = run_gluonjax(op, x, gamma, beta, heads, attrs)
    want = numpy_norm(op, x, gamma, beta, heads[0], attrs)
    for k in ("out0", "grad_x", "grad_gamma", "grad_beta"):
        assert got[k].dtype == np.dtype(dtype), k
    keys = ["out0", "grad_x", "grad_gamma", "grad_beta"]
    keys += ["out1", "out2"] if case["n_out"] == 3 else []
    for k in keys:
        _close(got[k], want[k], TOL[dtype], f"{cid} {k} vs NumPy")
        _close(got[k], fixture[f"{cid}.{k}"], TOL[dtype], f"{cid} {k} vs MXNet")


@pytest.mark.parametrize("op", ["LayerNorm", "GroupNorm"])
def test_mean_and_std_outputs_pass_no_gradient(op):
    """As MXNet 1.9.1: heads on the mean and std outputs alone give zero gradients."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 6, 5)).astype(np.float32)
    c = 5 if op == "LayerNorm" else 3
    xs = [nd.array(x), nd.array(rng.uniform(0.5, 1.5, c)), nd.array(rng.standard_normal(c))]
    for v in xs:
        v.attach_grad()
    kw = {"num_groups": 3} if op == "GroupNorm" else {}
    with mx.autograd.record():
        outs = getattr(nd, op)(*xs, output_mean_var=True, **kw)
    mx.autograd.backward(outs[1:], [nd.ones(o.shape) for o in outs[1:]])
    for v in xs:
        np.testing.assert_array_equal(v.grad.asnumpy(), 0)


def test_layernorm_hybridized_matches_numpy():
    """nn.LayerNorm hybridized: the op inside one jitted program with its backward."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 7, 10)).astype(np.float32)
    head = rng.standard_normal(x.shape).astype(np.float32)
    net = mx.gluon.nn.LayerNorm(in_channels=10)
    net.initialize()
    gamma = rng.uniform(0.5, 1.5, 10).astype(np.float32)
    beta = rng.standard_normal(10).astype(np.float32)
    net.gamma.set_data(nd.array(gamma))
    net.beta.set_data(nd.array(beta))
    net.hybridize()
    xa = nd.array(x)
    xa.attach_grad()
    with mx.autograd.record():
        y = net(xa)
    y.backward(nd.array(head))
    want = numpy_norm("LayerNorm", x, gamma, beta, head, {})
    _close(y.asnumpy(), want["out0"], 2e-5, "out0")
    _close(xa.grad.asnumpy(), want["grad_x"], 2e-5, "grad_x")
    _close(net.gamma.grad().asnumpy(), want["grad_gamma"], 2e-5, "grad_gamma")
    _close(net.beta.grad().asnumpy(), want["grad_beta"], 2e-5, "grad_beta")
