"""Element-wise ops vs NumPy: unary, binary (elemwise_/broadcast_), scalar; gradients."""

import math

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, nd

erf = np.vectorize(math.erf)


def _erfinv(y):
    """Inverse of math.erf by bisection (a reference independent of jax)."""
    lo, hi = -6.0, 6.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return (lo + hi) / 2


lgamma = np.vectorize(math.lgamma)

# name: (numpy forward, numpy derivative or None, input domain)
UNARY = {
    "relu": (lambda x: np.maximum(x, 0), lambda x: (x > 0) * 1.0, "any"),
    "sigmoid": (
        lambda x: 1 / (1 + np.exp(-x)),
        lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2,
        "any",
    ),
    "tanh": (np.tanh, lambda x: 1 - np.tanh(x) ** 2, "any"),
    "exp": (np.exp, np.exp, "any"),
    "expm1": (np.expm1, np.exp, "any"),
    "log": (np.log, lambda x: 1 / x, "pos"),
    "log1p": (np.log1p, lambda x: 1 / (1 + x), "pos"),
    "log2": (np.log2, lambda x: 1 / (x * np.log(2)), "pos"),
    "log10": (np.log10, lambda x: 1 / (x * np.log(10)), "pos"),
    "sqrt": (np.sqrt, lambda x: 0.5 / np.sqrt(x), "pos"),
    "rsqrt": (lambda x: 1 / np.sqrt(x), lambda x: -0.5 * x**-1.5, "pos"),
    "cbrt": (np.cbrt, lambda x: x ** (-2 / 3) / 3, "pos"),
    "rcbrt": (lambda x: 1 / np.cbrt(x), lambda x: -(x ** (-4 / 3)) / 3, "pos"),
    "square": (np.square, lambda x: 2 * x, "any"),
    "abs": (np.abs, np.sign, "any"),
    "sign": (np.sign, lambda x: 0 * x, "any"),
    "negative": (np.negative, lambda x: -np.ones_like(x), "any"),
    "reciprocal": (np.reciprocal, lambda x: -1 / x**2, "pos"),
    "sin": (np.sin, np.cos, "any"),
    "cos": (np.cos, lambda x: -np.sin(x), "any"),
    "tan": (np.tan, lambda x: 1 / np.cos(x) ** 2, "unit"),
    "arcsin": (np.arcsin, lambda x: 1 / np.sqrt(1 - x**2), "unit"),
    "arccos": (np.arccos, lambda x: -1 / np.sqrt(1 - x**2), "unit"),
    "arctan": (np.arctan, lambda x: 1 / (1 + x**2), "any"),
    "sinh": (np.sinh, np.cosh, "any"),
    "cosh": (np.cosh, np.sinh, "any"),
    "arcsinh": (np.arcsinh, lambda x: 1 / np.sqrt(x**2 + 1), "any"),
    "arccosh": (np.arccosh, lambda x: 1 / np.sqrt(x**2 - 1), "gt1"),
    "arctanh": (np.arctanh, lambda x: 1 / (1 - x**2), "unit"),
    "degrees": (np.degrees, lambda x: np.full_like(x, 180 / np.pi), "any"),
    "radians": (np.radians, lambda x: np.full_like(x, np.pi / 180), "any"),
    "floor": (np.floor, None, "any"),
    "ceil": (np.ceil, None, "any"),
    "round": (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), None, "any"),
    "rint": (np.rint, None, "any"),
    "trunc": (np.trunc, None, "any"),
    "fix": (np.fix, None, "any"),
    "softsign": (lambda x: x / (1 + np.abs(x)), lambda x: 1 / (1 + np.abs(x)) ** 2, "any"),
    "erf": (erf, lambda x: 2 / np.sqrt(np.pi) * np.exp(-(x**2)), "any"),
    "gammaln": (lgamma, None, "pos"),
    "erfinv": (lambda y: np.vectorize(_erfinv)(y), None, "unit"),
    "gamma": (np.vectorize(math.gamma), None, "pos"),
    "logical_not": (lambda x: (x == 0) * 1.0, None, "any"),
    "zeros_like": (np.zeros_like, lambda x: 0 * x, "any"),
    "ones_like": (np.ones_like, lambda x: 0 * x, "any"),
    "BlockGrad": (lambda x: x, lambda x: 0 * x, "any"),
    "make_loss": (lambda x: x, lambda x: np.ones_like(x), "any"),
    "_copy": (lambda x: x, lambda x: np.ones_like(x), "any"),
}


