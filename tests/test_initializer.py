"""gluonjax.initializer: values against formulas written here, and against MXNet 1.9.1."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
import gluonjax.initializer as init
from gluonjax.base import MXNetError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

D = init.InitDesc


def filled(initializer, shape, name="fc_weight", dtype="float32", seed=0):
    mx.random.seed(seed)
    arr = mx.nd.zeros(shape, dtype=dtype) + 7  # non-zero start: every entry must be written
    initializer(D(name), arr)
    return arr


def ref_bilinear(shape):
    """Per-index loop of the documented bilinear formula, in float64."""
    out = np.zeros(int(np.prod(shape)))
    f = math.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    for i in range(out.size):
        x, y = i % shape[3], (i // shape[3]) % shape[2]
        out[i] = (1 - abs(x / f - c)) * (1 - abs(y / f - c))
    return out.reshape(shape)


def fans(shape):
    k = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * k, shape[0] * k


ALL_INITS = [
    (init.Uniform(0.3), (3, 4)),
    (init.Normal(0.2), (2, 3, 2)),
    (init.Constant(2.5), (3,)),
    (init.Zero(), (2, 2)),
    (init.One(), (2, 2)),
    (init.Xavier(), (4, 3, 2, 2)),
    (init.MSRAPrelu(), (5, 3)),
    (init.Orthogonal(), (3, 2, 2)),
    (init.Bilinear(), (2, 1, 3, 4)),
    (init.LSTMBias(), (8,)),
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("initializer,shape", ALL_INITS, ids=lambda v: repr(v)[:20])
def test_shape_dtype_and_every_entry_written(initializer, shape, dtype):
    arr = filled(initializer, shape, dtype=dtype)
    assert arr.shape == shape and arr.dtype == np.dtype(dtype)
    assert np.isfinite(arr.asnumpy()).all() and not (arr.asnumpy() == 7).any()


@pytest.mark.parametrize("scale", [0.07, 0.5, 3.0])
def test_uniform_statistics(scale):
    w = filled(init.Uniform(scale), (100, 200)).asnumpy().astype(np.float64)
    assert w.min() >= -scale and w.max() <= scale and w.max() > 0.99 * scale
    assert abs(w.mean()) < 0.03 * scale
    np.testing.assert_allclose(w.std(), scale / math.sqrt(3), rtol=0.03)
    assert init.Uniform().scale == 0.07


@pytest.mark.parametrize("sigma", [0.01, 1.0])
def test_normal_statistics(sigma):
    w = filled(init.Normal(sigma), (100, 200)).asnumpy().astype(np.float64)
    assert abs(w.mean()) < 0.03 * sigma
    np.testing.assert_allclose(w.std(), sigma, rtol=0.03)
    assert init.Normal().sigma == 0.01


def xavier_scale(shape, factor_type, magnitude):
    fan_in, fan_out = fans(shape)
    factor = {"avg": (fan_in + fan_out) / 2, "in": fan_in, "out": fan_out}[factor_type]
    return math.sqrt(magnitude / factor)


def check_spread(w, scale, rnd_type):
    w = w.astype(np.float64)
    if rnd_type == "uniform":
        assert np.abs(w).max() <= scale * (1 + 1e-6) and np.abs(w).max() > 0.98 * scale
        np.testing.assert_allclose(w.std(), scale / math.sqrt(3), rtol=0.05)
    else:
        np.testing.assert_allclose(w.std(), scale, rtol=0.05)
    assert abs(w.mean()) < 0.05 * scale


@pytest.mark.parametrize("shape", [(60, 80), (40, 30, 3, 3), (20, 10, 2, 3, 3)])
@pytest.mark.parametrize("factor_type", ["avg", "in", "out"])
@pytest.mark.parametrize("rnd_type", ["uniform", "gaussian"])
@pytest.mark.parametrize("magnitude", [3, 2.34])
def test_xavier_formula(shape, factor_type, rnd_type, magnitude):
    w = filled(init.Xavier(rnd_type, factor_type, magnitude), shape).asnumpy()
    check_spread(w, xavier_scale(shape, factor_type, magnitude), rnd_type)


@pytest.mark.parametrize("factor_type", ["avg", "in", "out"])
@pytest.mark.parametrize("slope", [0.25, 0.0])
def test_msraprelu_formula(factor_type, slope):
    shape = (50, 30, 3, 3)
    w = filled(init.MSRAPrelu(factor_type, slope), shape).asnumpy()
    check_spread(w, xavier_scale(shape, factor_type, 2.0 / (1 + slope**2)), "gaussian")


def test_xavier_errors():
    with pytest.raises(MXNetError, match="bias_like_weight"):
        init.Xavier()(D("bias_like_weight"), mx.nd.zeros((4,)))
    with pytest.raises(MXNetError, match="random type"):
        init.Xavier(rnd_type="normal")
    with pytest.raises(MXNetError, match="factor type"):
        init.Xavier(factor_type="sum")


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (2, 3, 2), (7, 2, 1, 2)])
@pytest.mark.parametrize("rand_type", ["uniform", "normal"])
@pytest.mark.parametrize("scale", [1.414, 0.5])
def test_orthogonal(shape, rand_type, scale):
    w = filled(init.Orthogonal(scale, rand_type), shape).asnumpy().astype(np.float64)
    m = w.reshape(shape[0], -1) / scale
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(gram, np.eye(min(m.shape)), atol=2e-5)


@pytest.mark.parametrize("shape", [(1, 1, 4, 4), (2, 3, 3, 5), (1, 2, 6, 2), (3, 1, 1, 7)])
def test_bilinear_formula(shape):
    np.testing.assert_allclose(filled(init.Bilinear(), shape).asnumpy(), ref_bilinear(shape), 1e-6)


def test_bilinear_matches_mxnet_values():
    # mx.init.Bilinear()._init_weight('x', mx.nd.zeros((1, 1, 4, 4))) in MXNet 1.9.1
    edge, mid = [0.0625, 0.1875, 0.1875, 0.0625], [0.1875, 0.5625, 0.5625, 0.1875]
    got = filled(init.Bilinear(), (1, 1, 4, 4)).asnumpy()
    np.testing.assert_array_equal(got[0, 0], np.array([edge, mid, mid, edge], np.float32))
    with pytest.raises(MXNetError, match="4-D"):
        init.Bilinear()(D("up_weight"), mx.nd.zeros((4, 4)))


def test_constant_zero_one_exact():
    np.testing.assert_array_equal(
        filled(init.Constant(-1.5), (2, 3)).asnumpy(), np.full((2, 3), -1.5)
    )
    np.testing.assert_array_equal(filled(init.Zero(), (4,)).asnumpy(), np.zeros(4))
    np.testing.assert_array_equal(filled(init.One(), (2, 1)).asnumpy(), np.ones((2, 1)))
    row = np.array([1.0, 2.0, 3.0])
    for value in (row, row.tolist(), mx.nd.array(row)):
        np.testing.assert_array_equal(filled(init.Constant(value), (2, 3)).asnumpy(), [row, row])
    with pytest.raises(MXNetError, match="shape"):
        filled(init.Constant([1.0, 2.0]), (2, 3))
    i32 = filled(init.Constant(3), (2,), dtype="int32")
    assert i32.dtype == np.int32 and i32.asnumpy().tolist() == [3, 3]


@pytest.mark.parametrize("hidden", [1, 3])
@pytest.mark.parametrize("forget_bias", [1.0, -2.5])
def test_lstmbias_gate_layout(hidden, forget_bias):
    got = filled(init.LSTMBias(forget_bias), (4 * hidden,)).asnumpy()
    expect = np.zeros((4, hidden))
    expect[1] = forget_bias  # gates i, f, c, o: only the forget gate is set
    np.testing.assert_array_equal(got, expect.ravel())


BILINEAR_SHAPES = [(1, 1, 4, 4), (2, 1, 3, 5), (1, 2, 6, 3), (1, 1, 1, 2)]
XAVIER_CASES = [
    (s, r, f)
    for s in [(60, 80), (40, 30, 3, 3)]
    for r in ["uniform", "gaussian"]
    for f in ["avg", "in", "out"]
]
DUMPS_CASES = [
    "Uniform(0.2)",
    "Normal(0.3)",
    "Xavier('gaussian', 'in', 2.5)",
    "MSRAPrelu('out', 0.1)",
    "Orthogonal(2.0, 'normal')",
    "Bilinear()",
    "Zero()",
    "One()",
    "Constant(1.5)",
    "LSTMBias(3.0)",
]
DISPATCH_NAMES = ["fc_weight", "fc_bias", "bn_gamma", "bn_beta", "q_min", "q_max"]

MXNET_SCRIPT = """
import json, mxnet as mx, numpy as np
mx.random.seed(0)
out = {"bilinear": [], "xavier": [], "dumps": [], "dispatch": []}
for s in BILINEAR_SHAPES:
    a = mx.nd.zeros(s)
    mx.init.Bilinear()._init_weight("w", a)
    out["bilinear"].append(a.asnumpy().tolist())
