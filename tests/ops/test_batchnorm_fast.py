"""BatchNorm in training mode (one-pass shifted statistics, hand-written gradient) against a
float64 NumPy version of MXNet's formulas and against MXNet 1.9.1.

The MXNet fixtures (the ``bn-`` cases of ``tests/fixtures/norm``) were written by
``tools/make_norm_fixtures.py`` (MXNet's own CPU kernel, oneDNN off). Expected values come
from NumPy or MXNet, never from gluonjax.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import REPO_ROOT, needs_mxnet, run_mxnet  # noqa: E402

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "norm"
TOOL_DIR = REPO_ROOT / "tools"
ALL_CASES = json.loads((FIXTURES / "cases.json").read_text())
CASES = [c for c in ALL_CASES if c["op"] == "BatchNorm"]
KEYS = ("out0", "grad_x", "grad_gamma", "grad_beta", "new_moving_mean", "new_moving_var")

# Relative to the largest magnitude of the expected array. float16 data: its rounding.
TOL_NUMPY = {"float32": 2e-5, "float16": 3e-3}
# MXNet computes the mean of 1e4 + randn straight from float32 sums, so its own outputs
# are off by about 3e-3 there (and sum(dy * xhat) by 2e-2 of 20): measured against the
# float64 reference when the fixture was made.
TOL_MXNET_OFFSET = 2e-3


@pytest.fixture(scope="module")
def fixture():
    with np.load(FIXTURES / "norm.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _bcast(v, ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def numpy_batchnorm(x, gamma, beta, moving_mean, moving_var, head, *, attrs):
    """MXNet 1.9.1's training-mode BatchNorm in float64: outputs, gradients (the output's
    head gradient only: MXNet's backward ignores those of the mean and inverse-std
    outputs) and moving statistics (``momentum`` rounded to a C float, as MXNet does)."""
    x, gamma, beta, dy = (np.asarray(a, np.float64) for a in (x, gamma, beta, head))
    axis = attrs.get("axis", 1) % x.ndim
    eps, fix_gamma = attrs.get("eps", 1e-3), attrs.get("fix_gamma", True)
    momentum = float(np.float32(attrs.get("momentum", 0.9)))
    red = tuple(i for i in range(x.ndim) if i != axis)
    n = x.size // x.shape[axis]
    mean, var = x.mean(red), x.var(red)
    inv = 1 / np.sqrt(var + eps)
    g = np.ones_like(gamma) if fix_gamma else gamma
    xhat = (x - _bcast(mean, x.ndim, axis)) * _bcast(inv, x.ndim, axis)
    dbeta, dgamma = dy.sum(red), (dy * xhat).sum(red)
    dx = _bcast(g * inv / n, x.ndim, axis) * (
        n * dy - _bcast(dbeta, x.ndim, axis) - xhat * _bcast(dgamma, x.ndim, axis)
    )
    return {
        "out0": xhat * _bcast(g, x.ndim, axis) + _bcast(beta, x.ndim, axis),
        "out1": mean,
        "out2": inv,
        "grad_x": dx,
        "grad_gamma": np.zeros_like(gamma) if fix_gamma else dgamma,
        "grad_beta": dbeta,
        "new_moving_mean": moving_mean * momentum + mean * (1 - momentum),
        "new_moving_var": moving_var * momentum + var * (1 - momentum),
    }


def run_gluonjax(x, gamma, beta, moving_mean, moving_var, heads, *, attrs):
    """nd.BatchNorm under record(train_mode=True), a backward from every given head."""
    xs = [nd.array(x, dtype=x.dtype), nd.array(gamma), nd.array(beta)]
    aux = [nd.array(moving_mean), nd.array(moving_var)]
    for v in xs:
        v.attach_grad()
    with mx.autograd.record(train_mode=True):
        res = nd.BatchNorm(*xs, *aux, **attrs)
    outs = list(res) if isinstance(res, (list, tuple)) else [res]
    mx.autograd.backward(
        [outs[i] for i in heads], [nd.array(h, dtype=h.dtype) for h in heads.values()]
    )
    got = {f"out{i}": o.asnumpy() for i, o in enumerate(outs)}
    got.update(grad_x=xs[0].grad.asnumpy(), grad_gamma=xs[1].grad.asnumpy())
    got.update(grad_beta=xs[2].grad.asnumpy())
    got.update(new_moving_mean=aux[0].asnumpy(), new_moving_var=aux[1].asnumpy())
    return got


def _close(got, want, tol, what):
    got64, want64 = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got64.shape == want64.shape, f"{what}: shape {got64.shape} != {want64.shape}"
    err = np.max(np.abs(got64 - want64)) if got64.size else 0.0
    scale = max(1.0, float(np.max(np.abs(want64))) if want64.size else 1.0)
    assert err <= tol * scale, f"{what}: max abs error {err:.3g} > {tol:.1g} * {scale:.3g}"


def _case_arrays(fx, cid):
    names = ("x", "gamma", "beta", "moving_mean", "moving_var")
    return [fx[f"{cid}.{k}"] for k in names]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_batchnorm_training_matches_numpy_and_mxnet(fixture, case):
    cid, attrs = case["id"], case["attrs"]
    arrays = _case_arrays(fixture, cid)
    heads = {i: fixture[f"{cid}.head{i}"] for i in range(case["n_out"])}
    got = run_gluonjax(*arrays, heads, attrs=attrs)
    want = numpy_batchnorm(*arrays, heads[0], attrs=attrs)
    dtype = case["dtype"]
    assert got["out0"].dtype == np.dtype(dtype) and got["grad_x"].dtype == np.dtype(dtype)
    keys = KEYS + (("out1", "out2") if attrs.get("output_mean_var") else ())
    for k in keys:
        _close(got[k], want[k], TOL_NUMPY[dtype], f"{cid} {k} vs NumPy")
        tol = TOL_MXNET_OFFSET if cid.startswith("bn-offset") else TOL_NUMPY[dtype]
        _close(got[k], fixture[f"{cid}.{k}"], tol, f"{cid} {k} vs MXNet")


@pytest.mark.parametrize("axis", [1, -1])
@pytest.mark.parametrize("fix_gamma", [False, True])
def test_large_offset_keeps_float32_precision(axis, fix_gamma):
    """1e4 + randn: the shifted one-pass statistics lose nothing (the unshifted
    E[x^2] - E[x]^2 in float32 would lose every digit of the variance)."""
    rng = np.random.default_rng(3)
    shape = (32, 8, 12, 12) if axis == 1 else (32, 12, 12, 8)
    c = shape[axis]
    spread = _bcast(rng.uniform(0.5, 2, c), len(shape), axis % len(shape))
    x = (1e4 + rng.standard_normal(shape) * spread).astype(np.float32)
    gamma, beta = rng.uniform(0.5, 1.5, c).astype(np.float32), rng.standard_normal(c)
    mm, mv = rng.standard_normal(c).astype(np.float32), rng.uniform(0.5, 1.5, c)
    arrays = [x, gamma, beta.astype(np.float32), mm, mv.astype(np.float32)]
    head = rng.standard_normal(shape).astype(np.float32)
    attrs = {"axis": axis, "fix_gamma": fix_gamma, "output_mean_var": True}
    got = run_gluonjax(*arrays, {0: head}, attrs=attrs)
    want = numpy_batchnorm(*arrays, head, attrs=attrs)
    for k in KEYS + ("out1", "out2"):
        _close(got[k], want[k], 2e-5, k)


def test_mean_and_inverse_std_outputs_pass_no_gradient():
    """As MXNet 1.9.1 (see the ``bn-mean-var-heads`` fixture): heads on the mean and
    inverse-std outputs alone give zero gradients."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 3, 5)).astype(np.float32)
    xs = [nd.array(x), nd.array(rng.uniform(0.5, 1.5, 3)), nd.array(rng.standard_normal(3))]
    for v in xs:
        v.attach_grad()
    with mx.autograd.record():
        outs = nd.BatchNorm(*xs, nd.zeros((3,)), nd.ones((3,)), fix_gamma=False, output_mean_var=1)
    mx.autograd.backward(outs[1:], [nd.ones((3,)), nd.ones((3,))])
    for v in xs:
        np.testing.assert_array_equal(v.grad.asnumpy(), 0)