def _input(domain, shape, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-2, 2, shape)
    if domain == "pos":
        x = np.abs(x) + 0.3
    elif domain == "unit":
        x = np.clip(x / 2.5, -0.9, 0.9)
    elif domain == "gt1":
        x = np.abs(x) + 1.2
    return x.astype(np.float32)


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4)])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_forward_and_grad(name, shape):
    fwd, deriv, domain = UNARY[name]
    xv = _input(domain, shape)
    x = nd.array(xv)
    x.attach_grad()
    with autograd.record():
        y = getattr(nd, name)(x)
    np.testing.assert_allclose(y.asnumpy(), fwd(xv.astype(np.float64)), rtol=2e-5, atol=2e-6)
    if deriv is not None:
        y.backward()
        np.testing.assert_allclose(
            x.grad.asnumpy(), deriv(xv.astype(np.float64)), rtol=1e-4, atol=1e-5
        )


BINARY = {
    "add": (np.add, lambda a, b: (np.ones_like(a), np.ones_like(b))),
    "sub": (np.subtract, lambda a, b: (np.ones_like(a), -np.ones_like(b))),
    "mul": (np.multiply, lambda a, b: (b, a)),
    "div": (np.divide, lambda a, b: (1 / b, -a / b**2)),
    "power": (np.power, lambda a, b: (b * a ** (b - 1), a**b * np.log(a))),
    "maximum": (np.maximum, lambda a, b: ((a > b) * 1.0, (a <= b) * 1.0)),
    "minimum": (np.minimum, lambda a, b: ((a < b) * 1.0, (a >= b) * 1.0)),
    "hypot": (np.hypot, lambda a, b: (a / np.hypot(a, b), b / np.hypot(a, b))),
    "mod": (np.mod, None),
    "equal": (lambda a, b: (a == b) * 1.0, None),
    "not_equal": (lambda a, b: (a != b) * 1.0, None),
    "greater": (lambda a, b: (a > b) * 1.0, None),
    "greater_equal": (lambda a, b: (a >= b) * 1.0, None),
    "lesser": (lambda a, b: (a < b) * 1.0, None),
    "lesser_equal": (lambda a, b: (a <= b) * 1.0, None),
    "logical_and": (lambda a, b: np.logical_and(a, b) * 1.0, None),
    "logical_or": (lambda a, b: np.logical_or(a, b) * 1.0, None),
    "logical_xor": (lambda a, b: np.logical_xor(a, b) * 1.0, None),
}