for s, r, f in XAVIER_CASES:
    a = mx.nd.zeros(s)
    mx.init.Xavier(r, f, 2.5)(mx.init.InitDesc("w_weight"), a)
    out["xavier"].append([float(np.abs(a.asnumpy()).max()), float(a.asnumpy().std())])
for c in DUMPS_CASES:
    out["dumps"].append(eval("mx.init." + c).dumps())
for n in DISPATCH_NAMES:
    a = mx.nd.zeros((2,)) + 7
    mx.init.Constant(5)(mx.init.InitDesc(n), a)
    out["dispatch"].append(a.asnumpy().tolist())
print(json.dumps(out))
"""


@pytest.mark.mxnet
@needs_mxnet
def test_against_mxnet():
    consts = {
        k: globals()[k]
        for k in ("BILINEAR_SHAPES", "XAVIER_CASES", "DUMPS_CASES", "DISPATCH_NAMES")
    }
    script = "".join(f"{k} = {v!r}\n" for k, v in consts.items()) + MXNET_SCRIPT
    ref = json.loads(run_mxnet(script).strip().splitlines()[-1])
    for s, expect in zip(BILINEAR_SHAPES, ref["bilinear"], strict=True):
        got = filled(init.Bilinear(), s).asnumpy()
        np.testing.assert_array_equal(got, np.array(expect, np.float32))
    for (s, r, f), (mx_max, mx_std) in zip(XAVIER_CASES, ref["xavier"], strict=True):
        w = filled(init.Xavier(r, f, 2.5), s).asnumpy().astype(np.float64)
        np.testing.assert_allclose(w.std(), mx_std, rtol=0.06)  # same scale rule as MXNet
        if r == "uniform":
            np.testing.assert_allclose(np.abs(w).max(), mx_max, rtol=0.03)
    for case, expect in zip(DUMPS_CASES, ref["dumps"], strict=True):
        assert eval("init." + case).dumps() == expect
    for name, expect in zip(DISPATCH_NAMES, ref["dispatch"], strict=True):
        assert filled(init.Constant(5), (2,), name=name).asnumpy().tolist() == expect