@pytest.mark.parametrize("axis", [1, 3])
def test_hybridized_layer_matches_numpy(axis):
    """nn.BatchNorm hybridized (the op inside one jitted program with its backward)."""
    rng = np.random.default_rng(5)
    shape = (6, 4, 5, 3)
    c = shape[axis]
    x = (5 + rng.standard_normal(shape)).astype(np.float32)
    head = rng.standard_normal(shape).astype(np.float32)
    net = mx.gluon.nn.BatchNorm(axis=axis, momentum=0.7, in_channels=c)
    net.initialize()
    gamma, beta = rng.uniform(0.5, 1.5, c), rng.standard_normal(c)
    mm, mv = rng.standard_normal(c), rng.uniform(0.5, 1.5, c)
    for p, v in zip(
        (net.gamma, net.beta, net.running_mean, net.running_var),
        (gamma, beta, mm, mv),
        strict=True,
    ):
        p.set_data(nd.array(v.astype(np.float32)))
    net.hybridize()
    xa = nd.array(x)
    xa.attach_grad()
    with mx.autograd.record():
        y = net(xa)
    y.backward(nd.array(head))
    arrays = [x] + [v.astype(np.float32) for v in (gamma, beta, mm, mv)]
    attrs = {"axis": axis, "fix_gamma": False, "momentum": 0.7, "eps": 1e-5}  # Gluon's eps
    want = numpy_batchnorm(*arrays, head, attrs=attrs)
    got = {
        "out0": y.asnumpy(),
        "grad_x": xa.grad.asnumpy(),
        "grad_gamma": net.gamma.grad().asnumpy(),
        "grad_beta": net.beta.grad().asnumpy(),
        "new_moving_mean": net.running_mean.data().asnumpy(),
        "new_moving_var": net.running_var.data().asnumpy(),
    }
    for k in KEYS:
        _close(got[k], want[k], 2e-5, k)


