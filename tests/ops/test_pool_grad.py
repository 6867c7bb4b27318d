"""Max-pooling gradients: the first maximum of each window takes the whole gradient.

MXNet 1.9.1's CPU kernel scans each window row-major and routes the gradient to the
first position holding the maximum (the ``kink-pool-*`` fixtures in
``tests/fixtures/ops/kinks.npz`` record it). The references here are a naive NumPy
implementation of that rule (inputs with many ties) and ``jax.grad`` of
``lax.reduce_window`` max (inputs without ties).
"""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gluonjax as mx
from gluonjax import gluon, nd

RNG = np.random.default_rng(7)


def _geometry(sizes, kernel, stride, pad, conv):
    rnd = math.ceil if conv == "full" else math.floor
    return [
        1 + rnd((n + 2 * p - k) / s) for n, k, s, p in zip(sizes, kernel, stride, pad, strict=True)
    ]


def np_max_pool_grad(x, head, kernel, stride, pad, conv):
    """Each window's head gradient goes to its first (row-major) maximum; padding is -inf."""
    sizes = x.shape[2:]
    outs = _geometry(sizes, kernel, stride, pad, conv)
    grad = np.zeros(x.shape, np.float64)
    for n, c in np.ndindex(*x.shape[:2]):
        for idx in np.ndindex(*outs):
            best, where = -np.inf, None
            for off in itertools.product(*[range(k) for k in kernel]):
                pos = tuple(i * s - p + o for i, s, p, o in zip(idx, stride, pad, off, strict=True))
                inside = all(0 <= q < m for q, m in zip(pos, sizes, strict=True))
                val = x[(n, c) + pos] if inside else -np.inf
                if where is None or val > best:
                    best, where = val, pos if inside else ()
            if where:
                grad[(n, c) + where] += head[(n, c) + idx]
    return grad


def jax_max_pool(x, kernel, stride, pad, conv):
    """Pure-JAX max pooling with MXNet's geometry (extra high padding for ``full``)."""
    sizes = x.shape[2:]
    outs = _geometry(sizes, kernel, stride, pad, conv)
    padding = [(0, 0), (0, 0)] + [
        (p, max((o - 1) * s + k - n - p, 0))
        for n, k, s, p, o in zip(sizes, kernel, stride, pad, outs, strict=True)
    ]
    return jax.lax.reduce_window(
        x, -jnp.inf, jax.lax.max, (1, 1) + tuple(kernel), (1, 1) + tuple(stride), padding
    )


def eager_grad(x, head, **kw):
    v = nd.array(x)
    v.attach_grad()
    with mx.autograd.record():
        y = nd.Pooling(v, pool_type="max", **kw)
    y.backward(nd.array(head))
    return y.asnumpy(), v.grad.asnumpy()


CASES = [
    # (shape, kernel, stride, pad, convention)
    ((2, 3, 9), (3,), (2,), (1,), "valid"),
    ((1, 2, 8), (2,), (3,), (0,), "full"),
    ((2, 3, 7, 7), (3, 3), (2, 2), (1, 1), "valid"),
    ((1, 2, 6, 7), (3, 3), (2, 2), (1, 1), "full"),
    ((1, 2, 6, 5), (2, 2), (1, 1), (0, 0), "valid"),
    ((1, 2, 7, 6), (3, 2), (2, 3), (1, 0), "full"),
    ((1, 1, 5, 6), (2, 3), (2, 2), (0, 1), "valid"),
    ((1, 2, 4, 5, 4), (2, 2, 2), (2, 2, 1), (1, 0, 1), "valid"),
    ((1, 1, 5, 4, 5), (3, 2, 2), (2, 2, 2), (1, 1, 0), "full"),
    # windows over 49 positions take the reduce_window fallback
    ((1, 2, 9, 9), (8, 7), (1, 2), (0, 0), "valid"),
]


def _kw(kernel, stride, pad, conv):
    return dict(kernel=kernel, stride=stride, pad=pad, pooling_convention=conv)


