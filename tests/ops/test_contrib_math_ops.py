"""Contrib op families beyond the per-op MXNet fixture replay (``test_ops_vs_mxnet.py``,
group ``contrib_ops``): hybridized use, gradients MXNet 1.9.1 does not compute on the
CPU, the eager-only ``boolean_mask`` and errors.

Expected values are NumPy's, MXNet's recorded fixtures, or another gluonjax op that
matches its own MXNet fixtures (named where used).
"""

from __future__ import annotations

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import HostOnlyError, ShapeError

nd = mx.nd


def _grads(fn, *arrays):
    xs = [nd.array(a) for a in arrays]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = fn(*xs)
    head = np.random.RandomState(3).randn(*y.shape).astype(np.float32)
    y.backward(nd.array(head))
    return y.asnumpy(), [x.grad.asnumpy() for x in xs], head


class _Masked(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, data, index):
        return F.contrib.boolean_mask(data, index) * 2


def test_boolean_mask_in_hybridized_block_runs_op_by_op():
    """MXNet's test_dynamic_shape: a hybridized block with boolean_mask gives the kept
    rows and scatters the gradient back into them (NumPy reference)."""
    net = _Masked()
    net.hybridize()
    data_np = np.arange(12, dtype=np.float32).reshape(4, 3)
    mask = np.array([0, 1, 1, 0], np.float32)
    for _ in range(2):  # the second call takes the block's op-by-op path directly
        data = nd.array(data_np)
        data.attach_grad()
        with mx.autograd.record():
            out = net(data, nd.array(mask))
        out.backward()
        np.testing.assert_array_equal(out.asnumpy(), data_np[mask != 0] * 2)
        np.testing.assert_array_equal(data.grad.asnumpy(), 2 * (mask != 0)[:, None] * np.ones(3))


def test_boolean_mask_other_axis_and_empty():
    x = np.random.RandomState(0).randn(2, 4, 3).astype(np.float32)
    m = np.array([1, 0, 0, 1], np.float32)
    out = nd.contrib.boolean_mask(nd.array(x), nd.array(m), axis=1)
    np.testing.assert_array_equal(out.asnumpy(), x[:, m != 0])
    empty = nd.contrib.boolean_mask(nd.array(x[0]), nd.zeros(4))
    assert empty.shape == (0, 3)


def test_boolean_mask_in_bound_symbol_names_the_op():
    y = mx.sym.contrib.boolean_mask(mx.sym.var("d"), mx.sym.var("i"))
    ex = y.bind(mx.cpu(), {"d": nd.ones((3, 2)), "i": nd.array([1, 0, 1])})
    with pytest.raises(HostOnlyError, match="boolean_mask.*eagerly"):
        ex.forward()


def test_boolean_mask_index_length_is_checked():
    with pytest.raises(ShapeError, match="one entry per slice"):
        nd.contrib.boolean_mask(nd.ones((3, 2)), nd.array([1, 0]))


@pytest.mark.parametrize("op", ["round_ste", "sign_ste"])
@pytest.mark.parametrize("hybrid", [False, True])
def test_straight_through_gradient_is_identity(op, hybrid):
    class Blk(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return getattr(F.contrib, op)(x) * 3

    net = Blk()
    if hybrid:
        net.hybridize()
    x_np = np.array([-2.5, -0.4, 0.0, 0.5, 1.5, 2.7], np.float32)
    x = nd.array(x_np)
    x.attach_grad()
    with mx.autograd.record():
        y = net(x)
    y.backward()
    ref = {"round_ste": np.where(x_np >= 0, np.floor(x_np + 0.5), np.ceil(x_np - 0.5)),
           "sign_ste": np.sign(x_np)}[op]  # fmt: skip
    np.testing.assert_array_equal(y.asnumpy(), 3 * ref)
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full(6, 3.0, np.float32))


