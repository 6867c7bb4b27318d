"""Errors, shape inference and op details that MXNet 1.9.1's test_operator.py checks
(batch 4), against values recorded from real MXNet by
``tools/make_operator_details_fixtures.py`` (``tests/fixtures/operator_details.json``)."""

import json
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import MXNetError

REF = json.loads((Path(__file__).parents[1] / "fixtures" / "operator_details.json").read_text())


def _outcome(fn):
    """``None`` or ``[IndexError?, ...]``, as the fixture records MXNet's outcome."""
    try:
        out = fn()
        if isinstance(out, mx.nd.NDArray):
            out.asnumpy()
        return None
    except MXNetError as err:
        return "IndexError" if isinstance(err, IndexError) else ""


def _expected(rec):
    return None if rec is None else rec[0]


def test_gather_nd_bounds():
    data = mx.nd.array([[0, 1, 2], [3, 4, 5]])
    for idx, rec in zip(
        ([[0, 1, 0], [0, 1, 3]], [[0, 1, 0], [0, 1, -5]]), REF["gather_nd_raise"], strict=True
    ):
        assert _outcome(lambda i=idx: mx.nd.gather_nd(data, mx.nd.array(i))) == _expected(rec)
    out = mx.nd.gather_nd(data, mx.nd.array([[0, 1, -1], [0, 1, -2]]))
    np.testing.assert_array_equal(out.asnumpy(), REF["gather_nd_neg"])


def test_depth_space_tile_checks():
    cases = [((1, 1, 2, 3), 2), ((1, 4, 0, 3), 2), ((1, 8, 2, 3), 0), ((1, 8, 2, 3), 2)]
    for (s, b), rec in zip(cases, REF["d2s"], strict=True):
        assert _outcome(lambda s=s, b=b: mx.nd.depth_to_space(mx.nd.ones(s), b)) == _expected(rec)
    cases = [((1, 2, 1, 4), 2), ((1, 0, 2, 4), 2), ((0, 1, 2, 4), 2), ((1, 2, 2, 4), 2)]
    for (s, b), rec in zip(cases, REF["s2d"], strict=True):
        assert _outcome(lambda s=s, b=b: mx.nd.space_to_depth(mx.nd.ones(s), b)) == _expected(rec)
    for r, rec in zip([(1, 2, -3), (1, 0, 3), (2, 1)], REF["tile"], strict=True):
        assert _outcome(lambda r=r: mx.nd.tile(mx.nd.ones((4, 4)), r)) == _expected(rec)
    with mx.np_shape():
        assert list(mx.nd.tile(mx.nd.ones((4, 4)), (1, 0, 3)).shape) == REF["tile_np_shape"]


def test_zeros_ones_need_np_shape_for_unknown_dims():
    cases = [(f, s) for f in (mx.nd.zeros, mx.nd.ones) for s in [(), (0, 1, 3, 0), (2, 3)]]
    for (f, s), rec in zip(cases, REF["create"], strict=True):
        assert _outcome(lambda f=f, s=s: f(s)) == _expected(rec)
    with mx.np_shape():
        got = [list(mx.nd.ones(()).shape), list(mx.nd.zeros((0, 1, 0, 4)).shape)]
    assert got == REF["create_np_shape"]
    assert [list(mx.nd.empty(s).shape) for s in [(), (0, 3)]] == REF["empty"]


def test_take_raise_in_executor_raises_on_read():
    sym = mx.sym.take(
        mx.sym.var("a"), mx.sym.BlockGrad(mx.sym.var("i")), mode="raise", name="take0"
    )
    exe = sym.simple_bind(mx.cpu(), a=(3, 4), i=(2,))
    exe.arg_dict["a"][:] = 1
    exe.arg_dict["i"][:] = mx.nd.array([0, 5])
    exe.forward(is_train=True)  # as MXNet: the error shows when the output is read
    assert REF["take_exec"] is not None
    out = exe.outputs[0]
    assert out.shape == (2, 4)
    with pytest.raises(MXNetError, match="take0"):
        out.asnumpy()
    with pytest.raises(MXNetError, match="out of bounds"):
        (out + 1).asnumpy()
    with pytest.raises(MXNetError):
        exe.backward(mx.nd.ones((2, 4)))
    exe.arg_dict["i"][:] = mx.nd.array([2, 1])
    exe.forward(is_train=True)
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), REF["take_exec_ok"])


def test_pooling_same_convention():
    x = mx.nd.array(np.arange(10, dtype=np.float32)[::-1].reshape(1, 1, 10))
    for key, want in REF["pool_same"].items():
        pt, k, s = key.split("-")
        out = mx.nd.Pooling(
            x, kernel=int(k), stride=int(s), pad=(0, 0, 0), pool_type=pt, pooling_convention="same"
        )
        np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6, err_msg=key)
    bad = [
        lambda: mx.nd.Pooling(
            mx.nd.ones((1, 1, 5, 6)), kernel=(2, 2), stride=(2, 2), pooling_convention="same"
        ),
        lambda: mx.nd.Pooling(
            mx.nd.ones((1, 1, 10)), kernel=2, stride=2, pad=(2, 2, 2), pooling_convention="same"
        ),
    ]
    for fn, rec in zip(bad, REF["pool_same_raise"], strict=True):
        assert _outcome(fn) == _expected(rec)


