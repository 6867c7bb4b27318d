"""Loss-output ops: forward values and MXNet's (head-gradient-ignoring) gradients.

The gradient rules were checked against the real MXNet 1.9.1 (see the op docstrings).
"""

import math

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd
from gluonjax._ops import registry
from gluonjax.base import MXNetError

RNG = np.random.default_rng(3)


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def run(op, data, label, head, **kw):
    d, lab = nd.array(data), nd.array(label)
    d.attach_grad()
    lab.attach_grad()
    with mx.autograd.record():
        y = getattr(nd, op)(d, lab, **kw)
    y.backward(nd.array(head))
    return y.asnumpy(), d.grad.asnumpy(), lab.grad.asnumpy()


def softmax_ref_grad(
    x, label, axis, mode, grad_scale=1.0, use_ignore=False, ignore=-1.0, alpha=0.0, spatial=1
):
    p = np_softmax(x, axis)
    k = x.shape[axis]
    cls = np.arange(k).reshape([-1 if i == axis else 1 for i in range(x.ndim)])
    lab = np.expand_dims(label, axis)
    hot = (lab == cls).astype(np.float64)
    if alpha:
        hot = hot * (1 - alpha) + (1 - hot) * alpha / (k - 1)
    g = p - hot
    keep = lab != ignore
    if use_ignore:
        g = g * keep
    norm = {"null": spatial, "batch": label.size, "valid": max(keep.sum(), 1)}[mode]
    return p, g * grad_scale / norm


SOFTMAX_CASES = [
    # (data shape, kind) kind: plain (N, K), multi (N, C, ...), preserve (..., K)
    ((5, 4), "plain"),
    ((3, 4, 5), "multi"),
    ((2, 3, 2, 3), "multi"),
    ((2, 3, 4), "preserve"),
]


@pytest.mark.parametrize("use_ignore", [False, True])
@pytest.mark.parametrize("normalization", ["null", "batch", "valid"])
@pytest.mark.parametrize("shape,kind", SOFTMAX_CASES)
def test_softmax_output(shape, kind, normalization, use_ignore):
    x = RNG.standard_normal(shape).astype(np.float32)
    if kind == "multi":
        axis, lshape, spatial = 1, (shape[0],) + shape[2:], math.prod(shape[2:])
    else:
        axis, lshape, spatial = len(shape) - 1, shape[:-1], 1
    label = RNG.integers(0, shape[axis], lshape).astype(np.float32)
    label.flat[0] = -1  # the default ignore_label
    head = RNG.standard_normal(shape) * 5  # must be ignored
    kw = dict(
        normalization=normalization,
        use_ignore=use_ignore,
        grad_scale=1.5,
        multi_output=kind == "multi",
        preserve_shape=kind == "preserve",
    )
    out, g, lg = run("SoftmaxOutput", x, label, head, **kw)
    p, want = softmax_ref_grad(
        x.astype(np.float64), label, axis, normalization, 1.5, use_ignore, spatial=spatial
    )
    np.testing.assert_allclose(out, p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(lg, 0)


def test_softmax_output_known_mxnet_rule():
    # MXNet 1.9.1 (checked): a label of -1 matches no class, so without use_ignore the
    # row's gradient is the softmax itself; 'valid' still counts labels != ignore_label.
    x = np.array([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]], np.float32)
    label = np.array([1, -1], np.float32)
    _, g, _ = run("SoftmaxOutput", x, label, np.ones_like(x), normalization="valid")
    p = np_softmax(x.astype(np.float64), 1)
    np.testing.assert_allclose(g, p - np.array([[0, 1, 0], [0, 0, 0]]), rtol=1e-5)


@pytest.mark.parametrize("alpha", [0.1, 0.3])
@pytest.mark.parametrize("ignore_label", [-1.0, 2.0])
def test_softmax_output_smoothing_and_ignore_label(alpha, ignore_label):
    x = RNG.standard_normal((6, 5)).astype(np.float32)
    label = np.array([0, 2, 4, 2, -1, 1], np.float32)
    out, g, _ = run(
        "SoftmaxOutput",
        x,
        label,
        np.zeros_like(x),
        smooth_alpha=alpha,
        use_ignore=True,
        ignore_label=ignore_label,
        normalization="valid",
    )
    _, want = softmax_ref_grad(
        x.astype(np.float64), label, 1, "valid", use_ignore=True, ignore=ignore_label, alpha=alpha
    )
    np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-6)


