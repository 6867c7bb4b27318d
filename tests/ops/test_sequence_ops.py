"""SequenceMask, SequenceLast, SequenceReverse vs NumPy loop references."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import AttrError, MXNetError

nd = mx.nd
RNG = np.random.RandomState(7)


def to_tb(x, axis):
    """View data as (T, B, ...)."""
    return x if axis == 0 else np.swapaxes(x, 0, 1)


def np_mask(x, lens, axis, value):
    out = to_tb(x.copy(), axis)
    for b, n in enumerate(lens):
        out[int(n) :, b] = value
    return to_tb(out, axis)


def np_last(x, lens, axis):
    tb = to_tb(x, axis)
    if lens is None:
        return tb[-1]
    return np.stack([tb[int(n) - 1, b] for b, n in enumerate(lens)])


def np_reverse(x, lens, axis):
    tb = to_tb(x, axis)
    if lens is None:
        return to_tb(tb[::-1].copy(), axis)
    out = tb.copy()
    for b, n in enumerate(lens):
        n = int(n)
        out[:n, b] = tb[:n, b][::-1]
    return to_tb(out, axis)


def run_with_grad(fn, x, lens, head):
    a = nd.array(x)
    a.attach_grad()
    args = (a,) if lens is None else (a, nd.array(lens))
    with mx.autograd.record():
        y = fn(*args)
    y.backward(nd.array(head))
    return y.asnumpy(), a.grad.asnumpy()


SHAPES = [((4, 3), 0), ((4, 3, 2), 0), ((3, 4, 2), 1), ((2, 5), 1)]


@pytest.mark.parametrize("shape,axis", SHAPES)
@pytest.mark.parametrize("value", [0.0, -1.0])
def test_sequence_mask(shape, axis, value):
    x = RNG.randn(*shape)
    T, B = (shape[0], shape[1]) if axis == 0 else (shape[1], shape[0])
    lens = RNG.randint(1, T + 1, B).astype(np.float32)
    ref = np_mask(x, lens, axis, value)
    head = RNG.randn(*shape)
    out, g = run_with_grad(
        lambda a, s: nd.SequenceMask(a, s, use_sequence_length=True, value=value, axis=axis),
        x,
        lens,
        head,
    )
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    np.testing.assert_allclose(g, np_mask(head, lens, axis, 0.0), rtol=1e-6)
    np.testing.assert_allclose(nd.SequenceMask(nd.array(x), axis=axis).asnumpy(), x, rtol=1e-6)


def test_sequence_mask_mxnet_values():
    y = nd.arange(12).reshape((3, 2, 2))
    # printed by MXNet 1.9.1 (fractional lengths truncate; lengths > T keep everything)
    out = nd.SequenceMask(y, nd.array([1, 3]), use_sequence_length=True, value=-1)
    np.testing.assert_array_equal(out.asnumpy().ravel(), [0, 1, 2, 3, -1, -1, 6, 7, -1, -1, 10, 11])
    out = nd.SequenceMask(y, nd.array([1.5, 2.7]), use_sequence_length="1")
    np.testing.assert_array_equal(out.asnumpy().ravel(), [0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 0])


@pytest.mark.parametrize("shape,axis", SHAPES)
@pytest.mark.parametrize("use_len", [True, False])
def test_sequence_last(shape, axis, use_len):
    x = RNG.randn(*shape)
    T, B = (shape[0], shape[1]) if axis == 0 else (shape[1], shape[0])
    lens = RNG.randint(1, T + 1, B).astype(np.float32) if use_len else None
    ref = np_last(x, lens, axis)
    head = RNG.randn(*ref.shape)
    fn = (
        (lambda a, s: nd.SequenceLast(a, s, use_sequence_length=True, axis=axis))
        if use_len
        else (lambda a: nd.SequenceLast(a, axis=axis))
    )
    out, g = run_with_grad(fn, x, lens, head)
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    expect = np.zeros_like(to_tb(x, axis))
    for b in range(B):
        expect[(int(lens[b]) if use_len else T) - 1, b] = head[b]
    np.testing.assert_allclose(g, to_tb(expect, axis), rtol=1e-6)


@pytest.mark.parametrize("shape,axis", SHAPES)
@pytest.mark.parametrize("use_len", [True, False])
def test_sequence_reverse(shape, axis, use_len):
    x = RNG.randn(*shape)
    T, B = (shape[0], shape[1]) if axis == 0 else (shape[1], shape[0])
    lens = RNG.randint(0, T + 1, B).astype(np.float32) if use_len else None
    ref = np_reverse(x, lens, axis)
    head = RNG.randn(*shape)
    fn = (
        (lambda a, s: nd.SequenceReverse(a, s, use_sequence_length=True, axis=axis))
        if use_len
        else (lambda a: nd.SequenceReverse(a, axis=axis))
    )
    out, g = run_with_grad(fn, x, lens, head)
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    np.testing.assert_allclose(g, np_reverse(head, lens, axis), rtol=1e-6)  # a permutation


def test_sequence_errors():
    x = nd.ones((3, 2))
    with pytest.raises(MXNetError):
        nd.SequenceLast(x, nd.array([1, 2, 3]), use_sequence_length=True)
    with pytest.raises(MXNetError):
        nd.SequenceMask(x, nd.array([1, 2]), use_sequence_length=True, axis=2)
    with pytest.raises(AttrError):
        nd.SequenceReverse(x, use_length=True)
