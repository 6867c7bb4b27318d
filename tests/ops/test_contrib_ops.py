"""Contrib/detection ops beyond the per-op fixture replay of ``test_ops_vs_mxnet.py``:
hybridized and exported graphs (fixed-size outputs, no host sync), import of the
exported symbol JSON, MXNet's subgradients through a whole network, and errors.

Expected values are MXNet 1.9.1's (the recorded fixtures) or NumPy's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax._ops import registry
from gluonjax.base import MXNetError, ShapeError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_ops_vs_mxnet import CASES, FIXTURES, _npz, decode_attr  # noqa: E402

nd = mx.nd
BY_ID = {c["id"]: c for c in CASES}
# one case per new op: run together in ONE hybridized block, exported and re-imported
GRAPH_CASES = [
    "bilinear-up-noalign",
    "bilinear-like",
    "adaptive-avg-3",
    "box_iou-batch",
    "box_nms-class",
    "box_nms-batch",
    "bipartite-desc",
    "box_encode",
    "box_decode-clip",
    "roialign",
    "roialign-adaptive",
    "roipool-ties",
    "mbox-prior-clip-steps",
    "mbox-target-mining",
    "mbox-det-force-topk",
    "proposal-score-repeat",
    "multiproposal",
    "selfatt_qk",
    "encdec_valatt",
    "deformconv-groups",
    "hard_sigmoid",
    "index_copy",
    "div_sqrt_dim",
]


def _op(F, name):
    if name.startswith("_contrib_"):
        return getattr(F.contrib, name[len("_contrib_") :])
    return getattr(F, name)


def _case_arrays(cid):
    case = BY_ID[cid]
    data = _npz(str(FIXTURES), case["file"])
    ins = [data[f"{cid}.in{i}"] for i in range(len(case["inputs"]))]
    outs = [data[f"{cid}.out{i}"] for i in range(case["n_out"])]
    attrs = {k: decode_attr(v) for k, v in case["attrs"].items()}
    return case, ins, outs, attrs


class _ManyOps(mx.gluon.HybridBlock):
    """Applies each case's op to its own slice of the inputs; returns every output."""

    def __init__(self, cases):
        super().__init__()
        self._cases = cases

    def hybrid_forward(self, F, *xs):
        outs, at = [], 0
        for case, n_in, attrs in self._cases:
            res = _op(F, case["op"])(*xs[at : at + n_in], **attrs)
            at += n_in
            if isinstance(res, mx.sym.Symbol) and len(res.list_outputs()) > 1:
                res = [res[i] for i in range(len(res.list_outputs()))]
            outs.extend(res if isinstance(res, (list, tuple)) else [res])
        return tuple(outs)


def _assert_outputs(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g.asnumpy().astype(np.float64), e, rtol=1e-4, atol=1e-5)


def test_hybridized_export_import_match_mxnet(tmp_path):
    """All new ops in one graph: hybridized (one jit, no host sync), exported to symbol
    JSON and imported back by SymbolBlock: every output equals MXNet's."""
    cases, inputs, expected = [], [], []
    for cid in GRAPH_CASES:
        case, ins, outs, attrs = _case_arrays(cid)
        cases.append((case, len(ins), attrs))
        inputs += [nd.array(a, dtype=a.dtype) for a in ins]
        expected += outs
    net = _ManyOps(cases)
    net.hybridize()
    _assert_outputs(net(*inputs), expected)
    prefix = str(tmp_path / "contrib")
    net.export(prefix, example_inputs=inputs, stablehlo=False)
    names = [f"data{i}" for i in range(len(inputs))] if len(inputs) > 1 else ["data"]
    text = Path(prefix + "-symbol.json").read_text()
    for cid in GRAPH_CASES:  # one node of the MXNet op each (canonical name: _np_cumsum)
        assert f'"op": "{registry.get(BY_ID[cid]["op"]).name}"' in text, cid
    blk = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", names)  # no parameters
    _assert_outputs(blk(*inputs), expected)


