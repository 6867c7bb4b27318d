"""slice (crop), slice_axis, slice_like, broadcast_to, broadcast_like, broadcast_axis,
Cast and diag vs NumPy references."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import AttrError, MXNetError, ShapeError

nd = mx.nd
RNG = np.random.RandomState(4)


def grad_of(fn, x, head):
    a = nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = fn(a)
    y.backward(nd.array(head))
    return a.grad.asnumpy()


SLICES = [
    ((0, 1), (2, 3), ()),
    ((None, None, 1), (None, None, None), (None, -1, 2)),
    ((1, -1), (None, 0), (1, -1)),
    ((None, None, None), (None, None, None), (-1, -1, -1)),
    ((0,), (5,), ()),
    ((1,), (1,), ()),
    ((-5,), (None,), ()),
    ("(0, None)", "(1, None)", "(None, 2)"),
]


@pytest.mark.parametrize("begin,end,step", SLICES)
def test_slice(begin, end, step):
    x = RNG.randn(2, 3, 4)
    b, e = (eval(v) if isinstance(v, str) else v for v in (begin, end))
    s = (eval(step) if isinstance(step, str) else step) or (None,) * len(b)
    key = tuple(slice(*t) for t in zip(b, e, s, strict=False))
    ref = x[key]
    out = nd.slice(nd.array(x), begin=begin, end=end, step=step)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)
    np.testing.assert_allclose(
        nd.crop(nd.array(x), begin=begin, end=end, step=step).asnumpy(), ref, rtol=1e-6
    )
    if ref.size:
        head = RNG.randn(*ref.shape)
        expect = np.zeros_like(x)
        expect[key] = head
        np.testing.assert_allclose(
            grad_of(lambda a: nd.slice(a, begin=begin, end=end, step=step), x, head), expect
        )


def test_slice_errors():
    x = nd.ones((2, 3, 4))
    with pytest.raises(ShapeError):
        nd.slice(x, begin=(0, 1), end=(2,))
    with pytest.raises(ShapeError):
        nd.slice(x, begin=(0,), end=(2,), step=(0,))
    with pytest.raises(AttrError):
        nd.slice(x, begin=(0, "a"), end=(1, 2))
    with pytest.raises(AttrError):
        nd.slice(x, end=(1,))


@pytest.mark.parametrize("axis,begin,end", [(1, 1, None), (-1, -3, -1), (0, 0, 1), (2, 1, 4)])
def test_slice_axis(axis, begin, end):
    x = RNG.randn(2, 3, 4)
    key = [slice(None)] * 3
    key[axis] = slice(begin, end)
    ref = x[tuple(key)]
    out = nd.slice_axis(nd.array(x), axis=axis, begin=begin, end=end)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)
    head = RNG.randn(*ref.shape)
    expect = np.zeros_like(x)
    expect[tuple(key)] = head
    np.testing.assert_allclose(
        grad_of(lambda a: nd.slice_axis(a, axis=axis, begin=begin, end=end), x, head), expect
    )


def test_slice_axis_errors():
    with pytest.raises(ShapeError):
        nd.slice_axis(nd.ones((2, 3)), axis=1, begin=0, end=5)
    with pytest.raises(ShapeError):
        nd.slice_axis(nd.ones((2, 3)), axis=1, begin=2, end=1)


@pytest.mark.parametrize(
    "like,axes,expect",
    [((1, 2, 3), (), (1, 2, 3)), ((1, 2, 3), (0, -1), (1, 3, 3)), ((1, 2), (1,), (2, 2, 4))],
)
def test_slice_like(like, axes, expect):
    x = RNG.randn(2, 3, 4)
    out = nd.slice_like(nd.array(x), nd.ones(like), axes=axes)
    ref = x[tuple(slice(0, n) for n in expect)]
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)
    with pytest.raises(ShapeError):
        nd.slice_like(nd.array(x), nd.ones((3, 2, 3)))


@pytest.mark.parametrize(
    "src,shape,expect",
    [((1, 3, 1), (2, 0, 4), (2, 3, 4)), ((2, 1), (2, 5), (2, 5)), ((1,), (3,), (3,))],
)
def test_broadcast_to(src, shape, expect):
    x = RNG.randn(*src)
    out = nd.broadcast_to(nd.array(x), shape=shape)
    np.testing.assert_allclose(out.asnumpy(), np.broadcast_to(x, expect), rtol=1e-6)
    assert nd.array(x).broadcast_to(shape).shape == expect
    head = RNG.randn(*expect)
    g = grad_of(lambda a: nd.broadcast_to(a, shape=shape), x, head)
    axes = tuple(i for i, (s, e) in enumerate(zip(src, expect, strict=False)) if s != e)
    np.testing.assert_allclose(g, head.sum(axis=axes, keepdims=True), rtol=1e-5)
    with pytest.raises(ShapeError):
        nd.broadcast_to(nd.ones((2, 3)), shape=(4, 3))
    with pytest.raises(ShapeError):
        nd.broadcast_to(nd.ones((3,)), shape=(2, 3))


def test_broadcast_like_and_axis():
    x = RNG.randn(1, 3, 1)
    out = nd.broadcast_like(nd.array(x), nd.ones((2, 3, 4)))
    np.testing.assert_allclose(out.asnumpy(), np.broadcast_to(x, (2, 3, 4)), rtol=1e-6)
    out = nd.broadcast_like(nd.array(x), nd.ones((5, 6)), lhs_axes=(0,), rhs_axes=(1,))
    np.testing.assert_allclose(out.asnumpy(), np.broadcast_to(x, (6, 3, 1)), rtol=1e-6)
    for fn in (nd.broadcast_axis, nd.broadcast_axes):
        out = fn(nd.array(x), axis=(0, 2), size=(2, 4))
        np.testing.assert_allclose(out.asnumpy(), np.broadcast_to(x, (2, 3, 4)), rtol=1e-6)
    assert nd.broadcast_axis(nd.array(x), axis="2", size="4").shape == (1, 3, 4)
    head = RNG.randn(2, 3, 4)
    g = grad_of(lambda a: nd.broadcast_axis(a, axis=(0, 2), size=(2, 4)), x, head)
    np.testing.assert_allclose(g, head.sum(axis=(0, 2), keepdims=True), rtol=1e-5)
    with pytest.raises(ShapeError):
        nd.broadcast_axis(nd.ones((2, 3)), axis=1, size=3)
    with pytest.raises(ShapeError):
        nd.broadcast_like(nd.ones((2, 3)), nd.ones((4, 3)))
    with pytest.raises(ShapeError, match="empty"):  # MXNet refuses empty axis tuples too
        nd.broadcast_like(nd.ones((1, 3)), nd.ones((4, 3)), lhs_axes=(), rhs_axes=())


@pytest.mark.parametrize(
    "dtype", ["float16", "float32", "int32", "uint8", "int8", "bool", np.float16]
)
def test_cast(dtype):
    x = np.array([1.7, -1.7, 0.0, 100.2], np.float32)
    out = nd.Cast(nd.array(x), dtype=dtype)
    ref = x.astype(np.int32).astype(dtype) if np.dtype(dtype).kind in "iu" else x.astype(dtype)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out.asnumpy(), ref)
    assert nd.cast(nd.array(x), dtype=dtype).dtype == np.dtype(dtype)


def test_cast_wraps_like_mxnet_and_grad():
    # MXNet 1.9.1 printed [1, 255, 44] for Cast([1.7, -1.7, 300], uint8)
    out = nd.Cast(nd.array([1.7, -1.7, 300]), dtype="uint8")
    np.testing.assert_array_equal(out.asnumpy(), [1, 255, 44])
    x = RNG.randn(3, 2).astype(np.float32)
    g = grad_of(lambda a: nd.Cast(nd.Cast(a, dtype="float16"), dtype="float32"), x, np.ones((3, 2)))
    np.testing.assert_allclose(g, np.ones((3, 2)))
    with pytest.raises(AttrError):
        nd.Cast(nd.array(x), dtype="complex64")


@pytest.mark.parametrize(
    "shape,k,axis1,axis2",
    [
        ((3, 4), 0, 0, 1),
        ((3, 4), 1, 0, 1),
        ((3, 4), -2, 0, 1),
        ((3,), 0, 0, 1),
        ((2,), -1, 0, 1),
        ((2, 3, 4), 0, 0, 1),
        ((2, 3, 4), 1, 0, 2),
        ((2, 3, 4), 0, -1, 1),
    ],
)
def test_diag(shape, k, axis1, axis2):
    x = RNG.randn(*shape)
    ref = np.diag(x, k) if x.ndim == 1 else np.diagonal(x, k, axis1, axis2)
    out = nd.diag(nd.array(x), k=k, axis1=axis1, axis2=axis2)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)
    head = RNG.randn(*ref.shape)
    if x.ndim == 1:
        expect = np.diagonal(head, k)
    else:
        expect = np.zeros_like(x)
        a1, a2 = axis1 % x.ndim, axis2 % x.ndim
        where = np.diagonal(np.indices(x.shape), k, a1 + 1, a2 + 1)  # positions of the diagonal
        np.add.at(expect, tuple(where), head)
    g = grad_of(lambda a: nd.diag(a, k=k, axis1=axis1, axis2=axis2), x, head)
    np.testing.assert_allclose(g, expect, rtol=1e-6)


def test_diag_errors():
    with pytest.raises(MXNetError):
        nd.diag(nd.ones((3, 4)), k=7)
    with pytest.raises(MXNetError):
        nd.diag(nd.ones((2, 3, 4)), axis1=1, axis2=1)
