"""The plain compiled call of a hybridized block and the parameter arrays it reads.

A hybridized block called with one NDArray (not recording) reuses its list of
parameter values until a parameter array is written; every way of writing one
must be seen by the next call. References are the same net run eagerly, or NumPy.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd
from gluonjax._caches import PROCESS
from gluonjax._tape import state as _trace
from gluonjax.gluon import _fast, nn
from gluonjax.gluon._param_array import ParamArray
from gluonjax.ndarray.ndarray import NDArray

RNG = np.random.RandomState(7)


def _x(*shape):
    return nd.array(RNG.randn(*shape).astype(np.float32))


def _mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.Dense(3))
    net.initialize()
    return net


def _ref(net, x):
    h = x.asnumpy()
    layers = list(net._children.values())
    for i, layer in enumerate(layers):
        h = h @ layer.weight.data().asnumpy().T + layer.bias.data().asnumpy()
        if i < len(layers) - 1:
            h = np.maximum(h, 0)
    return h


def _hybrid_net(x):
    net = _mlp()
    net.hybridize()
    net(x)
    assert net._fast is not None  # later calls take the plain compiled call
    return net


def _check(net, x):
    np.testing.assert_allclose(net(x).asnumpy(), _ref(net, x), rtol=1e-5, atol=1e-5)


def _params(net):
    return list(net.collect_params().values())


def test_parameter_arrays_are_param_arrays():
    net = nn.HybridSequential()
    net.add(nn.Dense(4), nn.BatchNorm())  # deferred shapes
    net.initialize()
    net(_x(2, 5))
    c = mx.gluon.Constant("c", [1.0, 2.0])
    c.initialize()
    for p in _params(net) + [c]:
        assert type(p.data()) is ParamArray and isinstance(p.data(), NDArray)
    w = _params(net)[0]
    first = w.data()
    w.set_data(nd.ones(w.shape))
    w.cast("float16")
    w.reset_ctx(mx.cpu())
    w.initialize(force_reinit=True)
    assert w.data() is first and type(first) is ParamArray
    # copies and results of ops on a parameter are plain NDArrays
    assert type(first.copy()) is NDArray and type(first * 2) is NDArray
    assert type(first.detach()) is NDArray


def test_version_counts_value_writes_only():
    p = mx.gluon.Parameter("w", shape=(2,))
    p.initialize()
    arr = p.data()
    v = PROCESS.param_version
    arr._node = None
    arr._grad_req = "write"
    assert PROCESS.param_version == v
    arr._data = arr._data + 1
    assert PROCESS.param_version > v
    v = PROCESS.param_version
    arr.__class__ = ParamArray  # gluonjax.autograd._deferred swaps classes of deferred values
    assert PROCESS.param_version > v


@pytest.mark.parametrize(
    "write",
    [
        "set_data",
        "setitem",
        "iadd",
        "force_reinit",
        "trainer",
        "load",
        "copyto",
        "initializer",
    ],
)
def test_writes_are_seen_by_next_fast_call(write, tmp_path):
    x = _x(2, 5)
    net = _hybrid_net(x)
    _check(net, x)
    before = net(x).asnumpy()
    w = net[0].weight
    if write == "set_data":
        w.set_data(nd.array(RNG.randn(*w.shape).astype(np.float32)))
    elif write == "setitem":
        w.data()[:] = 0
        net[1].bias.data()[1] = 5.0
    elif write == "iadd":
        arr = w.data()
        arr += 1.0
    elif write == "force_reinit":
        net.initialize(mx.init.Normal(1.0), force_reinit=True)
    elif write == "trainer":
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
        with mx.autograd.record():
            loss = net(x).sum()
        loss.backward()
        trainer.step(1)
    elif write == "load":
        other = _mlp()
        other(x)
        other.save_parameters(str(tmp_path / "p.params"))
        net.load_parameters(str(tmp_path / "p.params"))
        np.testing.assert_array_equal(w.data().asnumpy(), other[0].weight.data().asnumpy())
    elif write == "copyto":
        nd.ones(w.shape).copyto(w.data())
    elif write == "initializer":
        mx.init.One()(mx.init.InitDesc("dense_weight"), w.data())
    _check(net, x)
    assert net._fast is not None
    assert not np.allclose(net(x).asnumpy(), before)


def test_every_write_changes_the_fast_result():
    x = _x(2, 5)
    net = _hybrid_net(x)
    w = net[0].weight
    outs = [net(x).asnumpy()]
    w.set_data(w.data() * 2)
    outs.append(net(x).asnumpy())
    w.data()[:] = 0
    outs.append(net(x).asnumpy())
    net[1].bias.data()[:] = 3.0
    outs.append(net(x).asnumpy())
    for a, b in zip(outs, outs[1:]):
        assert not np.array_equal(a, b)
    np.testing.assert_array_equal(outs[-1], np.full((2, 3), 3.0, np.float32))


def test_cast_is_seen_by_next_call():
    x = _x(2, 5)
    net = _hybrid_net(x)
    net.cast("float16")
    out = net(x.astype("float16"))
    assert out.dtype == np.float16
    np.testing.assert_allclose(out.asnumpy(), _ref(net, x), rtol=2e-2, atol=2e-2)


def test_fast_result_is_built_like_ndarray():
    # the hot path skips NDArray.__init__ (see gluonjax.gluon._fast.NEW): if __init__
    # ever sets more than _data, this fails and the hot path must follow
    v = nd.ones((2,))._data
    made, built = NDArray(v), _fast.NEW(NDArray)
    built._data = v
    slots = [s for c in NDArray.__mro__ for s in c.__dict__.get("__slots__", ())]
    slots = [s for s in slots if s not in ("__dict__", "__weakref__")]
    missing = object()
    for s in slots:
        assert getattr(made, s, missing) is getattr(built, s, missing)
    assert made.__dict__ == built.__dict__ == {}
    x = _x(2, 5)
    net = _hybrid_net(x)
    out = net(x)
    assert type(out) is NDArray and out.__dict__ == {} and out._node is None


def test_param_array_records_gradients_eagerly():
    x = _x(2, 5)
    net = _mlp()
    net(x)
    dense = net[1]
    with mx.autograd.record():
        y = nd.dot(x, net[0].weight.data(), transpose_b=True).sum()
    y.backward()
    np.testing.assert_allclose(
        net[0].weight.grad().asnumpy(),
        np.broadcast_to(x.asnumpy().sum(0), net[0].weight.shape),
        rtol=1e-5,
    )
    h = _x(2, 8)
    with mx.autograd.record():
        out = dense(h)
    out.backward()
    np.testing.assert_allclose(
        dense.weight.grad().asnumpy(), np.tile(h.asnumpy().sum(0), (3, 1)), rtol=1e-5
    )
    np.testing.assert_allclose(dense.bias.grad().asnumpy(), [2.0, 2.0, 2.0])


def test_param_array_as_input_of_hybridized_block():
    net = nn.Dense(2, in_units=4)
    net.initialize()
    net.hybridize()
    p = mx.gluon.Parameter("inp", shape=(3, 4))
    p.initialize(mx.init.One())
    out = net(p.data())
    ref = np.ones((3, 4)) @ net.weight.data().asnumpy().T + net.bias.data().asnumpy()
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5)


def test_batchnorm_updates_on_fast_path():
    x = _x(4, 3)
    net = nn.BatchNorm(in_channels=3, momentum=0.5)
    net.initialize()
    net.hybridize()
    net(x)
    assert net._fast is not None
    with mx.autograd.record():  # training mode: batch statistics
        out = net(x)
        total = out.sum() + net(x).sum()
    # the running statistics move in the backward, once per call it runs through (MXNet)
    total.backward()
    mean = x.asnumpy().mean(0)
    np.testing.assert_allclose(out.asnumpy().mean(0), 0.0, atol=1e-5)
    # two updates with momentum 0.5 from 0: 0.75 * mean
    np.testing.assert_allclose(net.running_mean.data().asnumpy(), 0.75 * mean, rtol=1e-5)
    pred = net(x).asnumpy()  # predict mode reads the new running statistics
    var = net.running_var.data().asnumpy()
    ref = (x.asnumpy() - 0.75 * mean) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(pred, ref, rtol=1e-4, atol=1e-4)


def test_batchnorm_inference_writes_no_parameter():
    # BatchNorm in inference returns its moving statistics as it got them: the compiled
    # call neither returns them nor writes them back (no copy per call, no version bump)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, in_channels=2), nn.BatchNorm(in_channels=4), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = nd.array(np.random.RandomState(0).randn(2, 2, 6, 6))
    with mx.autograd.record():
        y = net(x)
    y.backward()  # moves the running statistics away from their initial values
    stats = {k: p.data().asnumpy() for k, p in net.collect_params(".*running.*").items()}
    arrays = {k: p.data()._data for k, p in net.collect_params(".*running.*").items()}
    first = net(x).asnumpy()
    v = PROCESS.param_version
    second = net(x).asnumpy()
    assert PROCESS.param_version == v
    np.testing.assert_array_equal(second, first)
    for k, p in net.collect_params(".*running.*").items():
        assert p.data()._data is arrays[k]  # the same buffers, not copies written back
        np.testing.assert_array_equal(p.data().asnumpy(), stats[k])
    with mx.autograd.record():  # a training step still updates them
        y = net(x)
    y.backward()
    moved = net.collect_params(".*running_mean")
    assert not np.array_equal(next(iter(moved.values())).data().asnumpy(), stats[next(iter(moved))])


def test_dropout_leaves_fast_path_and_draws_fresh_masks():
    net = nn.HybridSequential()
    net.add(nn.Dropout(0.5))
    net.hybridize()
    x = nd.ones((4, 64))
    np.testing.assert_array_equal(net(x).asnumpy(), x.asnumpy())
    np.testing.assert_array_equal(net(x).asnumpy(), x.asnumpy())
    with mx.autograd.train_mode():
        a, b = net(x).asnumpy(), net(x).asnumpy()
    assert not np.array_equal(a, b) and set(np.unique(a)) <= {0.0, 2.0}
    assert net._fast is None and net._cached.uses_random


class _Two(nn.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.dense = nn.Dense(2, in_units=3)

    def hybrid_forward(self, F, x):
        y = self.dense(x)
        return y, F.relu(y)


def test_tuple_output_on_fast_path():
    blk = _Two()
    blk.initialize()
    blk.hybridize()
    x = _x(2, 3)
    blk(x)
    out = blk(x)
    # MXNet 1.9.1's hybridized block gives a list for ``return y, relu(y)``
    assert isinstance(out, list) and all(type(o) is NDArray for o in out)
    np.testing.assert_allclose(out[1].asnumpy(), np.maximum(out[0].asnumpy(), 0))


def test_call_mode_follows_recording_training_and_tracing():
    st = _trace._local
    assert st.call_mode == 0
    with mx.autograd.train_mode():
        assert st.call_mode == 1
        with mx.autograd.record():
            assert st.call_mode == 2
        assert st.call_mode == 1
    with mx.autograd.record(train_mode=False):
        assert st.call_mode == 2
        with mx.autograd.pause():
            assert st.call_mode == 0
    seen = []

    class Probe(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            seen.append(st.call_mode)
            return x + 1

    blk = Probe()
    blk.hybridize()
    blk(nd.ones((2,)))
    assert seen == [2] and st.call_mode == 0


def test_call_mode_is_per_thread():
    modes = []
    with mx.autograd.record():
        t = threading.Thread(target=lambda: modes.append(_trace._local.call_mode))
        t.start()
        t.join()
        assert _trace._local.call_mode == 2
    assert modes == [0]


def test_fast_path_and_recording_agree():
    x = _x(2, 5)
    net = _hybrid_net(x)
    fast = net(x).asnumpy()
    with mx.autograd.record():
        rec = net(x)
    rec.backward()
    np.testing.assert_allclose(rec.asnumpy(), fast, rtol=1e-6)
    assert net._fast is not None
    np.testing.assert_allclose(net(x).asnumpy(), fast, rtol=1e-6)


class _Nested(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return x + 1, (x * 2, x * 3)


def test_hybridized_outputs_regroup_as_lists_as_mxnet():
    # MXNet 1.9.1: eager calls keep the forward's tuples; a hybridized call (recorded
    # or not) gives [a, [b, c]], its cached graph's outputs regrouped as lists
    blk = _Nested()
    blk.initialize()
    x = _x(2, 3)
    eager = blk(x)
    assert type(eager) is tuple and type(eager[1]) is tuple
    blk.hybridize()
    for _ in range(2):
        out = blk(x)
        assert type(out) is list and type(out[1]) is list
    with mx.autograd.record():
        out = blk(x)
    assert type(out) is list and type(out[1]) is list
    np.testing.assert_allclose(out[1][1].asnumpy(), x.asnumpy() * 3)