def test_khatri_rao_gradient_matches_numpy():
    """MXNet registers no gradient for khatri_rao; gluonjax's is the product rule."""
    rng = np.random.RandomState(1)
    a, b = rng.randn(3, 2).astype(np.float32), rng.randn(4, 2).astype(np.float32)
    out, (ga, gb), head = _grads(nd.khatri_rao, a, b)
    np.testing.assert_allclose(out, (a[:, None, :] * b[None, :, :]).reshape(12, 2), rtol=1e-6)
    h = head.reshape(3, 4, 2)
    np.testing.assert_allclose(ga, (h * b[None]).sum(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gb, (h * a[:, None]).sum(0), rtol=1e-5, atol=1e-6)


def test_khatri_rao_column_mismatch():
    with pytest.raises(ShapeError, match="one number of columns"):
        nd.khatri_rao(nd.ones((2, 3)), nd.ones((2, 2)))


def test_allclose_shape_mismatch():
    with pytest.raises(ShapeError, match="one shape"):
        nd.contrib.allclose(nd.ones((2, 3)), nd.ones((3,)))


def test_modulated_deformable_conv_gradient_equals_deformable_conv_with_unit_mask():
    """With mask 1 and every sampling point inside the image, DCNv2 equals DCNv1, whose
    gradients match MXNet's fixtures; MXNet 1.9.1 has no CPU backward for DCNv2."""
    rng = np.random.RandomState(5)
    data = rng.randn(1, 2, 6, 6).astype(np.float32)
    # fractional moves that keep every point inside [0, 5) (where DCNv1 and v2 agree):
    # up from a tap on rows/columns 0..4, down from one on row/column 5
    frac = rng.uniform(0.1, 0.9, (1, 9, 2, 4, 4))
    taps = np.arange(3)[:, None, None] + np.arange(4)[None, :, None]  # (tap, out, 1)
    rows = np.broadcast_to(taps[:, None, :, :], (3, 3, 4, 4)).reshape(9, 4, 4)
    cols = np.broadcast_to(taps.transpose(0, 2, 1)[None], (3, 3, 4, 4)).reshape(9, 4, 4)
    sign = np.stack([np.where(rows == 5, -1, 1), np.where(cols == 5, -1, 1)], axis=1)
    offset = (frac * sign[None]).reshape(1, 18, 4, 4).astype(np.float32)
    weight = rng.randn(3, 2, 3, 3).astype(np.float32)
    attrs = dict(kernel=(3, 3), num_filter=3, no_bias=True)
    mask = np.ones((1, 9, 4, 4), np.float32)
    v2, g2, _ = _grads(
        lambda d, o, m, w: nd.contrib.ModulatedDeformableConvolution(d, o, m, w, **attrs),
        data, offset, mask, weight,
    )  # fmt: skip
    v1, g1, _ = _grads(
        lambda d, o, w: nd.contrib.DeformableConvolution(d, o, w, **attrs), data, offset, weight
    )
    np.testing.assert_allclose(v2, v1, rtol=1e-5, atol=1e-5)
    for a, b in zip([g2[0], g2[1], g2[3]], g1, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    # d out / d mask at a tap is that tap's sample times the weights: zero mask, zero output
    zero = nd.contrib.ModulatedDeformableConvolution(
        nd.array(data), nd.array(offset), nd.zeros(mask.shape), nd.array(weight), **attrs
    )
    np.testing.assert_array_equal(zero.asnumpy(), np.zeros((1, 3, 4, 4), np.float32))


def test_hawkesll_observations_take_no_gradient():
    """As MXNet: lags, state, valid_length and max_time get zero gradients."""
    args = [np.array([[1.5, 2.0]], np.float32), np.array([0.2, 0.3], np.float32),
            np.array([1.0, 2.0], np.float32), np.array([[0.3, 0.1]], np.float32),
            np.array([[1.0, 2.0, 0.5]], np.float32), np.array([[0, 1, 0]], np.int32),
            np.array([3], np.float32), np.array([10.0], np.float32)]  # fmt: skip
    xs = [nd.array(a, dtype=a.dtype) for a in args]
    for i in (0, 1, 2, 3, 4, 6, 7):
        xs[i].attach_grad()
    with mx.autograd.record():
        ll, _ = nd.contrib.hawkesll(*xs)
    ll.backward()
    for i in (3, 4, 6, 7):
        np.testing.assert_array_equal(xs[i].grad.asnumpy(), np.zeros(args[i].shape))
    assert np.all(np.abs(xs[0].grad.asnumpy()) > 0)


def test_hawkesll_shape_errors_name_the_input():
    bad = [nd.ones((2, 3)), nd.ones(3), nd.ones(2), nd.zeros((2, 3)), nd.ones((2, 4)),
           nd.zeros((2, 4)).astype("int32"), nd.ones(2), nd.ones(2)]  # fmt: skip
    with pytest.raises(ShapeError, match=r"beta \(2,\) \(expected \(3,\)\)"):
        nd.contrib.hawkesll(*bad)


def test_symbol_contrib_ops_exist_and_infer_shapes():
    d = mx.sym.var("d")
    _, outs, _ = mx.sym.contrib.quadratic(d, a=1.0).infer_shape(d=(2, 3))
    assert outs == [(2, 3)]
    _, outs, _ = mx.sym.contrib.gradientmultiplier(d, scalar=0.5).infer_shape(d=(4,))
    assert outs == [(4,)]
    for name in ("hawkesll", "round_ste", "sign_ste", "allclose", "boolean_mask",
                 "ModulatedDeformableConvolution", "edge_id", "dgl_subgraph"):  # fmt: skip
        assert callable(getattr(mx.sym.contrib, name)), name
    assert mx.contrib.nd.box_nms is nd.contrib.box_nms
    assert mx.contrib.sym.quadratic is mx.sym.contrib.quadratic