def _reduce_to(g, shape):
    while g.ndim > len(shape):
        g = g.sum(0)
    for i, s in enumerate(shape):
        if s == 1 and g.shape[i] != 1:
            g = g.sum(i, keepdims=True)
    return g


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (1, 3)), ((4, 1, 3), (2, 1))])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_broadcast_binary(name, shapes):
    fwd, deriv = BINARY[name]
    av = np.abs(_input("any", shapes[0], 1)) + 0.5
    bv = np.abs(_input("any", shapes[1], 2)) + 0.5
    if deriv is None:  # comparisons/logic/mod: small integers so ties and zeros occur
        av = np.random.RandomState(1).randint(0, 3, shapes[0]).astype(np.float32)
        bv = np.random.RandomState(2).randint(1, 3, shapes[1]).astype(np.float32)
    a, b = nd.array(av), nd.array(bv)
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = getattr(nd, f"broadcast_{name}")(a, b)
    ref = fwd(av.astype(np.float64), bv.astype(np.float64))
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    if deriv is not None:
        y.backward()
        ga, gb = deriv(*np.broadcast_arrays(av.astype(np.float64), bv.astype(np.float64)))
        np.testing.assert_allclose(a.grad.asnumpy(), _reduce_to(ga, av.shape), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(b.grad.asnumpy(), _reduce_to(gb, bv.shape), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "name,ref",
    [
        ("elemwise_add", np.add),
        ("elemwise_sub", np.subtract),
        ("elemwise_mul", np.multiply),
        ("elemwise_div", np.divide),
        ("_plus", np.add),
        ("_minus", np.subtract),
        ("_mul", np.multiply),
        ("_div", np.divide),
        ("_power", np.power),
        ("_maximum", np.maximum),
        ("_minimum", np.minimum),
        ("_mod", np.mod),
        ("_equal", lambda a, b: (a == b) * 1.0),
        ("_not_equal", lambda a, b: (a != b) * 1.0),
        ("_greater", lambda a, b: (a > b) * 1.0),
        ("_greater_equal", lambda a, b: (a >= b) * 1.0),
        ("_lesser", lambda a, b: (a < b) * 1.0),
        ("_lesser_equal", lambda a, b: (a <= b) * 1.0),
    ],
)
def test_elemwise_same_shape(name, ref):
    av, bv = np.abs(_input("any", (3, 4), 3)) + 0.5, np.abs(_input("any", (3, 4), 4)) + 0.5
    out = getattr(nd, name)(nd.array(av), nd.array(bv))
    np.testing.assert_allclose(out.asnumpy(), ref(av, bv), rtol=1e-5)


def test_elemwise_shape_mismatch_is_clear_error():
    with pytest.raises(mx.base.ShapeError, match="elemwise_add.*broadcast_add"):
        nd.elemwise_add(nd.ones((2, 3)), nd.ones((1, 3)))


SCALAR = {
    "_plus_scalar": lambda x, s: x + s,
    "_minus_scalar": lambda x, s: x - s,
    "_rminus_scalar": lambda x, s: s - x,
    "_mul_scalar": lambda x, s: x * s,
    "_div_scalar": lambda x, s: x / s,
    "_rdiv_scalar": lambda x, s: s / x,
    "_mod_scalar": np.mod,
    "_rmod_scalar": lambda x, s: np.mod(s, x),
    "_power_scalar": np.power,
    "_rpower_scalar": lambda x, s: np.power(s, x),
    "_maximum_scalar": np.maximum,
    "_minimum_scalar": np.minimum,
    "_hypot_scalar": np.hypot,
    "_equal_scalar": lambda x, s: (x == s) * 1.0,
    "_not_equal_scalar": lambda x, s: (x != s) * 1.0,
    "_greater_scalar": lambda x, s: (x > s) * 1.0,
    "_greater_equal_scalar": lambda x, s: (x >= s) * 1.0,
    "_lesser_scalar": lambda x, s: (x < s) * 1.0,
    "_lesser_equal_scalar": lambda x, s: (x <= s) * 1.0,
    "_logical_and_scalar": lambda x, s: np.logical_and(x, s) * 1.0,
    "_logical_or_scalar": lambda x, s: np.logical_or(x, s) * 1.0,
    "_logical_xor_scalar": lambda x, s: np.logical_xor(x, s) * 1.0,
}


@pytest.mark.parametrize("name", sorted(SCALAR))
@pytest.mark.parametrize("scalar", [1.5, "2.0"])
def test_scalar_ops(name, scalar):
    xv = np.array([[0.5, 1.5, 2.0], [3.0, 1.0, 0.25]], np.float32)
    out = getattr(nd, name)(nd.array(xv), scalar=scalar)
    np.testing.assert_allclose(out.asnumpy(), SCALAR[name](xv, float(scalar)), rtol=1e-5)


def test_scalar_value_does_not_recompile():
    from gluonjax._ops import registry

    op = registry.get("_mul_scalar")
    x = nd.ones((3,))
    x * 2.0
    before = len(op._kernels)
    for s in (3.0, 4.0, 5.5):
        np.testing.assert_allclose((x * s).asnumpy(), [s] * 3)
    assert len(op._kernels) == before


def test_operators_on_ndarray():
    av = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    a = nd.array(av)
    np.testing.assert_allclose((2 - a).asnumpy(), 2 - av)
    np.testing.assert_allclose((2 / a).asnumpy(), 2 / av)
    np.testing.assert_allclose((a**2).asnumpy(), av**2)
    np.testing.assert_allclose((2**a).asnumpy(), 2**av)
    np.testing.assert_allclose((a % 3).asnumpy(), av % 3)
    np.testing.assert_allclose((-a).asnumpy(), -av)
    np.testing.assert_allclose((a > 2).asnumpy(), (av > 2) * 1.0)
    np.testing.assert_allclose((a == a).asnumpy(), np.ones_like(av))
    np.testing.assert_allclose((a + np.ones((1, 2), np.float32)).asnumpy(), av + 1)
    a += 1
    a *= 2
    np.testing.assert_allclose(a.asnumpy(), (av + 1) * 2)


@pytest.mark.parametrize("lo,hi", [(0.0, 1.0), (-1.0, "0.5")])
def test_clip(lo, hi):
    xv = _input("any", (3, 4))
    x = nd.array(xv)
    x.attach_grad()
    with autograd.record():
        y = nd.clip(x, a_min=lo, a_max=hi)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), np.clip(xv, float(lo), float(hi)))
    np.testing.assert_allclose(x.grad.asnumpy(), ((xv >= float(lo)) & (xv <= float(hi))) * 1.0)
    np.testing.assert_allclose(nd.clip(x, lo, hi).asnumpy(), np.clip(xv, float(lo), float(hi)))


