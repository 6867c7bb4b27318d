"""flip/reverse, swapaxes, reshape_like, shape_array, size_array, depth_to_space,
space_to_depth vs NumPy references."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import MXNetError, ShapeError

nd = mx.nd
RNG = np.random.RandomState(3)


def grad_of(fn, x, head):
    a = nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = fn(a)
    y.backward(nd.array(head))
    return a.grad.asnumpy()


@pytest.mark.parametrize("axis", [1, (0, 2), -1, (), "(0, 1)"])
def test_flip(axis):
    x = RNG.randn(2, 3, 4)
    ax = eval(axis) if isinstance(axis, str) else axis
    ref = np.flip(x, ax) if ax != () else x
    np.testing.assert_allclose(nd.flip(nd.array(x), axis=axis).asnumpy(), ref, rtol=1e-6)
    np.testing.assert_allclose(nd.reverse(nd.array(x), axis=axis).asnumpy(), ref, rtol=1e-6)
    head = RNG.randn(*x.shape)
    np.testing.assert_allclose(
        grad_of(lambda a: nd.flip(a, axis=axis), x, head),
        np.flip(head, ax) if ax != () else head,
        rtol=1e-6,
    )


@pytest.mark.parametrize("dim1,dim2", [(0, 2), (1, 1), (-1, 0), (0, 0)])
def test_swapaxes(dim1, dim2):
    x = RNG.randn(2, 3, 4)
    ref = np.swapaxes(x, dim1, dim2)
    np.testing.assert_allclose(
        nd.swapaxes(nd.array(x), dim1=dim1, dim2=dim2).asnumpy(), ref, rtol=1e-6
    )
    np.testing.assert_allclose(
        nd.SwapAxis(nd.array(x), dim1=dim1, dim2=dim2).asnumpy(), ref, rtol=1e-6
    )
    with pytest.raises(MXNetError):
        nd.swapaxes(nd.array(x), dim1=0, dim2=3)


@pytest.mark.parametrize(
    "lshape,rshape,kw,expect",
    [
        ((2, 3, 4), (4, 6), {}, (4, 6)),
        ((30, 7), (15, 2, 4), dict(lhs_begin=0, lhs_end=1, rhs_begin=0, rhs_end=2), (15, 2, 7)),
        ((2, 3, 4), (6,), dict(lhs_begin=-3, lhs_end=-1), (6, 4)),
        ((2, 3, 4), (1, 12), dict(lhs_begin=1, rhs_begin=1), (2, 12)),
    ],
)
def test_reshape_like(lshape, rshape, kw, expect):
    x = RNG.randn(*lshape)
    out = nd.reshape_like(nd.array(x), nd.ones(rshape), **kw)
    assert out.shape == expect
    np.testing.assert_allclose(out.asnumpy(), x.reshape(expect), rtol=1e-6)


def test_reshape_like_error_and_grad():
    with pytest.raises(ShapeError):
        nd.reshape_like(nd.ones((2, 3)), nd.ones((4, 2)))
    x = RNG.randn(2, 3, 4)
    head = RNG.randn(4, 6)
    a, b = nd.array(x), nd.ones((4, 6))
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = nd.reshape_like(a, b)
    y.backward(nd.array(head))
    np.testing.assert_allclose(a.grad.asnumpy(), head.reshape(2, 3, 4), rtol=1e-6)
    np.testing.assert_array_equal(b.grad.asnumpy(), np.zeros((4, 6)))


@pytest.mark.parametrize("shape", [(2, 3, 4), (5,), (1, 1)])
def test_shape_size_array(shape):
    x = nd.ones(shape)
    s, n = nd.shape_array(x), nd.size_array(x)
    assert s.dtype == np.int64 and n.dtype == np.int64  # as MXNet
    np.testing.assert_array_equal(s.asnumpy(), np.array(shape))
    np.testing.assert_array_equal(n.asnumpy(), [int(np.prod(shape))])
    np.testing.assert_array_equal(x.shape_array().asnumpy(), np.array(shape))


def np_depth_to_space(x, b):
    n, c, h, w = x.shape
    cc = c // (b * b)
    out = np.zeros((n, cc, h * b, w * b), x.dtype)
    for i in range(b):
        for j in range(b):
            out[:, :, i::b, j::b] = x[:, (i * b + j) * cc : (i * b + j + 1) * cc]
    return out


def np_space_to_depth(x, b):
    n, c, h, w = x.shape
    out = np.zeros((n, c * b * b, h // b, w // b), x.dtype)
    for i in range(b):
        for j in range(b):
            out[:, (i * b + j) * c : (i * b + j + 1) * c] = x[:, :, i::b, j::b]
    return out


@pytest.mark.parametrize("shape,b", [((1, 8, 2, 2), 2), ((2, 9, 2, 3), 3), ((2, 4, 1, 1), 1)])
def test_depth_to_space(shape, b):
    x = RNG.randn(*shape).astype(np.float32)
    out = nd.depth_to_space(nd.array(x), block_size=b)
    np.testing.assert_array_equal(out.asnumpy(), np_depth_to_space(x, b))
    back = nd.space_to_depth(out, block_size=b)
    np.testing.assert_array_equal(back.asnumpy(), x)
    head = RNG.randn(*out.shape)
    np.testing.assert_allclose(
        grad_of(lambda a: nd.depth_to_space(a, block_size=b), x, head),
        np_space_to_depth(head, b),
        rtol=1e-6,
    )


def test_depth_to_space_mxnet_values():
    # first row printed by MXNet 1.9.1 for arange(32).reshape(1, 8, 2, 2), block 2
    out = nd.depth_to_space(nd.arange(32).reshape((1, 8, 2, 2)), block_size=2)
    np.testing.assert_array_equal(out.asnumpy()[0, 0, 0], [0, 8, 1, 9])


@pytest.mark.parametrize("shape,b", [((1, 2, 4, 4), 2), ((2, 1, 6, 3), 3)])
def test_space_to_depth(shape, b):
    x = RNG.randn(*shape).astype(np.float32)
    out = nd.space_to_depth(nd.array(x), block_size=b)
    np.testing.assert_array_equal(out.asnumpy(), np_space_to_depth(x, b))


def test_depth_space_errors():
    with pytest.raises(ShapeError):
        nd.depth_to_space(nd.ones((1, 6, 2, 2)), block_size=2)
    with pytest.raises(ShapeError):
        nd.space_to_depth(nd.ones((1, 2, 3, 4)), block_size=2)
    with pytest.raises(ShapeError):
        nd.depth_to_space(nd.ones((8, 2, 2)), block_size=2)
