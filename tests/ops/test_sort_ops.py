"""topk, sort and argsort vs NumPy references (MXNet 1.9.1 semantics: stable order
for ties in both directions, index outputs in ``dtype`` (float32 by default),
``axis=None`` flattens, ``k <= 0`` means all)."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import AttrError, MXNetError

nd = mx.nd
RNG = np.random.RandomState(1)


def np_order(x, axis, ascend):
    """Stable order; descending keeps ties in index order (as MXNet)."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    key = x if ascend else -x
    return np.argsort(key, axis=axis, kind="stable"), x, axis


def grad_of(fn, x_np, head):
    x = nd.array(x_np)
    x.attach_grad()
    with mx.autograd.record():
        y = fn(x)
    y.backward(nd.array(head))
    return x.grad.asnumpy()


SHAPES_AXES = [((6,), -1), ((2, 3, 4), -1), ((2, 3, 4), 1), ((2, 3, 4), 0), ((2, 3, 4), None)]


@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("is_ascend", [False, True])
def test_topk(shape, axis, k, is_ascend):
    x = RNG.randint(0, 4, shape).astype(np.float32)  # many ties
    order, flat, ax = np_order(x, axis, is_ascend)
    idx = np.take(order, np.arange(k), axis=ax)
    val = np.take_along_axis(flat, idx, axis=ax)
    a = nd.array(x)
    kw = dict(axis=axis, k=k, is_ascend=is_ascend)
    out_i = nd.topk(a, **kw)
    assert out_i.dtype == np.float32
    np.testing.assert_array_equal(out_i.asnumpy(), idx)
    np.testing.assert_array_equal(nd.topk(a, ret_typ="value", **kw).asnumpy(), val)
    v, i = nd.topk(a, ret_typ="both", dtype="int32", **kw)
    assert i.dtype == np.int32
    np.testing.assert_array_equal(v.asnumpy(), val)
    np.testing.assert_array_equal(i.asnumpy(), idx)
    mask = np.zeros_like(flat)
    np.put_along_axis(mask, idx, 1, axis=ax)
    np.testing.assert_array_equal(nd.topk(a, ret_typ="mask", **kw).asnumpy(), mask.reshape(shape))


def test_topk_ties_match_mxnet():
    # values printed by MXNet 1.9.1 for these inputs
    a = nd.array([1, 3, 3, 2, 5])
    np.testing.assert_array_equal(nd.topk(a, k=3).asnumpy(), [4, 1, 2])
    np.testing.assert_array_equal(nd.topk(a, k=3, is_ascend=True).asnumpy(), [0, 3, 1])
    np.testing.assert_array_equal(nd.topk(nd.array([3, 1, 3, 3]), k=4).asnumpy(), [0, 2, 3, 1])


def test_ties_in_long_rows_keep_index_order():
    # MXNet 1.9.1 on CPU sorts rows longer than 16 with libstdc++'s unstable std::sort /
    # std::partial_sort, so its order among ties there is an accident of that algorithm (for
    # this row it prints topk k=5 -> [3 6 9 12 0], argsort -> [12 24 21 0 27 18 ...]); on GPU
    # it sorts stably. gluonjax keeps ties in index order everywhere, as MXNet's GPU does.
    a = np.zeros(40, np.float32)
    a[::3] = 1
    down = np.argsort(-a, kind="stable")
    np.testing.assert_array_equal(nd.topk(nd.array(a), k=5).asnumpy(), down[:5])
    np.testing.assert_array_equal(nd.argsort(nd.array(a), is_ascend=False).asnumpy(), down)
    up = np.argsort(a, kind="stable")
    np.testing.assert_array_equal(nd.argsort(nd.array(a)).asnumpy(), up)
    np.testing.assert_array_equal(nd.topk(nd.array(a), k=7, is_ascend=True).asnumpy(), up[:7])


def test_topk_k_all_and_errors():
    x = RNG.randn(2, 5).astype(np.float32)
    np.testing.assert_array_equal(
        nd.topk(nd.array(x), k=0, ret_typ="value").asnumpy(), -np.sort(-x, axis=-1)
    )
    np.testing.assert_array_equal(
        nd.topk(nd.array(x), k="-1", ret_typ="value").asnumpy(), -np.sort(-x, axis=-1)
    )
    with pytest.raises(MXNetError):
        nd.topk(nd.array(x), k=6)
    with pytest.raises(AttrError):
        nd.topk(nd.array(x), ret_typ="values")
    with pytest.raises(AttrError):
        nd.topk(nd.array(x), kk=1)


def test_topk_grad():
    x = RNG.randn(3, 5)
    head = RNG.randn(3, 2)
    idx = np.argsort(-x, axis=1, kind="stable")[:, :2]
    expect = np.zeros_like(x)
    np.put_along_axis(expect, idx, head, axis=1)
    g = grad_of(lambda a: nd.topk(a, k=2, ret_typ="value"), x, head)
    np.testing.assert_allclose(g, expect, rtol=1e-6)


@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
@pytest.mark.parametrize("is_ascend", [True, False, "False"])
def test_sort_argsort(shape, axis, is_ascend):
    x = RNG.randint(0, 5, shape).astype(np.float32)
    asc = is_ascend is True
    order, flat, ax = np_order(x, axis, asc)
    a = nd.array(x)
    np.testing.assert_array_equal(
        nd.sort(a, axis=axis, is_ascend=is_ascend).asnumpy(),
        np.take_along_axis(flat, order, axis=ax),
    )
    out = nd.argsort(a, axis=axis, is_ascend=is_ascend)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.asnumpy(), order)
    assert nd.argsort(a, axis=axis, dtype="int32").dtype == np.int32


def test_sort_grad_and_fluent():
    x = np.array([[3.0, 1.0, 2.0], [0.5, 2.5, -1.0]])
    head = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    order = np.argsort(x, axis=1)
    expect = np.zeros_like(x)
    np.put_along_axis(expect, order, head, axis=1)  # the gradient undoes the permutation
    np.testing.assert_allclose(grad_of(lambda a: nd.sort(a, axis=1), x, head), expect)
    np.testing.assert_array_equal(nd.array(x).sort(is_ascend=False).asnumpy(), -np.sort(-x, 1))
    np.testing.assert_array_equal(nd.array(x).argsort().asnumpy(), order)
