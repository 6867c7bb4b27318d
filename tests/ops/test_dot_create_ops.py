"""dot (MXNet N-d semantics), batch_dot and the input-less creation ops
(_zeros, _ones, _full, _arange, _eye) vs NumPy references."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import AttrError, MXNetError, ShapeError

nd = mx.nd
RNG = np.random.RandomState(5)


def np_dot(a, b, ta, tb):
    """MXNet dot: transpose_a contracts lhs's first axis, transpose_b rhs's last axis."""
    if a.ndim == 1 and b.ndim == 1:
        return np.array([a @ b])
    la = 0 if ta else a.ndim - 1
    rb = b.ndim - 1 if tb else 0
    return np.tensordot(a, b, axes=([la], [rb]))


DOT_CASES = [
    ((2, 3), (3, 4), False, False),
    ((2, 3, 4), (4, 5), False, False),
    ((2, 3, 4), (4, 5, 2), False, False),
    ((2, 3, 4), (2, 5), True, False),
    ((2, 3, 4), (5, 4), False, True),
    ((2, 3, 4), (6, 5, 4), False, True),
    ((3, 2), (4, 3), True, True),
    ((3,), (3,), False, False),
    ((3,), (3, 2), False, False),
    ((2, 3), (3,), False, False),
    ((2, 3), (3,), False, True),
]


@pytest.mark.parametrize("ls,rs,ta,tb", DOT_CASES)
def test_dot(ls, rs, ta, tb):
    a, b = RNG.randn(*ls), RNG.randn(*rs)
    ref = np_dot(a, b, ta, tb)
    out = nd.dot(nd.array(a), nd.array(b), transpose_a=ta, transpose_b=tb)
    assert out.shape == ref.shape
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    head = RNG.randn(*ref.shape)
    x, y = nd.array(a), nd.array(b)
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        z = nd.dot(x, y, transpose_a=ta, transpose_b=tb)
    z.backward(nd.array(head))
    eps = 1e-4
    for arr, grad, which in ((a, x.grad.asnumpy(), 0), (b, y.grad.asnumpy(), 1)):
        num = np.zeros_like(arr)
        for i in np.ndindex(arr.shape):
            p, m = arr.copy(), arr.copy()
            p[i] += eps
            m[i] -= eps
            fp = np_dot(p, b, ta, tb) if which == 0 else np_dot(a, p, ta, tb)
            fm = np_dot(m, b, ta, tb) if which == 0 else np_dot(a, m, ta, tb)
            num[i] = ((fp - fm) * head).sum() / (2 * eps)
        np.testing.assert_allclose(grad, num, rtol=1e-3, atol=1e-4)


def test_dot_string_attrs_matmul_and_errors():
    a, b = RNG.randn(3, 2), RNG.randn(4, 3)
    out = nd.dot(nd.array(a), nd.array(b), transpose_a="True", transpose_b="1")
    np.testing.assert_allclose(out.asnumpy(), a.T @ b.T, rtol=1e-5)
    np.testing.assert_allclose((nd.array(a.T) @ nd.array(b.T)).asnumpy(), a.T @ b.T, rtol=1e-5)
    with pytest.raises(ShapeError):
        nd.dot(nd.ones((2, 3, 4)), nd.ones((3, 5)))
    with pytest.raises(ShapeError):
        nd.dot(nd.ones((3,)), nd.ones((3,)), transpose_a=True)
    with pytest.raises(AttrError):
        nd.dot(nd.ones((2, 3)), nd.ones((3, 2)), transpose=True)
    with pytest.raises(AttrError):
        nd.dot(nd.ones((2, 3)), nd.ones((3, 2)), forward_stype="dense")


@pytest.mark.parametrize(
    "ls,rs,ta,tb",
    [
        ((2, 3, 4), (2, 4, 5), False, False),
        ((2, 4, 3), (2, 5, 4), True, True),
        ((2, 4, 3), (2, 4, 5), True, False),
        ((2, 2, 3, 4), (2, 2, 4, 5), False, False),
    ],
)
def test_batch_dot(ls, rs, ta, tb):
    a, b = RNG.randn(*ls), RNG.randn(*rs)
    aa = np.swapaxes(a, -1, -2) if ta else a
    bb = np.swapaxes(b, -1, -2) if tb else b
    ref = np.matmul(aa, bb)
    out = nd.batch_dot(nd.array(a), nd.array(b), transpose_a=ta, transpose_b=tb)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    head = RNG.randn(*ref.shape)
    x, y = nd.array(a), nd.array(b)
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        z = nd.batch_dot(x, y, transpose_a=ta, transpose_b=tb)
    z.backward(nd.array(head))
    ga = np.matmul(head, np.swapaxes(bb, -1, -2))  # analytic gradients of A @ B
    gb = np.matmul(np.swapaxes(aa, -1, -2), head)
    np.testing.assert_allclose(
        x.grad.asnumpy(), np.swapaxes(ga, -1, -2) if ta else ga, rtol=1e-4, atol=1e-5
    )
    np.testing.assert_allclose(
        y.grad.asnumpy(), np.swapaxes(gb, -1, -2) if tb else gb, rtol=1e-4, atol=1e-5
    )


def test_batch_dot_errors():
    with pytest.raises(ShapeError):
        nd.batch_dot(nd.ones((2, 3, 4)), nd.ones((3, 4, 5)))
    with pytest.raises(ShapeError):
        nd.batch_dot(nd.ones((2, 3, 4)), nd.ones((2, 3, 5)))


@pytest.mark.parametrize(
    "shape,dtype", [((2, 3), None), ((4,), "int32"), ((), None), ((1, 2, 1), "float16")]
)
def test_zeros_ones_full(shape, dtype):
    kw = {} if dtype is None else {"dtype": dtype}
    dt = np.dtype(dtype or "float32")
    for op, ref in (
        (nd._zeros(shape=shape, **kw), np.zeros(shape, dt)),
        (nd._ones(shape=shape, **kw), np.ones(shape, dt)),
        (nd._full(shape=shape, value=3.5, **kw), np.full(shape, 3.5).astype(dt)),
    ):
        assert op.dtype == dt and op.shape == ref.shape
        np.testing.assert_array_equal(op.asnumpy(), ref)
    assert nd._zeros(shape="(2, 3)", ctx="cpu(0)").shape == (2, 3)


@pytest.mark.parametrize(
    "kw",
    [
        dict(start=1, stop=7, step=2, repeat=2),
        dict(start=4),
        dict(start=5, stop=1, step=-1.5),
        dict(start=0, stop=1, step=0.3),
        dict(start=0.5, stop=4, step=1, dtype="int32"),
        dict(start="2", stop="3", step="0.25"),
    ],
)
def test_arange(kw):
    out = nd._arange(**kw)
    start, stop = float(kw["start"]), kw.get("stop")
    step, rep = float(kw.get("step", 1)), kw.get("repeat", 1)
    if stop is None:
        start, stop = 0.0, start
    n = int(np.ceil((float(stop) - start) / step))
    dt = np.dtype(kw.get("dtype", "float32"))
    base = dt.type(start) if dt.kind == "f" else dt.type(int(start))
    ref = np.repeat(base + np.arange(n).astype(dt) * dt.type(step), rep).astype(dt)
    assert out.dtype == dt
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)


def test_arange_errors():
    with pytest.raises(MXNetError):
        nd._arange(start=0, stop=3, step=0)
    with pytest.raises(AttrError):
        nd._arange(stop=3)


@pytest.mark.parametrize(
    "N,M,k,dtype",
    [(3, 0, 0, "float32"), (2, 3, 1, "float32"), (3, 0, -1, "int32"), (4, 2, -3, "float16")],
)
def test_eye(N, M, k, dtype):
    out = nd._eye(N=N, M=M, k=k, dtype=dtype)
    ref = np.eye(N, M or N, k, dtype=dtype)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out.asnumpy(), ref)
