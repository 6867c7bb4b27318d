"""A hybridized block's first calls on new shapes run on the host (gluonjax._ops.hostcall)
when its program is exact (no sum NumPy may order otherwise): the plain call
(gluon._fast._FirstCall), a recorded call read before its backward (_Signature.run, whose
VJP is then a RecomputedVjp) and the fused backward (autograd._plan.Plan). Tested
differentially: host path on against the same calls compiled (host path off), bit for
bit, and against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, gluon, nd
from gluonjax._ops import buckets, hostcall

RNG = np.random.RandomState(3)
X = RNG.randn(4, 6, 5).astype(np.float32)
Y = RNG.randn(4, 6, 5).astype(np.float32)
IDX = (slice(1, 3), 2, slice(None, None, -2))


@pytest.fixture(params=[True, False], ids=["host", "compiled"])
def host_on(request, monkeypatch):
    monkeypatch.setitem(buckets._state, "host", request.param)
    return request.param


class Sliced(gluon.HybridBlock):
    def hybrid_forward(self, F, x, y):
        return (x[IDX] - y[IDX]) * 2.0


class Single(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.concat(x[1:3], -x[:2], dim=0)


class WithDense(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.fc = gluon.nn.Dense(3)

    def hybrid_forward(self, F, x):
        return self.fc(x)


def _net(cls):
    net = cls()
    net.initialize()
    net.hybridize()
    return net


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


def test_plain_first_call(host_on):
    runs = hostcall.STATS["runs"]
    out = _net(Sliced)(nd.array(X), nd.array(Y)).asnumpy()
    np.testing.assert_array_equal(_bits(out), _bits((X[IDX] - Y[IDX]) * np.float32(2)))
    assert (hostcall.STATS["runs"] > runs) == host_on
    one = _net(Single)(nd.array(X)).asnumpy()
    np.testing.assert_array_equal(one, np.concatenate([X[1:3], -X[:2]]))


def test_plain_calls_past_the_host_limit_compile_with_the_same_bits(host_on):
    net = _net(Single)
    x = nd.array(X)
    outs = [net(x).asnumpy() for _ in range(hostcall.HOST_CALLS + 2)]
    for o in outs[1:]:
        np.testing.assert_array_equal(_bits(o), _bits(outs[0]))


@pytest.mark.parametrize("read_first", [False, True], ids=["deferred", "forced"])
def test_recorded_call_and_backward(host_on, read_first):
    x, y = nd.array(X), nd.array(Y)
    x.attach_grad()
    y.attach_grad()
    net = _net(Sliced)
    runs = hostcall.STATS["runs"]
    with autograd.record():
        out = net(x, y)
    if read_first:  # forced on its own: on the host, its VJP recomputed by the backward
        np.testing.assert_array_equal(out.asnumpy(), (X[IDX] - Y[IDX]) * 2)
    out.backward(nd.array(np.arange(out.size, dtype=np.float32).reshape(out.shape)))
    want = np.zeros_like(X)
    want[IDX] = 2 * np.arange(out.size, dtype=np.float32).reshape(out.shape)
    np.testing.assert_array_equal(x.grad.asnumpy(), want)
    np.testing.assert_array_equal(y.grad.asnumpy(), -want)
    np.testing.assert_array_equal(out.asnumpy(), (X[IDX] - Y[IDX]) * 2)
    # the forward (when read first) and the backward: each on the host
    assert hostcall.STATS["runs"] - runs == (1 + read_first if host_on else 0)


def test_host_path_turns_off_after_its_calls(host_on):
    """A signature's and a plan's host path serve one set of shapes: after HOST_CALLS
    calls it turns off for good (no per-call cost left on a training loop)."""
    x, y = nd.array(X), nd.array(Y)
    x.attach_grad()
    net = _net(Sliced)
    for _ in range(2 * hostcall.HOST_CALLS + 2):
        with autograd.record():
            out = net(x, y)
        out.asnumpy()  # forced on its own: the signature's forward
        out.backward()
    sig = next(iter(net._cached.lazy_sigs.values()))
    assert sig._host.off == host_on  # (with the host path off, nothing was counted)
    want = np.zeros_like(X)
    want[IDX] = 2
    np.testing.assert_array_equal(x.grad.asnumpy(), want)


def test_a_sum_keeps_the_compiled_rounding(monkeypatch):
    """A program with a dot (NumPy may add in another order) never runs on the host here:
    the first call has the bits of every later call."""
    runs = hostcall.STATS["runs"]
    x = nd.array(RNG.randn(7, 5).astype(np.float32))
    net = _net(WithDense)
    first = net(x).asnumpy()
    assert hostcall.STATS["runs"] == runs
    np.testing.assert_array_equal(_bits(net(x).asnumpy()), _bits(first))
    x.attach_grad()
    grads = []
    for _ in range(2):
        with autograd.record():
            out = net(x)
        out.backward()
        grads.append(x.grad.asnumpy())
    np.testing.assert_array_equal(_bits(grads[0]), _bits(grads[1]))


def test_np_mode_block_with_host_first_call(host_on):
    from gluonjax import np as mnp
    from gluonjax import npx

    @npx.use_np
    class NpSliced(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.np.concatenate(F.np.split(x, 5, axis=2)[1:-1], axis=2)

    net = _net(NpSliced)
    a = mnp.array(X)
    a.attach_grad()
    with autograd.record():
        out = net(a)
    assert type(out) is mnp.ndarray
    out.backward()
    np.testing.assert_array_equal(out.asnumpy(), X[:, :, 1:-1])
    want = np.zeros_like(X)
    want[:, :, 1:-1] = 1
    np.testing.assert_array_equal(a.grad.asnumpy(), want)
    assert mx.np.ndarray is mnp.ndarray
