"""Reductions and sorting ops vs NumPy references (MXNet 1.9.1 semantics).

Semantics checked against real MXNet 1.9.1: a full reduction returns shape (1,),
``exclude`` reduces the other axes, mean of int32 truncates, max/min gradients go to
every tied element, argmax keeps the input dtype, topk/argsort ties keep index order.
"""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import AttrError, MXNetError

nd = mx.nd
RNG = np.random.RandomState(0)


def _axes(ndim, axis, exclude):
    if axis is None:
        axes = tuple(range(ndim))
    else:
        axes = tuple(a % ndim for a in ((axis,) if isinstance(axis, int) else axis))
    if exclude:
        axes = tuple(i for i in range(ndim) if i not in axes)
    return axes


def np_reduce(fn, x, axis=None, keepdims=False, exclude=False):
    axes = _axes(x.ndim, axis, exclude)
    if not axes:
        return x
    out = np.asarray(fn(x, axis=axes, keepdims=keepdims))
    return out.reshape(1) if out.ndim == 0 else out


def numeric_grad(f, x, head, eps=1e-3):
    """d/dx sum(head * f(x)) by central differences in float64."""
    x = x.astype(np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = ((f(xp) - f(xm)) * head).sum() / (2 * eps)
    return g


def nd_grad(fn, x_np, head):
    x = nd.array(x_np)
    x.attach_grad()
    with mx.autograd.record():
        y = fn(x)
    y.backward(nd.array(head))
    return x.grad.asnumpy()


REF = {
    "sum": np.sum,
    "mean": np.mean,
    "max": np.max,
    "min": np.min,
    "prod": np.prod,
    "nansum": np.nansum,
    "nanprod": np.nanprod,
}
CASES = [
    ((5,), None, False, False),
    ((2, 3, 4), 1, False, False),
    ((2, 3, 4), (0, 2), True, False),
    ((2, 3, 4), -1, False, True),
    ((2, 3, 4), (0, 1), True, True),
    ((3, 4), None, True, False),
    ((2, 3, 4), (0, 1, 2), False, True),
]


@pytest.mark.parametrize("name", list(REF))
@pytest.mark.parametrize("shape,axis,keepdims,exclude", CASES)
def test_reduce_forward(name, shape, axis, keepdims, exclude):
    x = RNG.uniform(0.5, 1.5, shape).astype(np.float32)
    if name.startswith("nan"):
        x.flat[::3] = np.nan
    out = getattr(nd, name)(nd.array(x), axis=axis, keepdims=keepdims, exclude=exclude)
    ref = np_reduce(REF[name], x, axis, keepdims, exclude)
    assert out.shape == ref.shape and out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5)


def test_reduce_string_attrs_aliases_and_fluent():
    x = RNG.randn(2, 3, 4).astype(np.float32)
    np.testing.assert_allclose(
        nd.sum(nd.array(x), axis="(0, 2)", keepdims="True").asnumpy(),
        x.sum(axis=(0, 2), keepdims=True),
        rtol=1e-5,
    )
    np.testing.assert_allclose(nd.sum(nd.array(x), axis="()").asnumpy(), [x.sum()], rtol=1e-5)
    np.testing.assert_allclose(nd.sum_axis(nd.array(x), axis=1).asnumpy(), x.sum(1), rtol=1e-5)
    np.testing.assert_allclose(nd.max_axis(nd.array(x), axis=0).asnumpy(), x.max(0))
    np.testing.assert_allclose(nd.min_axis(nd.array(x), axis=2).asnumpy(), x.min(2))
    np.testing.assert_allclose(nd.array(x).mean(axis=-1).asnumpy(), x.mean(-1), rtol=1e-5)


def test_reduce_int_dtypes():
    xi = np.array([[-1, -2], [-2, 0], [7, 4]], np.int32)
    out = nd.mean(nd.array(xi, dtype="int32"), axis=1)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.asnumpy(), np.trunc(xi.sum(1) / 2).astype(np.int32))
    s = nd.sum(nd.array([200, 100], dtype="uint8"))
    assert s.dtype == np.uint8 and s.asnumpy()[0] == (300 % 256)


