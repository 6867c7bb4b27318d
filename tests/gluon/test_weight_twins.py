"""Hybridized inference with convolution weights passed in HWIO (``gluon/_fast.py``) and
gluonjax's per-program XLA options (``_compile.jit``): differential tests, trick on, off,
and plain JAX."""

from __future__ import annotations

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gluonjax as mx
from gluonjax import _compile, nd
from gluonjax.gluon import _fast, nn


def _conv_net():
    net = nn.HybridSequential()
    net.add(
        nn.Conv2D(8, 3, padding=1, in_channels=3),
        nn.BatchNorm(in_channels=8),
        nn.Activation("relu"),
        nn.Conv2D(4, 3, strides=2, in_channels=8, groups=2),
        nn.Conv2DTranspose(3, 4, strides=2, padding=1, in_channels=4),
        nn.GlobalAvgPool2D(),
        nn.Dense(5),
    )
    net.initialize(mx.init.Xavier())
    return net


def _plain_jax(net, x):
    """The same forward in plain JAX from the parameters' values (NCHW, OIHW)."""
    p = [q.data().asnumpy() for q in net.collect_params().values()]
    h = jnp.asarray(x)

    def conv(h, w, b, stride, pad, groups=1):
        y = jax.lax.conv_general_dilated(
            h, w, (stride, stride), [(pad, pad)] * 2, feature_group_count=groups,
            dimension_numbers=("NCHW", "OIHW", "NCHW"),
        )  # fmt: skip
        return y + b.reshape(1, -1, 1, 1)

    h = conv(h, p[0], p[1], 1, 1)
    g, b, m, v = p[2:6]
    h = (h - m.reshape(1, -1, 1, 1)) / np.sqrt(v.reshape(1, -1, 1, 1) + 1e-5)
    h = jnp.maximum(h * g.reshape(1, -1, 1, 1) + b.reshape(1, -1, 1, 1), 0)
    h = conv(h, p[6], p[7], 2, 0, groups=2)
    # Conv2DTranspose: weight (in, out, kh, kw); the gradient of a conv with that weight
    w = jnp.flip(jnp.transpose(p[8], (1, 0, 2, 3)), (2, 3))
    h = jax.lax.conv_general_dilated(
        h, w, (1, 1), [(2, 2)] * 2, lhs_dilation=(2, 2), dimension_numbers=("NCHW", "OIHW", "NCHW")
    ) + p[9].reshape(1, -1, 1, 1)  # fmt: skip
    h = h.mean((2, 3))
    return np.asarray(h @ p[10].T + p[11])