@needs_mxnet
def test_fixtures_regenerate(tmp_path):
    """The tool runs under MXNet and produces the committed cases (data not compared)."""
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(TOOL_DIR)!r})\n"
        "import make_norm_fixtures\n"
        f"sys.exit(make_norm_fixtures.main(['--out', {str(tmp_path)!r}]))\n"
    )
    run_mxnet(script, cwd=REPO_ROOT)
    assert json.loads((tmp_path / "cases.json").read_text()) == ALL_CASES
    with np.load(tmp_path / "norm.npz") as new, np.load(FIXTURES / "norm.npz") as old:
        assert sorted(new.files) == sorted(old.files)
        assert all(new[k].shape == old[k].shape for k in old.files)


def test_second_order_gradient_matches_plain_jax():
    """``create_graph`` differentiates the hand-written backward again (reverse over
    reverse): a gradient penalty through BatchNorm against jax's autodiff of the textbook
    formula (plain jax, no gluonjax code)."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((5, 3, 4)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, 3).astype(np.float32)
    beta = rng.standard_normal(3).astype(np.float32)
    head = rng.standard_normal(x.shape).astype(np.float32)

    def textbook(x, gamma, beta):
        m = x.mean((0, 2), keepdims=True)
        v = jnp.square(x - m).mean((0, 2), keepdims=True)
        return (x - m) / jnp.sqrt(v + 1e-3) * gamma.reshape(1, -1, 1) + beta.reshape(1, -1, 1)

    def penalty(x, gamma, beta):
        gx = jax.grad(lambda x: jnp.sum(textbook(x, gamma, beta) * head))(x)
        return jnp.sum(gx * gx)

    want = jax.grad(penalty, argnums=(0, 1))(x, gamma, beta)
    xs = [nd.array(x), nd.array(gamma), nd.array(beta)]
    for v in xs:
        v.attach_grad()
    with mx.autograd.record():
        y = nd.BatchNorm(*xs, nd.zeros((3,)), nd.ones((3,)), fix_gamma=False)
        (gx,) = mx.autograd.grad(y, [xs[0]], nd.array(head), create_graph=True)
        pen = (gx * gx).sum()
    pen.backward()
    for got, w in zip((xs[0].grad, xs[1].grad), want, strict=False):
        _close(got.asnumpy(), np.asarray(w), 1e-4, "second-order gradient")
