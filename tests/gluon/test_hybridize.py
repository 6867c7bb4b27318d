"""HybridBlock and hybridize(): tracing, caching, symbols, errors, gradients.

References are NumPy code written here or jax.grad of equivalent pure functions.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd
from gluonjax.base import HybridizationError, MXNetError
from gluonjax.gluon import nn

RNG = np.random.RandomState(0)


def _x(*shape):
    return nd.array(RNG.randn(*shape).astype(np.float32))


class LeNetHead(nn.HybridBlock):
    """Parameters declared with self.params.get, received by name."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.fc3_weight = self.params.get("fc3_weight", shape=(10, 84))
            self.fc3_bias = self.params.get("fc3_bias", shape=(10,))

    def hybrid_forward(self, F, x, fc3_weight, fc3_bias):
        return F.FullyConnected(x, fc3_weight, fc3_bias, num_hidden=10)


@pytest.mark.parametrize("hybrid", [False, True])
def test_params_by_name(hybrid):
    blk = LeNetHead(prefix="lenet_")
    assert list(blk.collect_params().keys()) == ["lenet_fc3_weight", "lenet_fc3_bias"]
    blk.initialize(mx.init.Normal(0.1))
    if hybrid:
        blk.hybridize()
    x = _x(2, 84)
    w, b = blk.fc3_weight.data().asnumpy(), blk.fc3_bias.data().asnumpy()
    np.testing.assert_allclose(blk(x).asnumpy(), x.asnumpy() @ w.T + b, rtol=1e-5, atol=1e-6)


class Gluon2(nn.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.dense = nn.Dense(3, in_units=4)

    def forward(self, x):
        h = self.dense(x)
        return jnp.tanh(jnp.asarray(h)) * 2.0 + 1.0


def test_gluon2_forward_eager_and_hybridized():
    blk = Gluon2()
    blk.initialize()
    x = _x(2, 4)
    w, b = blk.dense.weight.data().asnumpy(), blk.dense.bias.data().asnumpy()
    expect = np.tanh(x.asnumpy() @ w.T + b) * 2 + 1
    np.testing.assert_allclose(np.asarray(blk(x)), expect, rtol=1e-5, atol=1e-6)
    blk.hybridize()
    np.testing.assert_allclose(np.asarray(blk(x)), expect, rtol=1e-5, atol=1e-6)


def _mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(5, activation="relu"), nn.Dense(4, activation="tanh"), nn.Dense(2))
    net.initialize(mx.init.Xavier())
    return net


def test_eager_equals_hybridized():
    net = _mlp()
    x = _x(3, 6)
    eager = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), eager, rtol=1e-5, atol=1e-6)
    net.hybridize(False)
    np.testing.assert_allclose(net(x).asnumpy(), eager, rtol=1e-5, atol=1e-6)


class Counting(nn.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.traces = 0
        self.eager_calls = 0
        with self.name_scope():
            self.dense = nn.Dense(3, in_units=4)

    def hybrid_forward(self, F, x):
        if F is mx.sym:
            self.traces += 1
        else:
            self.eager_calls += 1
        return self.dense(x)


def test_retrace_only_on_new_signature_or_mode():
    blk = Counting()
    blk.initialize()
    blk.hybridize()
    blk(_x(2, 4))
    blk(_x(2, 4))
    assert blk.traces == 1 and blk.eager_calls == 0
    blk(_x(5, 4))  # new shape
    assert blk.traces == 2
    blk(_x(2, 4))  # known shape again: cached
    assert blk.traces == 2
    blk(nd.ones((2, 4), dtype="float16").astype("float32"))  # same signature
    assert blk.traces == 2
    with mx.autograd.train_mode():  # train/predict mode is part of the signature
        blk(_x(2, 4))
        blk(_x(2, 4))
    assert blk.traces == 3
    blk(_x(2, 4))
    assert blk.traces == 3


def test_retrace_on_new_dtype():
    class Id(nn.HybridBlock):
        traces = 0

        def hybrid_forward(self, F, x):
            if F is mx.sym:
                type(self).traces += 1
            return x * 2

    blk = Id()
    blk.hybridize()
    blk(nd.ones((2,)))
    out = blk(nd.ones((2,), dtype="float16"))
    assert Id.traces == 2
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out.asnumpy(), [2, 2])


def test_hybridize_false_returns_to_eager():
    blk = Counting()
    blk.initialize()
    blk.hybridize()
    blk(_x(2, 4))
    blk(_x(2, 4))
    blk.hybridize(False)
    blk(_x(2, 4))
    blk(_x(2, 4))
    assert blk.traces == 1 and blk.eager_calls == 2