@pytest.mark.parametrize("case", CASES)
def test_max_pool_grad_ties_eager(case):
    shape, kernel, stride, pad, conv = case
    x = RNG.integers(0, 3, shape).astype(np.float32)  # many ties in every window
    outs = _geometry(shape[2:], kernel, stride, pad, conv)
    head = RNG.standard_normal(shape[:2] + tuple(outs)).astype(np.float32)
    out, grad = eager_grad(x, head, **_kw(kernel, stride, pad, conv))
    assert out.shape == head.shape
    expect = np_max_pool_grad(x, head.astype(np.float64), kernel, stride, pad, conv)
    np.testing.assert_allclose(grad, expect, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", CASES)
def test_max_pool_grad_matches_jax_without_ties(case):
    shape, kernel, stride, pad, conv = case
    x = RNG.permutation(math.prod(shape)).reshape(shape).astype(np.float32) / 7.0
    outs = _geometry(shape[2:], kernel, stride, pad, conv)
    head = RNG.standard_normal(shape[:2] + tuple(outs)).astype(np.float32)
    out, grad = eager_grad(x, head, **_kw(kernel, stride, pad, conv))
    ref_out, vjp = jax.vjp(lambda v: jax_max_pool(v, kernel, stride, pad, conv), jnp.asarray(x))
    # a window of padding only outputs the lowest float, as MXNet does
    ref_out = np.where(np.isneginf(ref_out), np.finfo(np.float32).min, ref_out)
    np.testing.assert_array_equal(out, ref_out)
    np.testing.assert_allclose(grad, np.asarray(vjp(jnp.asarray(head))[0]), rtol=1e-6, atol=1e-6)


class _Pools(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.p1 = gluon.nn.MaxPool1D(3, 2, 1)
        self.p2 = gluon.nn.MaxPool2D(3, 2, 1, ceil_mode=True)
        self.p3 = gluon.nn.MaxPool3D(2, 2, 0)

    def hybrid_forward(self, F, a, b, c):
        return self.p1(a) * 2, self.p2(b), self.p3(c) + 1


@pytest.mark.parametrize("hybridize", [False, True])
def test_max_pool_grad_ties_gluon(hybridize):
    shapes = [(2, 3, 9), (1, 2, 6, 7), (1, 2, 4, 4, 6)]
    xs = [RNG.integers(0, 3, s).astype(np.float32) for s in shapes]
    net = _Pools()
    if hybridize:
        net.hybridize()
    for _ in range(2):  # the second call replays the cached graph
        vs = [nd.array(x) for x in xs]
        for v in vs:
            v.attach_grad()
        with mx.autograd.record():
            outs = net(*vs)
        heads = [RNG.standard_normal(o.shape).astype(np.float32) for o in outs]
        mx.autograd.backward(list(outs), [nd.array(h) for h in heads])
        geo = [((3,), (2,), (1,), "valid", 2.0), ((3, 3), (2, 2), (1, 1), "full", 1.0)]
        geo.append(((2, 2, 2), (2, 2, 2), (0, 0, 0), "valid", 1.0))
        for x, v, h, (k, s, p, conv, scale) in zip(xs, vs, heads, geo, strict=True):
            expect = np_max_pool_grad(x, scale * h.astype(np.float64), k, s, p, conv)
            np.testing.assert_allclose(v.grad.asnumpy(), expect, rtol=1e-6, atol=1e-6)


def test_max_pool_global_ties():
    x = RNG.integers(0, 2, (2, 3, 4, 5)).astype(np.float32)
    head = RNG.standard_normal((2, 3, 1, 1)).astype(np.float32)
    _, grad = eager_grad(x, head, kernel=(1, 1), global_pool=True)
    expect = np_max_pool_grad(x, head.astype(np.float64), (4, 5), (1, 1), (0, 0), "valid")
    np.testing.assert_allclose(grad, expect, rtol=1e-6, atol=1e-6)


def test_max_pool_second_order():
    """create_graph through max pooling equals JAX's grad of grad (input without ties)."""
    shape, kernel, stride, pad = (1, 2, 6, 6), (3, 3), (2, 2), (1, 1)
    x = RNG.permutation(math.prod(shape)).reshape(shape).astype(np.float32) / 11.0
    w = RNG.standard_normal(shape).astype(np.float32)

    def f(v):
        return jnp.sum(jax_max_pool(v, kernel, stride, pad, "valid") ** 3)

    expect = jax.grad(lambda v: jnp.sum(jax.grad(f)(v) * w))(jnp.asarray(x))
    v = nd.array(x)
    v.attach_grad()
    with mx.autograd.record():
        y = (nd.Pooling(v, kernel=kernel, stride=stride, pad=pad, pool_type="max") ** 3).sum()
        (g,) = mx.autograd.grad(y, [v], create_graph=True, retain_graph=True)
        z = (g * nd.array(w)).sum()
    z.backward()
    np.testing.assert_allclose(g.asnumpy(), np.asarray(jax.grad(f)(jnp.asarray(x))), rtol=1e-5)
    np.testing.assert_allclose(v.grad.asnumpy(), np.asarray(expect), rtol=1e-5, atol=1e-6)


def test_max_pool_nan_window():
    """A window holding a NaN outputs NaN and gives its gradient to its first NaN."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    x[0, 0, 1, 0] = x[0, 0, 1, 1] = np.nan
    out, grad = eager_grad(x, np.ones((1, 1, 2, 2), np.float32), kernel=(2, 2), stride=(2, 2))
    assert np.isnan(out[0, 0, 0, 0]) and not np.isnan(out[0, 0, 1:, 1:]).any()
    expect = np.zeros((4, 4), np.float32)
    expect[1, 0] = expect[1, 3] = expect[3, 1] = expect[3, 3] = 1.0
    np.testing.assert_array_equal(grad[0, 0], expect)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_max_pool_grad_dtypes(dtype):
    x = RNG.integers(0, 3, (1, 2, 5, 5)).astype(dtype)
    head = RNG.standard_normal((1, 2, 3, 3)).astype(dtype)
    v = nd.array(x, dtype=dtype)
    v.attach_grad()
    with mx.autograd.record():
        y = nd.Pooling(v, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")
    y.backward(nd.array(head, dtype=dtype))
    assert v.grad.dtype == np.dtype(dtype)
    expect = np_max_pool_grad(
        x.astype(np.float64), head.astype(np.float64), (3, 3), (2, 2), (1, 1), "valid"
    )
    np.testing.assert_allclose(v.grad.asnumpy().astype(np.float64), expect, rtol=1e-3)