def test_twins_match_eager_and_plain_jax():
    net = _conv_net()
    x = nd.random.normal(shape=(2, 3, 9, 9))
    eager = net(x).asnumpy()
    net.hybridize()
    hyb = net(x).asnumpy()
    again = net(x).asnumpy()  # the twins' cache
    ref = _plain_jax(net, x.asnumpy())
    np.testing.assert_allclose(eager, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hyb, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(hyb, again)
    if _compile.weight_twins():  # the hot path passed HWIO twins of the 4-D weights
        pv = net._fast.pvals
        src = [p.data()._data for p in net._cached.params]
        assert any(type(v) is tuple for v in pv)
        for v, s in zip(pv, src):
            if s.ndim == 4:  # (twin,): the HWIO transpose
                assert type(v) is tuple and len(v) == 1
                np.testing.assert_array_equal(np.asarray(v[0]), np.asarray(s).transpose(2, 3, 1, 0))
            else:
                assert v is s


def test_twin_rebuilt_after_a_parameter_write():
    net = _conv_net()
    net.hybridize()
    x = nd.random.normal(shape=(2, 3, 9, 9))
    before = net(x).asnumpy()
    w = net[0].weight
    w.set_data(w.data() * 2)  # a write: the next call must see the new weight
    after = net(x).asnumpy()
    net.hybridize(False)
    np.testing.assert_allclose(after, net(x).asnumpy(), rtol=1e-5, atol=1e-6)
    assert not np.allclose(before, after)


def test_twins_with_training_and_recording():
    """A recorded call and the trainer keep MXNet's layouts; the next inference call sees
    the updated weights."""
    net = _conv_net()
    net.hybridize()
    x = nd.random.normal(shape=(2, 3, 9, 9))
    net(x)  # twins made
    tr = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    with mx.autograd.record():
        loss = net(x).sum()
    loss.backward()
    tr.step(1)
    assert net[0].weight.data().shape == (8, 3, 3, 3)
    out = net(x).asnumpy()
    net.hybridize(False)
    np.testing.assert_allclose(out, net(x).asnumpy(), rtol=1e-5, atol=1e-5)


def test_which_parameters_are_twins():
    assert _fast.is_twin(jax.ShapeDtypeStruct((3, 3, 3, 3), jnp.float32))
    assert _fast.is_twin(jax.ShapeDtypeStruct((8, 3, 1, 1), jnp.float16))
    assert not _fast.is_twin(jax.ShapeDtypeStruct((8, 3, 1, 1), jnp.int32))
    assert not _fast.is_twin(jax.ShapeDtypeStruct((8, 3), jnp.float32))
    assert not _fast.is_twin(jax.ShapeDtypeStruct((32, 1, 3, 3), jnp.float32))  # depthwise
    vals = [jnp.ones((2, 3, 4, 5)), jnp.ones(3), None, jnp.ones((4, 1, 3, 3))]
    got = _fast.twins(vals)
    if _compile.weight_twins():
        assert type(got[0]) is tuple and got[0][0].shape == (4, 5, 3, 2)
        assert got[1] is vals[1] and got[2] is None and got[3] is vals[3]
        again = _fast.twins(vals, vals, got)  # unchanged values reuse their twins
        assert again[0] is got[0]


def test_depthwise_net_matches_and_keeps_ynnpack():
    """A net with depthwise convolutions: values equal eager ones, its depthwise weights
    are no twins, and its program keeps YNNPACK (options_for)."""
    net = nn.HybridSequential()
    net.add(
        nn.Conv2D(8, 3, padding=1, in_channels=3),
        nn.Conv2D(8, 3, padding=1, groups=8, in_channels=8),
        nn.Conv2D(4, 1, in_channels=8),
    )
    net.initialize(mx.init.Xavier())
    x = nd.random.normal(shape=(2, 3, 7, 7))
    eager = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), eager, rtol=1e-5, atol=1e-6)
    if _compile.weight_twins():
        kinds = [type(v) is tuple for v in net._fast.pvals]
        shapes = [p.shape for p in net._cached.params]
        assert kinds == [len(s) == 4 and s[1] != 1 for s in shapes]
    closed = jax.make_jaxpr(
        lambda x, w: jax.lax.conv_general_dilated(
            x, w, (1, 1), "SAME", feature_group_count=4
        )  # fmt: skip
    )(jnp.ones((1, 4, 5, 5)), jnp.ones((4, 1, 3, 3)))
    dense = jax.make_jaxpr(lambda x: jnp.sin(x) @ x)(jnp.ones((3, 3)))
    conv = jax.make_jaxpr(
        lambda x, w: jax.jit(lambda a, b: jax.lax.conv(a, b, (1, 1), "SAME"))(x, w)
    )(jnp.ones((1, 4, 5, 5)), jnp.ones((2, 4, 3, 3)))  # fmt: skip
    key = "xla_cpu_experimental_ynn_fusion_type"
    opts = _compile.xla_options("infer") or {}
    assert key not in (_compile.options_for("infer", closed.jaxpr) or {})
    assert key not in (_compile.options_for("infer", dense.jaxpr) or {})
    assert (_compile.options_for("infer", conv.jaxpr) or {}) == opts  # found in a nested jit


def _run(code, **env):
    full = dict(os.environ, GLUONJAX_CACHE_DIR="off", **env)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=300
    )


_PROBE = """
import json, os, jax, numpy as np
import gluonjax as mx
from gluonjax import _compile
from gluonjax.gluon import nn
net = nn.HybridSequential(); net.add(nn.Conv2D(4, 3, in_channels=2)); net.initialize()
net.hybridize(); x = mx.nd.ones((1, 2, 6, 6)); y = net(x).asnumpy()
mine = jax.jit(lambda a: a * 2)  # a user's own program: jax's defaults, whatever gluonjax does
print(json.dumps({"infer": _compile.xla_options("infer"), "train": _compile.xla_options("train"),
                  "twins": _compile.weight_twins(), "sum": float(y.sum()),
                  "user": float(mine(np.float32(2))), "flags": os.environ.get("XLA_FLAGS")}))
"""


def _probe(**env):
    import json

    proc = _run(_PROBE, **env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_options_default_off_and_custom():
    d = _probe()
    if jax.default_backend() == "cpu":
        assert d["infer"] == {"xla_cpu_experimental_ynn_fusion_type": ""}
        assert d["twins"] is True
    assert d["train"] is None and d["user"] == 4.0 and d["flags"] is None
    off = _probe(GLUONJAX_XLA_OPTIONS="off", GLUONJAX_WEIGHT_TWINS="0")
    assert off["infer"] is None and off["train"] is None and off["twins"] is False
    assert off["sum"] == pytest.approx(d["sum"], rel=1e-5)
    # an option this jaxlib does not know is dropped (an error there, never an abort)
    odd = _probe(
        GLUONJAX_XLA_OPTIONS='{"infer": {"xla_surely_not_an_option": true}, '
        '"train": {"xla_cpu_enable_fast_math": false}}'
    )
    assert odd["infer"] is None
    assert odd["train"] == {"xla_cpu_enable_fast_math": False}
    assert odd["sum"] == pytest.approx(d["sum"], rel=1e-5)


def test_bad_options_setting_is_a_clear_error():
    proc = _run(_PROBE, GLUONJAX_XLA_OPTIONS="ynn=off")
    assert proc.returncode != 0
    assert "GLUONJAX_XLA_OPTIONS" in proc.stderr and "MXNetError" in proc.stderr