class ShapeSliceIadd(nn.HybridBlock):
    def hybrid_forward(self, F, x):
        n = x.shape[1]
        y = x[:, 1:n]
        y += 1
        return y * n


@pytest.mark.parametrize("hybrid", [False, True])
def test_shape_slice_iadd_inside_forward(hybrid):
    blk = ShapeSliceIadd()
    if hybrid:
        blk.hybridize()
    x = _x(2, 4)
    np.testing.assert_allclose(blk(x).asnumpy(), (x.asnumpy()[:, 1:4] + 1) * 4, rtol=1e-6)


class PyIf(nn.HybridBlock):
    def hybrid_forward(self, F, x):
        if x.sum() > 0:
            return x
        return -x


class AsNumpy(nn.HybridBlock):
    def hybrid_forward(self, F, x):
        return x * float(x.asnumpy().sum())


@pytest.mark.parametrize("cls", [PyIf, AsNumpy])
def test_value_dependent_python_raises_hybridization_error(cls):
    blk = cls(prefix="badblock_")
    x = nd.ones((2, 2))
    blk(x)  # fine eagerly
    blk.hybridize()
    with pytest.raises(HybridizationError) as err:
        blk(x)
    msg = str(err.value)
    assert "badblock" in msg and "hybridize(False)" in msg
    if cls is PyIf:
        assert "F.where" in msg and "cond" in msg
    blk.hybridize(False)
    np.testing.assert_array_equal(blk(x).asnumpy().shape, (2, 2))


class Outer(nn.Block):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.inner = Counting()

    def forward(self, x):
        return self.inner(x) * 2


def test_block_hybridizes_hybrid_children():
    net = Outer()
    net.initialize()
    net.hybridize()
    x = _x(2, 4)
    out1 = net(x).asnumpy()
    net(x)
    assert net.inner.traces == 1 and net.inner.eager_calls == 0
    w, b = net.inner.dense.weight.data().asnumpy(), net.inner.dense.bias.data().asnumpy()
    np.testing.assert_allclose(out1, 2 * (x.asnumpy() @ w.T + b), rtol=1e-5, atol=1e-6)


def test_symbol_call_names_and_arguments():
    with mx.name.NameManager():
        net = nn.HybridSequential()
        net.add(nn.Dense(8, activation="relu"), nn.Dense(6, activation="relu"), nn.Dense(2))
        net.initialize()
        net.hybridize()
        net(_x(1, 5))
        out = net(mx.sym.var("data"))
    # MXNet 1.9.1 (same code): <Symbol dense2_fwd>
    assert isinstance(out, mx.sym.Symbol)
    assert repr(out) == "<Symbol dense2_fwd>"
    assert out.list_arguments() == [
        "data",
        "dense0_weight",
        "dense0_bias",
        "dense1_weight",
        "dense1_bias",
        "dense2_weight",
        "dense2_bias",
    ]
    assert out.list_outputs() == ["dense2_fwd_output"]
    _, out_shapes, _ = out.infer_shape(data=(3, 5))
    assert out_shapes == [(3, 2)]


def test_symbol_call_with_batchnorm_aux():
    net = nn.HybridSequential(prefix="m_")
    with net.name_scope():
        net.add(nn.Dense(3, in_units=2), nn.BatchNorm(in_channels=3))
    out = net(mx.sym.var("data"))
    # MXNet 1.9.1: running stats are auxiliary states
    assert out.list_arguments() == [
        "data",
        "m_dense0_weight",
        "m_dense0_bias",
        "m_batchnorm0_gamma",
        "m_batchnorm0_beta",
    ]
    assert out.list_auxiliary_states() == ["m_batchnorm0_running_mean", "m_batchnorm0_running_var"]
    assert out.name == "m_batchnorm0_fwd"


# ---------------------------------------------------------------- gradients
def _pure_mlp(params, x):
    w0, b0, w1, b1 = params
    h = jnp.maximum(x @ w0.T + b0, 0)
    return jnp.sum((h @ w1.T + b1) ** 2)


def _net2():
    net = nn.HybridSequential()
    net.add(nn.Dense(4, activation="relu", in_units=3), nn.Dense(2, in_units=4))
    net.initialize(mx.init.Xavier())
    return net


def _grads(net, x):
    with mx.autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    return [p.grad().asnumpy().copy() for p in net.collect_params().values()]