def test_add_n_where_smooth_l1():
    a, b, c = (_input("any", (2, 3), s) for s in (1, 2, 3))
    np.testing.assert_allclose(
        nd.add_n(nd.array(a), nd.array(b), nd.array(c)).asnumpy(), a + b + c, rtol=1e-6
    )
    np.testing.assert_allclose(nd.ElementWiseSum(nd.array(a), nd.array(b)).asnumpy(), a + b)
    cond = (a > 0).astype(np.float32)
    np.testing.assert_allclose(
        nd.where(nd.array(cond), nd.array(b), nd.array(c)).asnumpy(), np.where(cond != 0, b, c)
    )
    rows = np.array([1.0, 0.0], np.float32)
    np.testing.assert_allclose(
        nd.where(nd.array(rows), nd.array(b), nd.array(c)).asnumpy(),
        np.where(rows[:, None] != 0, b, c),
    )
    for s in (1.0, 2.0):
        ref = np.where(np.abs(a) < 1 / s**2, 0.5 * (s * a) ** 2, np.abs(a) - 0.5 / s**2)
        np.testing.assert_allclose(nd.smooth_l1(nd.array(a), scalar=s).asnumpy(), ref, rtol=1e-5)


def test_integer_power_with_negative_exponents_as_mxnet():
    # MXNet 1.9.1: broadcast_power of int32 [2,-3,0,1,-1,4] by [-1,-2,-3,-4,-5,3] gives
    # [0, 0, -2147483648, 1, -1, 64] (its float result truncated; inf for 0 -> INT_MIN),
    # which ONNX Runtime's Pow gives too; int64 likewise with the int64 minimum
    for dtype in ("int32", "int64"):
        base = mx.nd.array([2, -3, 0, 1, -1, 4, -1], dtype=dtype)
        exp = mx.nd.array([-1, -2, -3, -4, -5, 3, -4], dtype=dtype)
        low = np.iinfo(dtype).min
        want = np.array([0, 0, low, 1, -1, 64, 1], dtype=dtype)
        got = mx.nd.broadcast_power(base, exp).asnumpy()
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, want)
    # exact for non-negative exponents (MXNet rounds through float32: 1162261504)
    three = mx.nd.array([3], dtype="int32")
    assert (three**19).asnumpy()[0] == 3**19