def test_symbol_api_builds_contrib_ops():
    x = mx.sym.var("x")
    y = mx.sym.contrib.box_nms(x, overlap_thresh=0.4, id_index=0)
    assert y.list_outputs() == [y.name + "_output"]
    _, outs, _ = y.infer_shape(x=(2, 7, 6))
    assert outs == [(2, 7, 6)]
    r = mx.sym.contrib.ROIAlign(mx.sym.var("d"), mx.sym.var("r"), pooled_size=(2, 2),
                                spatial_scale=0.5)  # fmt: skip
    _, outs, _ = r.infer_shape(d=(1, 3, 8, 8), r=(5, 5))
    assert outs == [(5, 3, 2, 2)]


# ----------------------------------------------------------------------------- kinks
def _zero_gamma_net():
    net = mx.gluon.nn.HybridSequential()
    net.add(
        mx.gluon.nn.Dense(4, in_units=3),
        mx.gluon.nn.BatchNorm(gamma_initializer="zeros", in_channels=4),
        mx.gluon.nn.Activation("relu"),
        mx.gluon.nn.Dense(2, in_units=4),
    )
    net.initialize(mx.init.Normal(0.5))
    return net


@pytest.mark.parametrize("hybrid", [False, True])
def test_relu_after_zero_gamma_batchnorm_passes_no_gradient(hybrid):
    """ResNeXt-style blocks start with gamma = 0: the BatchNorm output is exactly 0 and
    MXNet's relu'(0) = 0 stops the gradient, so everything below the relu gets none."""
    net = _zero_gamma_net()
    if hybrid:
        net.hybridize()
    rng = np.random.RandomState(0)
    x, w = nd.array(rng.randn(5, 3)), nd.array(rng.randn(5, 2))
    with mx.autograd.record():
        loss = (net(x) * w).sum()
    loss.backward()
    first, bn, last = net[0], net[1], net[3]
    for p in (first.weight, first.bias, bn.gamma, bn.beta):
        np.testing.assert_array_equal(p.grad().asnumpy(), np.zeros(p.shape), err_msg=p.name)
    np.testing.assert_allclose(last.bias.grad().asnumpy(), w.asnumpy().sum(0), rtol=1e-6)
    np.testing.assert_array_equal(last.weight.grad().asnumpy(), np.zeros(last.weight.shape))


@pytest.mark.parametrize(
    "fn,x,expect",
    [
        (lambda F, a: F.relu(a), [-1.0, 0.0, 2.0], [0.0, 0.0, 1.0]),
        (lambda F, a: F.Activation(a, act_type="relu"), [-1.0, 0.0, 2.0], [0.0, 0.0, 1.0]),
        (lambda F, a: F.abs(a), [-1.0, 0.0, 2.0], [-1.0, 0.0, 1.0]),
        (lambda F, a: F.broadcast_maximum(a, F.zeros_like(a)), [-1.0, 0.0, 2.0], [0, 1, 1]),
        (lambda F, a: F.broadcast_minimum(a, F.zeros_like(a)), [-1.0, 0.0, 2.0], [1, 1, 0]),
        (lambda F, a: F.clip(a, -1.0, 1.0), [-1.0, 1.0, 2.0], [1.0, 1.0, 0.0]),
        (lambda F, a: F.hard_sigmoid(a), [-2.5, 0.0, 2.5], [0.0, 0.2, 0.0]),
        (
            lambda F, a: F.LeakyReLU(a, act_type="elu", slope=0.3),
            [0.0, 1.0, -1.0],
            [0.3, 1.0, 0.3 * np.exp(-1.0)],
        ),  # fmt: skip
    ],
)
def test_kink_gradients_hybridized(fn, x, expect):
    """MXNet's subgradients hold inside a hybridized (jit) graph too."""

    class Blk(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, a):
            return fn(F, a)

    net = Blk()
    net.hybridize()
    a = nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = net(a)
    y.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), np.asarray(expect, np.float32), rtol=1e-6)