def test_grads_eager_hybrid_and_jax_grad():
    net = _net2()
    x = _x(5, 3)
    eager = _grads(net, x)
    params = [jnp.asarray(p.data().asnumpy()) for p in net.collect_params().values()]
    ref = jax.grad(_pure_mlp)(params, jnp.asarray(x.asnumpy()))
    for g, r in zip(eager, ref, strict=True):
        np.testing.assert_allclose(g, np.asarray(r), rtol=1e-5, atol=1e-6)
    net.hybridize()
    for g, r in zip(_grads(net, x), ref, strict=True):
        np.testing.assert_allclose(g, np.asarray(r), rtol=1e-5, atol=1e-6)


def test_sgd_three_steps_eager_equals_hybrid():
    nets = [_net2(), _net2()]
    pairs = zip(nets[0].collect_params().values(), nets[1].collect_params().values(), strict=True)
    for p, q in pairs:
        q.set_data(p.data())
    nets[1].hybridize()
    x, lr = _x(4, 3), 0.1
    params = [jnp.asarray(p.data().asnumpy()) for p in nets[0].collect_params().values()]
    for _ in range(3):
        for net in nets:
            _grads(net, x)
            for p in net.collect_params().values():
                p.set_data(p.data() - lr * p.grad())
        g = jax.grad(_pure_mlp)(params, jnp.asarray(x.asnumpy()))
        params = [p - lr * gi for p, gi in zip(params, g, strict=True)]
    for p, q, r in zip(
        nets[0].collect_params().values(), nets[1].collect_params().values(), params, strict=True
    ):
        np.testing.assert_allclose(p.data().asnumpy(), q.data().asnumpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(p.data().asnumpy(), np.asarray(r), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("hybrid", [False, True])
def test_grad_req_add_accumulates(hybrid):
    net = _net2()
    if hybrid:
        net.hybridize()
    x = _x(5, 3)
    once = _grads(net, x)
    net.collect_params().setattr("grad_req", "add")
    net.collect_params().zero_grad()
    _grads(net, x)
    twice = _grads(net, x)
    for a, b in zip(once, twice, strict=True):
        np.testing.assert_allclose(b, 2 * a, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("hybrid", [False, True])
def test_input_grad_through_block(hybrid):
    net = _net2()
    if hybrid:
        net.hybridize()
    x = _x(2, 3)
    x.attach_grad()
    with mx.autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    params = [jnp.asarray(p.data().asnumpy()) for p in net.collect_params().values()]
    ref = jax.grad(_pure_mlp, argnums=1)(params, jnp.asarray(x.asnumpy()))
    np.testing.assert_allclose(x.grad.asnumpy(), np.asarray(ref), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("hybrid", [False, True])
def test_set_data_seen_by_compiled_forward(hybrid):
    d = nn.Dense(2, in_units=3)
    d.initialize()
    if hybrid:
        d.hybridize()
    x = _x(2, 3)
    d(x)
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    d.weight.set_data(nd.array(w))
    d.bias.set_data(nd.array([1.0, -1.0]))
    np.testing.assert_allclose(d(x).asnumpy(), x.asnumpy() @ w.T + [1, -1], rtol=1e-5, atol=1e-5)
    d.initialize(mx.init.Zero(), force_reinit=True)
    np.testing.assert_array_equal(d(x).asnumpy(), np.zeros((2, 2)))


class _Uninferable(nn.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.w = self.params.get("w", shape=(0,), allow_deferred_init=True)

    def hybrid_forward(self, F, x, w):
        return F.broadcast_mul(x, w.reshape((1, -1)))


@pytest.mark.parametrize("hybrid", [False, True])
def test_uninferable_deferred_shape_is_an_error(hybrid):
    # MXNet 1.9.1: "Deferred initialization failed because shape cannot be inferred ...
    # uninferable0_w: (0,)"
    blk = _Uninferable(prefix="uninferable0_")
    blk.initialize()
    if hybrid:
        blk.hybridize()
    with pytest.raises(MXNetError, match="uninferable0_w"):
        blk(nd.ones((2, 3)))


class _Scaled(nn.HybridBlock):
    """A plain attribute read in the forward (as gluoncv's detectors read nms_thresh)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.scale = 2.0

    def set_scale(self, scale):  # as gluoncv's set_nms: change it, drop the compiled forward
        self._clear_cached_op()
        self.scale = scale

    def hybrid_forward(self, F, x):
        return x * self.scale


def test_clear_cached_op_retraces_with_new_attributes():
    blk = _Scaled()
    blk.initialize()
    blk.hybridize()
    x = nd.ones((2,))
    np.testing.assert_array_equal(blk(x).asnumpy(), [2, 2])
    blk.set_scale(5.0)  # MXNet 1.9.1 gives 5 after _clear_cached_op
    np.testing.assert_array_equal(blk(x).asnumpy(), [5, 5])
