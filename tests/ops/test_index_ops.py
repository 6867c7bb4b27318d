"""Indexing ops vs NumPy references: pick, one_hot, take, batch_take, gather_nd,
scatter_nd, _contrib_arange_like. Float indices are truncated (as MXNet)."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import AttrError, MXNetError, ShapeError

nd = mx.nd
RNG = np.random.RandomState(6)


def grads(fn, arrays, head, diff=(0,)):
    arrs = [nd.array(a) for a in arrays]
    for i in diff:
        arrs[i].attach_grad()
    with mx.autograd.record():
        y = fn(*arrs)
    y.backward(nd.array(head))
    return [arrs[i].grad.asnumpy() for i in diff]


def fix(idx, n, mode):
    idx = np.trunc(idx).astype(np.int64)
    return np.mod(idx, n) if mode == "wrap" else np.clip(idx, 0, n - 1)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_pick(axis, keepdims, mode):
    x = RNG.randn(2, 3, 4)
    ax = axis % 3
    ishape = x.shape[:ax] + x.shape[ax + 1 :]
    idx = RNG.randint(-2, x.shape[ax] + 2, ishape).astype(np.float32) + 0.3
    ii = np.expand_dims(fix(idx, x.shape[ax], mode), ax)
    ref = np.take_along_axis(x, ii, axis=ax)
    ref = ref if keepdims else np.squeeze(ref, ax)
    out = nd.pick(nd.array(x), nd.array(idx), axis=axis, keepdims=keepdims, mode=mode)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)
    head = RNG.randn(*ref.shape)
    expect = np.zeros_like(x)
    np.put_along_axis(expect, ii, head.reshape(ii.shape), axis=ax)
    (g,) = grads(
        lambda a, i: nd.pick(a, i, axis=axis, keepdims=keepdims, mode=mode), [x, idx], head
    )
    np.testing.assert_allclose(g, expect, rtol=1e-6)


def test_pick_mxnet_values_and_errors():
    x = nd.arange(24).reshape((2, 3, 4))
    idx = nd.array([[0, 1, 5], [3, -1, 2]])
    # values printed by MXNet 1.9.1
    np.testing.assert_array_equal(nd.pick(x, idx).asnumpy().ravel(), [0, 5, 11, 15, 16, 22])
    np.testing.assert_array_equal(
        nd.pick(x, idx, mode="wrap").asnumpy().ravel(), [0, 5, 9, 15, 19, 22]
    )
    np.testing.assert_array_equal(x.pick(idx, axis=2).asnumpy().ravel(), [0, 5, 11, 15, 16, 22])
    with pytest.raises(ShapeError):
        nd.pick(x, nd.array([1, 2]))
    with pytest.raises(AttrError):
        nd.pick(x, idx, mode="raise")


@pytest.mark.parametrize("shape", [(5,), (2, 3)])
@pytest.mark.parametrize(
    "depth,on,off,dtype", [(4, 1, 0, "float32"), (3, 5, -1, "int32"), (6, 2.5, 0.5, "float16")]
)
def test_one_hot(shape, depth, on, off, dtype):
    idx = RNG.randint(-1, depth + 1, shape).astype(np.float32)
    ref = np.where(idx[..., None] == np.arange(depth), on, off).astype(dtype)
    out = nd.one_hot(nd.array(idx), depth=depth, on_value=on, off_value=off, dtype=dtype)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out.asnumpy(), ref)


def test_one_hot_truncates_and_fluent():
    out = nd.array([1.7, -0.5]).one_hot(depth=3)
    np.testing.assert_array_equal(out.asnumpy(), [[0, 1, 0], [1, 0, 0]])  # as MXNet 1.9.1


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("mode", ["clip", "wrap", "raise"])
@pytest.mark.parametrize("ishape", [(3,), (2, 2)])
def test_take(axis, mode, ishape):
    a = RNG.randn(3, 4, 2)
    n = a.shape[axis]
    idx = RNG.randint(-n - 1, n + 2, ishape).astype(np.float32)
    if mode == "raise":  # MXNet raises on an index outside [0, n); in range it gathers
        bad = idx.copy()
        bad.flat[0] = n
        with pytest.raises(IndexError, match=f"index {n} is out of bounds"):
            nd.take(nd.array(a), nd.array(bad), axis=axis, mode=mode)
        idx = RNG.randint(0, n, ishape).astype(np.float32)
    ii = fix(idx, n, "wrap" if mode == "wrap" else "clip")
    ref = np.take(a, ii, axis=axis)
    out = nd.take(nd.array(a), nd.array(idx), axis=axis, mode=mode)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)
    head = RNG.randn(*ref.shape)
    expect = np.zeros_like(a)
    ax = axis % 3
    for pos in np.ndindex(ishape):  # scatter-add the head slices back
        sl = [slice(None)] * 3
        sl[ax] = ii[pos]
        expect[tuple(sl)] += head[(slice(None),) * ax + pos]
    (g,) = grads(lambda x, i: nd.take(x, i, axis=axis, mode=mode), [a, idx], head)
    np.testing.assert_allclose(g, expect, rtol=1e-5, atol=1e-6)


def test_batch_take():
    a = RNG.randn(4, 3)
    idx = np.array([0, 2, 5, -1], np.int32)
    ref = a[np.arange(4), np.clip(idx, 0, 2)]
    np.testing.assert_allclose(
        nd.batch_take(nd.array(a), nd.array(idx, dtype="int32")).asnumpy(), ref, rtol=1e-6
    )
    with pytest.raises(ShapeError):
        nd.batch_take(nd.ones((2, 3, 4)), nd.array([0, 1], dtype="int32"))


@pytest.mark.parametrize(
    "dshape,ishape",
    [((2, 3, 4), (2, 5)), ((2, 3, 4), (3, 2, 2)), ((2, 3, 4), (1, 3)), ((5,), (1, 4))],
)
def test_gather_nd(dshape, ishape):
    x = RNG.randn(*dshape)
    m = ishape[0]
    idx = np.stack([RNG.randint(-dshape[i], dshape[i], ishape[1:]) for i in range(m)])
    ref = x[tuple(idx)]
    out = nd.gather_nd(nd.array(x), nd.array(idx))
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)
    head = RNG.randn(*ref.shape)
    expect = np.zeros_like(x)
    np.add.at(expect, tuple(idx), head)
    (g,) = grads(nd.gather_nd, [x, idx.astype(np.float32)], head)
    np.testing.assert_allclose(g, expect, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape,ishape", [((2, 2), (2, 3)), ((3, 2), (1, 2)), ((4, 3, 2), (2, 3))])
def test_scatter_nd(shape, ishape):
    m = ishape[0]
    # distinct target positions so the result does not depend on write order
    flat = RNG.permutation(int(np.prod(shape[:m])))[: ishape[1]]
    idx = np.stack(np.unravel_index(flat, shape[:m]))
    data = RNG.randn(*(ishape[1:] + shape[m:]))
    ref = np.zeros(shape)
    ref[tuple(idx)] = data
    out = nd.scatter_nd(nd.array(data), nd.array(idx), shape=shape)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)
    head = RNG.randn(*shape)
    (g,) = grads(lambda d, i: nd.scatter_nd(d, i, shape=shape), [data, idx], head)
    np.testing.assert_allclose(g, head[tuple(idx)], rtol=1e-6)
    with pytest.raises(ShapeError):
        nd.scatter_nd(nd.ones((5,)), nd.array(idx), shape=shape)


def test_scatter_nd_negative_dropped():
    # MXNet 1.9.1 prints [2, 0] here: the negative index is not written
    out = nd.scatter_nd(nd.array([1, 2]), nd.array([[-1, 0]]), shape=(2,))
    np.testing.assert_array_equal(out.asnumpy(), [2, 0])


@pytest.mark.parametrize(
    "kw",
    [
        {},
        dict(axis=-1, start=1, step=2, repeat=2),
        dict(axis=1, repeat=2),
        dict(start=-1.5, step=0.5, repeat=3),
    ],
)
def test_arange_like(kw):
    x = nd.ones((2, 3, 4))
    out = nd.arange_like(x, **kw)
    shape = x.shape if kw.get("axis") is None else (x.shape[kw["axis"]],)
    n = int(np.prod(shape))
    ref = kw.get("start", 0) + (np.arange(n) // kw.get("repeat", 1)) * kw.get("step", 1)
    np.testing.assert_allclose(out.asnumpy(), ref.reshape(shape), rtol=1e-6)
    assert nd._contrib_arange_like(x, **kw).shape == shape
    with pytest.raises(MXNetError):
        nd.arange_like(x, axis=3)
