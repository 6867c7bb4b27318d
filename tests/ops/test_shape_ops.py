"""Shape ops vs NumPy references: Reshape (special codes), transpose, expand_dims,
squeeze, Concat, stack, split, tile, repeat, flip, swapaxes, reshape_like,
shape_array, size_array, depth_to_space, space_to_depth."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import AttrError, MXNetError, ShapeError

nd = mx.nd
RNG = np.random.RandomState(2)


def grad_of(fn, xs, head):
    arrs = [nd.array(x) for x in xs]
    for a in arrs:
        a.attach_grad()
    with mx.autograd.record():
        y = fn(*arrs)
    y.backward(nd.array(head))
    return [a.grad.asnumpy() for a in arrs]


# (input shape, shape codes, reverse, output shape printed by MXNet 1.9.1)
RESHAPE_CASES = [
    ((2, 3, 4), (0, -1), False, (2, 12)),
    ((2, 3, 4), (-2,), False, (2, 3, 4)),
    ((2, 3, 4), (-3, -2), False, (6, 4)),
    ((2, 3, 4), (2, -4, -1, 3, 4), False, (2, 1, 3, 4)),
    ((2, 3, 4), (-4, 1, 2, -2), False, (1, 2, 3, 4)),
    ((2, 3, 4), (-1, 0), True, (6, 4)),
    ((2, 3, 4), (-1, 0), False, (8, 3)),
    ((2, 3, 4), (-3, 4), True, (6, 4)),
    ((2, 3, 4), (0, -4, 3, -1, -2), False, (2, 3, 1, 4)),
    ((2, 3, 4), (2, -1, 0), False, (2, 3, 4)),
    ((10, 5, 4), (-1, 0), True, (50, 4)),
    ((2, 3, 4, 5), (-4, -1, 1, -2), False, (2, 1, 3, 4, 5)),
    ((2, 3, 4, 5), (-3, -3), False, (6, 20)),
    ((2, 3, 4, 5), (-1, -3), True, (6, 20)),
    ((2, 3, 4, 5), (0, 0, -3), True, (2, 3, 20)),
    ((2, 3, 4, 5), (-2, -3), True, (2, 3, 20)),
    ((2, 3, 4), (-3, 0), False, (6, 4)),
]


@pytest.mark.parametrize("shape,codes,reverse,expect", RESHAPE_CASES)
def test_reshape_codes(shape, codes, reverse, expect):
    x = RNG.randn(*shape).astype(np.float32)
    out = nd.reshape(nd.array(x), shape=codes, reverse=reverse)
    assert out.shape == expect
    np.testing.assert_array_equal(out.asnumpy(), x.reshape(expect))


def test_reshape_string_forms_alias_and_method():
    x = nd.array(RNG.randn(2, 3, 4))
    assert nd.reshape(x, shape="(0, -1)").shape == (2, 12)
    assert nd.Reshape(x, shape="(-1, 0)", reverse="True").shape == (6, 4)
    assert x.reshape((4, -1)).shape == (4, 6) and x.reshape(4, 6).shape == (4, 6)
    assert nd.reshape(x, target_shape=(6, 0)).shape == (6, 4)


@pytest.mark.parametrize(
    "codes",
    [(4, 0), (5, -1), (-1, -1), (0, 0, 0, 0), (-3, -3, -3), (7,), (-4, -1, -1, -2), (-4, 2, 2, -2)],
)
def test_reshape_shape_errors(codes):
    with pytest.raises(ShapeError):
        nd.reshape(nd.ones((2, 3, 4)), shape=codes)


def test_reshape_attr_errors_and_grad():
    with pytest.raises(AttrError):
        nd.reshape(nd.ones((2, 3)), shape=(3, 2), revers=True)
    with pytest.raises(AttrError):
        nd.reshape(nd.ones((2, 3)), shape="(3, x)")
    x = RNG.randn(2, 3, 4)
    head = RNG.randn(6, 4)
    (g,) = grad_of(lambda a: nd.reshape(a, shape=(-3, 0)), [x], head)
    np.testing.assert_allclose(g, head.reshape(2, 3, 4))


@pytest.mark.parametrize("axes", [(), (1, 0, 2), (2, 0, 1), "(0, 2, 1)"])
def test_transpose(axes):
    x = RNG.randn(2, 3, 4)
    ref_axes = eval(axes) if isinstance(axes, str) else axes
    ref = np.transpose(x, ref_axes or None)
    np.testing.assert_allclose(nd.transpose(nd.array(x), axes=axes).asnumpy(), ref, rtol=1e-6)
    (g,) = grad_of(lambda a: nd.transpose(a, axes=axes), [x], ref * 2)
    np.testing.assert_allclose(g, x * 2, rtol=1e-6)
    with pytest.raises(MXNetError):
        nd.transpose(nd.array(x), axes=(0, 1))


@pytest.mark.parametrize("axis", [0, 2, 3, -1, -4])
def test_expand_dims(axis):
    x = RNG.randn(2, 3, 4)
    assert nd.expand_dims(nd.array(x), axis=axis).shape == np.expand_dims(x, axis).shape
    with pytest.raises(MXNetError):
        nd.expand_dims(nd.array(x), axis=4)


@pytest.mark.parametrize(
    "shape,axis,expect",
    [
        ((1, 3, 1), None, (3,)),
        ((1, 3, 1), 2, (1, 3)),
        ((1, 3, 1), (0, -1), (3,)),
        ((1, 1), None, (1,)),
    ],
)
def test_squeeze(shape, axis, expect):
    x = RNG.randn(*shape)
    out = nd.squeeze(nd.array(x), axis=axis)
    assert out.shape == expect
    np.testing.assert_allclose(out.asnumpy(), x.reshape(expect), rtol=1e-6)
    with pytest.raises(MXNetError):
        nd.squeeze(nd.ones((1, 3, 1)), axis=1)


@pytest.mark.parametrize("dim", [0, 1, -1, "2"])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_concat(dim, n):
    xs = [RNG.randn(2, 3, 4) for _ in range(n)]
    ref = np.concatenate(xs, axis=int(dim))
    out = nd.Concat(*[nd.array(x) for x in xs], dim=dim)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)
    np.testing.assert_allclose(
        nd.concat(*[nd.array(x) for x in xs], dim=dim).asnumpy(), ref, rtol=1e-6
    )
    head = RNG.randn(*ref.shape)
    grads = grad_of(lambda *a: nd.Concat(*a, dim=dim), xs, head)
    for g, part in zip(grads, np.split(head, n, axis=int(dim)), strict=False):
        np.testing.assert_allclose(g, part, rtol=1e-6)


def test_concat_errors():
    with pytest.raises(ShapeError):
        nd.Concat(nd.ones((2, 3)), nd.ones((3, 3)), dim=1)
    with pytest.raises(MXNetError):
        nd.Concat(nd.ones((2, 3)), nd.ones((2, 3)), dim=2)
    with pytest.raises(AttrError):
        nd.Concat(nd.ones((2, 3)), nd.ones((2, 3)), axis=0)


@pytest.mark.parametrize("axis", [0, 1, -1, 3])
def test_stack(axis):
    xs = [RNG.randn(2, 3, 4) for _ in range(3)]
    out = nd.stack(*[nd.array(x) for x in xs], axis=axis)
    np.testing.assert_allclose(out.asnumpy(), np.stack(xs, axis=axis), rtol=1e-6)
    head = RNG.randn(*out.shape)
    grads = grad_of(lambda *a: nd.stack(*a, axis=axis), xs, head)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, np.take(head, i, axis=axis), rtol=1e-6)
    with pytest.raises(ShapeError):
        nd.stack(nd.ones((2, 3)), nd.ones((2, 4)))


@pytest.mark.parametrize(
    "n,axis,squeeze", [(3, 1, False), (3, 1, True), (2, -1, False), (2, 0, True), (4, 2, False)]
)
def test_split(n, axis, squeeze):
    x = RNG.randn(2, 3, 4)
    outs = nd.split(nd.array(x), num_outputs=n, axis=axis, squeeze_axis=squeeze)
    refs = np.split(x, n, axis=axis)
    assert isinstance(outs, list) and len(outs) == n
    for o, r in zip(outs, refs, strict=False):
        r = np.squeeze(r, axis) if squeeze else r
        np.testing.assert_allclose(o.asnumpy(), r, rtol=1e-6)
    assert len(nd.SliceChannel(nd.array(x), num_outputs=n, axis=axis)) == n


def test_split_single_error_and_grad():
    x = RNG.randn(2, 3, 4)
    assert nd.split(nd.array(x), num_outputs=1, axis=0).shape == (2, 3, 4)
    with pytest.raises(ShapeError):
        nd.split(nd.array(x), num_outputs=3, axis=2)
    a = nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        p, q = nd.split(a, num_outputs=2, axis=2)
        y = p * 2 + q * 3
    y.backward()
    np.testing.assert_allclose(
        a.grad.asnumpy(), np.concatenate([np.full((2, 3, 2), 2.0), np.full((2, 3, 2), 3.0)], 2)
    )


@pytest.mark.parametrize("reps", [(2,), (2, 1, 1, 2), (1, 3, 1), "(2, 2)"])
def test_tile(reps):
    x = RNG.randn(2, 3, 4)
    r = eval(reps) if isinstance(reps, str) else reps
    ref = np.tile(x, r)
    np.testing.assert_allclose(nd.tile(nd.array(x), reps=reps).asnumpy(), ref, rtol=1e-6)
    (g,) = grad_of(lambda a: nd.tile(a, reps=reps), [x], np.ones(ref.shape))
    np.testing.assert_allclose(g, np.full(x.shape, ref.size / x.size))


@pytest.mark.parametrize("repeats,axis", [(2, None), (2, -1), (3, 0), (1, 1)])
def test_repeat(repeats, axis):
    x = RNG.randn(2, 3, 4)
    ref = np.repeat(x, repeats, axis=axis)
    np.testing.assert_allclose(
        nd.repeat(nd.array(x), repeats=repeats, axis=axis).asnumpy(), ref, rtol=1e-6
    )
    (g,) = grad_of(lambda a: nd.repeat(a, repeats=repeats, axis=axis), [x], np.ones(ref.shape))
    np.testing.assert_allclose(g, np.full(x.shape, float(repeats)))