def test_integer_maximum_minimum_clip_keep_integers():
    a = nd.array([1, 5, 3], dtype="int32")
    b = nd.array([4, 2, 3], dtype="int32")
    assert nd.broadcast_maximum(a, b).asnumpy().tolist() == [4, 5, 3]
    assert nd.broadcast_minimum(a, b).dtype == np.int32
    assert nd.clip(a, 2, 4).asnumpy().tolist() == [2, 4, 3]


# ----------------------------------------------------------------------------- behaviour
def test_bilinear_scale_width_alone_is_used():
    """MXNet 1.9.1 ignores scale_width unless scale_height is given; gluonjax uses it."""
    x = nd.array(np.arange(12.0).reshape(1, 1, 3, 4))
    out = nd.contrib.BilinearResize2D(x, height=3, scale_width=2.0)
    assert out.shape == (1, 1, 3, 8)


def test_roialign_negative_batch_index_gives_zeros():
    x = nd.array(np.random.RandomState(2).randn(1, 2, 6, 6))
    rois = nd.array([[-1, 0, 0, 4, 4], [0, 0, 0, 4, 4]])
    out = nd.contrib.ROIAlign(x, rois, pooled_size=(2, 2), spatial_scale=1.0, sample_ratio=2)
    np.testing.assert_array_equal(out[0].asnumpy(), np.zeros((2, 2, 2)))
    assert np.abs(out[1].asnumpy()).sum() > 0


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: nd.contrib.BilinearResize2D(nd.ones((2, 3)), height=2, width=2), "4-D"),
        (lambda: nd.contrib.box_nms(nd.ones((4, 4))), "at least 5"),
        (lambda: nd.contrib.box_nms(nd.ones((4, 6)), score_index=3), "score_index"),
        (lambda: nd.contrib.box_iou(nd.ones((2, 3)), nd.ones((2, 4))), r"\(\.\.\., 4\)"),
        (
            lambda: nd.contrib.Proposal(
                nd.ones((2, 6, 2, 2)), nd.ones((2, 12, 2, 2)), nd.ones((2, 3)), scales=(8,)
            ),
            "MultiProposal",
        ),  # fmt: skip
        (
            lambda: nd.contrib.DeformableConvolution(
                nd.ones((1, 2, 4, 4)),
                nd.ones((1, 8, 4, 4)),
                nd.ones((2, 2, 3, 3)),
                kernel=(3, 3),
                num_filter=2,
                no_bias=True,
            ),
            "offset must have shape",
        ),  # fmt: skip
        (
            lambda: nd.contrib.interleaved_matmul_selfatt_qk(nd.ones((2, 1, 10)), heads=2),
            "multiple of",
        ),  # fmt: skip
    ],
)
def test_errors_name_the_problem(call, match):
    with pytest.raises((ShapeError, MXNetError), match=match):
        call()


def test_nms_loop_path_matches_mxnet(monkeypatch):
    """Above ``MATRIX_LIMIT`` candidates, NMS loops once per kept box instead of sweeping
    the suppression matrix: the same results (run eagerly, outside the cached kernels)."""
    import jax
    import jax.numpy as jnp

    from gluonjax._ops.defs import _boxutil

    monkeypatch.setattr(_boxutil, "MATRIX_LIMIT", 0)
    for cid in ("box_nms-class", "box_nms-batch", "mbox-det-force-topk", "proposal-score-repeat"):
        case, ins, outs, attrs = _case_arrays(cid)
        op = registry.get(case["op"])
        key = op.parse_attrs(attrs)[0]
        res = jax.jit(op.bound(key))(*[jnp.asarray(a) for a in ins])  # a fresh trace
        res = res if isinstance(res, tuple) else (res,)
        for got, want in zip(res[: op.n_visible(op.attr_dict(key))], outs, strict=False):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5, err_msg=cid)