def test_softmax_output_flattens_and_alias():
    x = RNG.standard_normal((2, 3, 2)).astype(np.float32)
    label = np.array([1, 5], np.float32)
    out, g, _ = run("Softmax", x, label, np.ones_like(x))
    x2 = x.reshape(2, -1).astype(np.float64)
    np.testing.assert_allclose(out, np_softmax(x2, 1).reshape(x.shape), rtol=1e-5)
    _, want = softmax_ref_grad(x2, label, 1, "null")
    np.testing.assert_allclose(g, want.reshape(x.shape), rtol=1e-4, atol=1e-6)
    op = registry.get("SoftmaxOutput")
    for kw, want in (  # MXNet 1.9.1 infers data.shape[:-1] unless multi_output
        ({}, (4, 3, 5)),
        ({"multi_output": True}, (4, 5, 6)),
        ({"preserve_shape": True}, (4, 3, 5)),
    ):
        attrs = op.attr_dict(op.parse_attrs(kw)[0])
        assert op.infer_args(attrs, {"data": (4, 3, 5, 6)}) == {"label": want}
    with pytest.raises(MXNetError, match="SoftmaxOutput"):
        nd.SoftmaxOutput(nd.array(x), nd.array([1.0, 2.0, 3.0]))


def test_softmax_output_out_grad():
    # MXNet 1.9.1 multiplies by the forward output (not the head gradient) when out_grad=True
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    label = np.array([0, 1, 2, 1], np.float32)
    out, g, _ = run("SoftmaxOutput", x, label, RNG.standard_normal((4, 3)), out_grad=True)
    p, want = softmax_ref_grad(x.astype(np.float64), label, 1, "null")
    np.testing.assert_allclose(g, want * p, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("grad_scale", [1.0, 2.5])
@pytest.mark.parametrize(
    "shape,lshape", [((3, 4), (3, 4)), ((2, 3, 4), (2, 3, 4)), ((5, 1), (5,)), ((4,), (4,))]
)
@pytest.mark.parametrize(
    "op", ["LinearRegressionOutput", "MAERegressionOutput", "LogisticRegressionOutput"]
)
def test_regression_outputs(op, shape, lshape, grad_scale):
    x = RNG.standard_normal(shape).astype(np.float32)
    label = RNG.standard_normal(lshape).astype(np.float32)
    if op == "LogisticRegressionOutput":
        label = (label > 0).astype(np.float32)
    out, g, lg = run(op, x, label, RNG.standard_normal(shape) * 3, grad_scale=grad_scale)
    x64, lab = x.astype(np.float64), label.reshape(shape)
    fwd = 1 / (1 + np.exp(-x64)) if op == "LogisticRegressionOutput" else x64
    np.testing.assert_allclose(out, fwd, rtol=1e-5, atol=1e-6)
    diff = np.sign(fwd - lab) if op == "MAERegressionOutput" else fwd - lab
    per_sample = math.prod(shape[1:])  # MXNet divides by the outputs per sample
    np.testing.assert_allclose(g, diff * grad_scale / per_sample, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(lg, 0)


@pytest.mark.parametrize("use_linear", [False, True])
@pytest.mark.parametrize("margin,coef", [(1.0, 1.0), (0.5, 2.0)])
def test_svm_output(use_linear, margin, coef):
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    label = np.array([0, 3, 1, 1, 2], np.float32)
    out, g, lg = run(
        "SVMOutput",
        x,
        label,
        np.full(x.shape, 3.0),
        margin=margin,
        regularization_coefficient=coef,
        use_linear=use_linear,
    )
    np.testing.assert_array_equal(out, x)
    want = np.zeros(x.shape)
    for i in range(5):
        for j in range(4):
            v = x[i, j]
            if j == label[i]:
                want[i, j] = -coef * (margin > v) if use_linear else -2 * coef * max(margin - v, 0)
            else:
                want[i, j] = coef * (margin > -v) if use_linear else 2 * coef * max(margin + v, 0)
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(lg, 0)


@pytest.mark.parametrize("shape", [(3, 4), (6, 2)])
def test_softmax_cross_entropy(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    label = RNG.integers(0, shape[1], shape[0]).astype(np.float32)
    out, g, _ = run("softmax_cross_entropy", x, label, np.array([2.0]))
    p = np_softmax(x.astype(np.float64), 1)
    rows = np.arange(shape[0])
    assert out.shape == (1,)
    np.testing.assert_allclose(out[0], -np.log(p[rows, label.astype(int)]).sum(), rtol=1e-5)
    hot = np.eye(shape[1])[label.astype(int)]
    np.testing.assert_allclose(g, 2.0 * (p - hot), rtol=1e-4, atol=1e-6)