def test_reduce_errors():
    x = nd.ones((2, 3))
    with pytest.raises(AttrError):
        nd.sum(x, axes=1)
    with pytest.raises(MXNetError):
        nd.sum(x, axis=2)
    with pytest.raises(MXNetError):
        nd.sum(x, axis=(1, 1))


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "nansum"])
@pytest.mark.parametrize(
    "shape,axis,keepdims", [((4,), None, False), ((2, 3), 1, True), ((2, 3, 2), (0, 2), False)]
)
def test_reduce_grad(name, shape, axis, keepdims):
    x = RNG.uniform(0.5, 1.5, shape)
    ref = np_reduce(REF[name], x, axis, keepdims)
    head = RNG.randn(*ref.shape)
    g = nd_grad(lambda a: getattr(nd, name)(a, axis=axis, keepdims=keepdims), x, head)
    num = numeric_grad(lambda v: np_reduce(REF[name], v, axis, keepdims), x, head)
    np.testing.assert_allclose(g, num, rtol=1e-2, atol=1e-3)


def test_nan_reduce_grad():
    x = np.array([1.0, np.nan, 3.0, 2.0])
    np.testing.assert_allclose(nd_grad(nd.nansum, x, np.ones(1)), [1, 0, 1, 1])
    np.testing.assert_allclose(nd_grad(nd.nanprod, x, np.ones(1)), [6, 0, 2, 3], rtol=1e-6)


@pytest.mark.parametrize("name", ["max", "min"])
def test_extreme_grad_ties(name):
    x = np.array([[1.0, 5.0, 5.0], [2.0, 2.0, 1.0]])
    head = np.array([2.0, 3.0])
    ref = REF[name](x, axis=1, keepdims=True)
    expect = (x == ref) * head[:, None]  # MXNet: every tied element gets the gradient
    np.testing.assert_allclose(nd_grad(lambda a: getattr(nd, name)(a, axis=1), x, head), expect)


@pytest.mark.parametrize("ord_", [1, 2])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), ((1, 2), True), (-1, True)])
def test_norm(ord_, axis, keepdims):
    x = RNG.randn(2, 3, 4)
    f = (
        (lambda v, axis, keepdims: np.abs(v).sum(axis=axis, keepdims=keepdims))
        if ord_ == 1
        else (lambda v, axis, keepdims: np.sqrt((v * v).sum(axis=axis, keepdims=keepdims)))
    )
    ref = np_reduce(f, x, axis, keepdims)
    out = nd.norm(nd.array(x), ord=ord_, axis=axis, keepdims=keepdims)
    assert out.shape == ref.shape
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5)
    head = RNG.randn(*ref.shape)
    g = nd_grad(lambda a: nd.norm(a, ord=ord_, axis=axis, keepdims=keepdims), x, head)
    np.testing.assert_allclose(
        g, numeric_grad(lambda v: np_reduce(f, v, axis, keepdims), x, head), rtol=1e-2, atol=1e-3
    )


def test_norm_out_dtype_and_errors():
    x = RNG.randn(3, 4).astype(np.float32)
    out = nd.norm(nd.array(x), out_dtype="float16")
    assert out.dtype == np.float16 and out.shape == (1,)
    np.testing.assert_allclose(out.asnumpy(), [np.sqrt((x * x).sum())], rtol=2e-3)
    with pytest.raises(MXNetError):
        nd.norm(nd.array(x), ord=3)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize(
    "axis,keepdims", [(None, False), (None, True), (0, False), (-1, True), (1, False)]
)
def test_argmax_argmin(name, axis, keepdims):
    x = RNG.randn(2, 3, 4).astype(np.float32)
    x[0, 1, :2] = x.max() + 1 if name == "argmax" else x.min() - 1  # a tie: first index wins
    fn = np.argmax if name == "argmax" else np.argmin
    if axis is None:
        ref = np.array([fn(x)]).reshape((1, 1, 1) if keepdims else (1,))
    else:
        ref = fn(x, axis=axis)
        ref = np.expand_dims(ref, axis) if keepdims else ref
    out = getattr(nd, name)(nd.array(x), axis=axis, keepdims=keepdims)
    assert out.dtype == np.float32 and out.shape == ref.shape
    np.testing.assert_array_equal(out.asnumpy(), ref)
    xi = nd.array(x * 10, dtype="int32")
    assert getattr(nd, name)(xi, axis=1).dtype == np.int32


def test_argmax_channel():
    x = RNG.randn(2, 3, 4).astype(np.float32)
    out = nd.argmax_channel(nd.array(x))
    assert out.shape == (2, 4) and out.dtype == np.float32
    np.testing.assert_array_equal(out.asnumpy(), x.argmax(1))