def test_partial_shapes_through_slice_and_transpose():
    v = mx.sym.var("data", shape=(0, 20))
    cases = [
        ((None, None), (None, 10), ()),
        ((None, 3), (5, 10), ()),
        ((2, 3), (None, 10), (3, 3)),
        ((-3, 3), (None, 10), (None, 2)),
    ]
    got = [
        list(mx.sym.slice(v, begin=b, end=e, step=s).infer_shape_partial()[1][0])
        for b, e, s in cases
    ]
    assert got == REF["slice_partial"]
    v = mx.sym.var("data", shape=(10, 0))
    got = [
        list(mx.sym.slice_axis(v, axis=a, begin=0, end=5).infer_shape_partial()[1][0])
        for a in (0, 1)
    ]
    assert got == REF["slice_axis_partial"]
    got = []
    for s1, s2 in [((2, 3), (-1, -1)), ((2, -1), (3, -1))]:
        b = mx.sym.ones(shape=s1) + mx.sym.transpose(mx.sym.ones(shape=s2))
        got.append(list(b.bind(mx.cpu(), args={}).forward()[0].shape))
    assert got == REF["transpose_back"]
    t = mx.sym.transpose(mx.sym.var("x", shape=(0, 0, 0)), axes=(1, 2, 0))
    y = mx.sym.var("y", shape=(2, 3, 4))
    got = [list(s) for s in mx.sym.broadcast_add(t, y).infer_shape_partial()[0]]
    assert got == REF["transpose_partial"]
    assert [list(s) for s in (t + y).infer_shape_partial()[0]] == REF["transpose_partial_elemwise"]


def test_dropout_p1_is_nan():
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Dropout(x, p=1.0)
    y.backward()
    got = [bool(np.isnan(y.asnumpy()).all()), bool(np.isnan(x.grad.asnumpy()).all())]
    assert got == REF["dropout_p1"]


@pytest.mark.parametrize("key", sorted(REF["cast"]))
def test_cast_executor_gradients(key):
    src, dst = key.split("-")
    want_out, want_grad, want_dtype = REF["cast"][key]
    x = np.array([[-3.7, 2.2, 9.9], [-0.5, 0.5, -8.1]])
    exe = mx.sym.Cast(mx.sym.var("x", dtype=src), dtype=dst).simple_bind(mx.cpu(), x=(2, 3))
    exe.arg_arrays[0][:] = x
    exe.forward(is_train=True)
    exe.backward(mx.nd.array(x, dtype=dst))
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), want_out, rtol=1e-6)
    np.testing.assert_allclose(exe.grad_arrays[0].asnumpy(), want_grad, rtol=1e-6)
    assert np.dtype(exe.grad_arrays[0].dtype).name in want_dtype


def test_softmax_with_length_gradients():
    d = np.random.RandomState(0).rand(2, 4, 3)
    ln = np.array([[1, 4, 2], [3, 2, 4]], dtype=np.int32)
    sym = mx.sym.softmax(mx.sym.var("d"), length=mx.sym.var("l"), use_length=True, axis=1)
    exe = sym.bind(
        mx.cpu(),
        {"d": mx.nd.array(d), "l": mx.nd.array(ln, dtype="int32")},
        args_grad={"d": mx.nd.ones((2, 4, 3)) * 7, "l": mx.nd.ones((2, 3), dtype="int32") * 7},
    )
    exe.forward(is_train=True)
    exe.backward(mx.nd.array(np.arange(24).reshape(2, 4, 3)))
    out, dgrad, lgrad = REF["softmax_len"]
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["d"].asnumpy(), dgrad, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(exe.grad_dict["l"].asnumpy(), lgrad)


def test_index_array_of_0d_input():
    with mx.np_shape():
        assert list(mx.nd.contrib.index_array(mx.nd.ones(())).shape) == REF["index_array_0d"]


def _int_mod(name, a, b):
    if name == "mod":
        return a % b
    if name == "broadcast_mod":
        return mx.nd.broadcast_mod(a, b)
    return a % 3 if name == "mod_scalar" else 7 % a


def test_integer_mod_has_no_gradient():
    names = ("mod", "broadcast_mod", "mod_scalar", "rmod_scalar")
    for name, want in zip(names, REF["int_mod_eager"], strict=True):
        a = mx.nd.array([5, 7, 9], dtype="int32")
        b = mx.nd.array([2, 3, 4], dtype="int32")
        a.attach_grad()
        b.attach_grad()
        with mx.autograd.record():
            y = _int_mod(name, a, b)
        y.backward(mx.nd.ones(3, dtype="int32"))
        assert [a.grad.asnumpy().tolist(), b.grad.asnumpy().tolist()] == want, name


@pytest.mark.parametrize("name", ["mod", "mul"])
def test_gradients_through_integer_casts_in_executor(name):
    va, vb = mx.sym.var("a"), mx.sym.var("b")
    ca, cb = mx.sym.cast(va, dtype="int32"), mx.sym.cast(vb, dtype="int32")
    sym = ca % cb if name == "mod" else ca * cb
    exe = sym.simple_bind(mx.cpu(), a=(3,), b=(3,))
    exe.arg_dict["a"][:] = mx.nd.array([5.5, 7.2, -9.7])
    exe.arg_dict["b"][:] = mx.nd.array([2.1, 3.9, 4.2])
    exe.forward(is_train=True)
    exe.backward(mx.nd.array([1, 2, 3], dtype="int32"))
    out, ga, gb = REF["cast_chain_exec"][name]
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), out)
    np.testing.assert_allclose(exe.grad_dict["a"].asnumpy(), ga)
    np.testing.assert_allclose(exe.grad_dict["b"].asnumpy(), gb)
