"""Random operators and ``nd.random``: shapes, dtypes, seeding, moments, bounds.

Moments are checked on 20k draws against the distributions' closed-form mean and
variance (tolerance: 6 standard errors for the mean, 12% for the variance).
"""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax._ops import registry
from gluonjax.base import MXNetError

nd = mx.nd
N = 20000

# name -> (function, args, mean, variance)
DISTS = {
    "uniform": (nd.random.uniform, (-1.0, 3.0), 1.0, 16 / 12),
    "normal": (nd.random.normal, (2.0, 0.5), 2.0, 0.25),
    "exponential": (nd.random.exponential, (2.0,), 2.0, 4.0),
    "gamma": (nd.random.gamma, (2.0, 3.0), 6.0, 18.0),
    "poisson": (nd.random.poisson, (3.0,), 3.0, 3.0),
    "negative_binomial": (nd.random.negative_binomial, (3, 0.4), 3 * 0.6 / 0.4, 3 * 0.6 / 0.16),
    "generalized_negative_binomial": (
        nd.random.generalized_negative_binomial,
        (2.0, 0.5),
        2.0,
        2.0 + 0.5 * 4.0,
    ),
}


def _check_moments(x, mean, var, axis=None):
    x = np.asarray(x, np.float64)
    n = x.size if axis is None else x.shape[axis]
    m, v = x.mean(axis=axis), x.var(axis=axis)
    np.testing.assert_array_less(np.abs(m - mean), 6 * np.sqrt(np.asarray(var) / n))
    np.testing.assert_array_less(np.abs(v - var), 0.12 * np.asarray(var))


CHEAP = ["uniform", "normal", "exponential"]  # gamma/poisson kernels take seconds to compile


@pytest.mark.parametrize(
    "name,shape",
    [(n, s) for n in CHEAP for s in [(3,), (2, 3), 4]]
    + [(n, (2, 3)) for n in DISTS if n not in CHEAP],
)
def test_shape_and_default_dtype(name, shape):
    fn, args, _, _ = DISTS[name]
    out = fn(*args, shape=shape)
    assert out.shape == ((shape,) if isinstance(shape, int) else shape)
    assert out.dtype == np.float32


@pytest.mark.parametrize("name", ["uniform", "normal", "gamma", "poisson"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_dtype(name, dtype):
    fn, args, _, _ = DISTS[name]
    assert fn(*args, shape=(2, 2), dtype=dtype).dtype == np.dtype(dtype)


def test_no_shape_gives_one_element():
    # MXNet 1.9.1: nd.random.uniform() has shape (1,)
    assert nd.random.uniform().shape == (1,)
    assert nd.random.normal(dtype="float16").shape == (1,)


@pytest.mark.parametrize("name", list(DISTS))
def test_moments(name):
    fn, args, mean, var = DISTS[name]
    mx.random.seed(11)
    _check_moments(fn(*args, shape=(N,)).asnumpy(), mean, var)


@pytest.mark.parametrize("name", list(DISTS))
def test_seed_reproducible_and_fresh_draws(name):
    fn, args, _, _ = DISTS[name]
    shape = (2, 3) if name in CHEAP else (N,)  # reuse kernels compiled by other tests
    mx.random.seed(42)
    a, b = fn(*args, shape=shape).asnumpy(), fn(*args, shape=shape).asnumpy()
    mx.random.seed(42)
    c, d = fn(*args, shape=shape).asnumpy(), fn(*args, shape=shape).asnumpy()
    np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(b, d)
    assert not np.array_equal(a, b)
    mx.random.seed(43)
    assert not np.array_equal(fn(*args, shape=shape).asnumpy(), a)


def test_uniform_range_and_poisson_integral():
    u = nd.random.uniform(2.0, 2.5, shape=(5000,)).asnumpy()
    assert u.min() >= 2.0 and u.max() < 2.5
    for name in ("poisson", "negative_binomial", "generalized_negative_binomial"):
        fn, args, _, _ = DISTS[name]
        x = fn(*args, shape=(N,)).asnumpy()
        np.testing.assert_array_equal(x, np.round(x))
        assert x.min() >= 0


@pytest.mark.parametrize("low,high", [(0, 5), (-3, 4), (10, 11)])
def test_randint_bounds(low, high):
    x = nd.random.randint(low, high, shape=(4000,))
    assert x.dtype == np.int32
    v = x.asnumpy()
    assert v.min() >= low and v.max() < high
    assert set(np.unique(v)) == set(range(low, high))
    counts = np.bincount(v - low) / v.size
    np.testing.assert_allclose(counts, 1 / (high - low), atol=0.03)


def test_randint_errors():
    with pytest.raises(MXNetError):
        nd.random.randint(5, 2, shape=(3,))
    with pytest.raises(MXNetError):
        nd.random.randint(nd.array([0]), nd.array([2]))


@pytest.mark.parametrize("shape", [(10,), (6, 3), (5, 2, 2)])
def test_shuffle_is_permutation(shape):
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    mx.random.seed(0)
    outs = [nd.random.shuffle(nd.array(data)).asnumpy() for _ in range(4)]
    for out in outs:
        assert out.shape == data.shape
        rows = sorted(map(tuple, out.reshape(shape[0], -1)))
        assert rows == sorted(map(tuple, data.reshape(shape[0], -1)))  # rows intact
    assert any(not np.array_equal(o, data) for o in outs)
    assert nd.shuffle(nd.array(data)).shape == shape  # the op alias


def test_multinomial_frequencies():
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32)
    mx.random.seed(5)
    s = nd.random.multinomial(nd.array(probs), shape=(N,))
    assert s.shape == (2, N) and s.dtype == np.int32
    v = s.asnumpy()
    for row, p in zip(v, probs, strict=True):
        freq = np.bincount(row, minlength=3) / N
        np.testing.assert_allclose(freq, p, atol=6 * np.sqrt(0.25 / N))


def test_multinomial_shapes_and_log_prob():
    probs = np.array([[0.3, 0.7], [0.9, 0.1]], np.float32)
    assert nd.random.multinomial(nd.array(probs)).shape == (2,)
    assert nd.random.multinomial(nd.array(probs[0])).shape == (1,)  # MXNet: (1,)
    assert nd.random.multinomial(nd.array(probs[0]), shape=3).shape == (3,)
    assert nd.random.multinomial(nd.array(probs), dtype="float32").dtype == np.float32
    s, lp = nd.random.multinomial(nd.array(probs), shape=(5,), get_prob=True)
    idx = s.asnumpy()
    expect = np.log(np.take_along_axis(probs, idx, axis=1))
    np.testing.assert_allclose(lp.asnumpy(), expect, rtol=1e-6)


def test_multinomial_log_prob_gradient():
    probs = np.array([[0.2, 0.8], [0.6, 0.4]], np.float32)
    p = nd.array(probs)
    p.attach_grad()
    with mx.autograd.record():
        s, lp = nd.random.multinomial(p, shape=(6,), get_prob=True)
    lp.backward()
    idx = s.asnumpy()
    expect = np.zeros_like(probs)
    for r in range(2):  # d/dp sum(log p[idx]) = count / p
        expect[r] = np.bincount(idx[r], minlength=2) / probs[r]
    np.testing.assert_allclose(p.grad.asnumpy(), expect, rtol=1e-5)


# ----------------------------------------------------------------------------- per-element
def test_sample_normal_and_uniform_per_element():
    mx.random.seed(1)
    loc, scale = np.array([0.0, 10.0], np.float32), np.array([1.0, 0.5], np.float32)
    x = nd.random.normal(nd.array(loc), nd.array(scale), shape=(N,))
    assert x.shape == (2, N)
    _check_moments(x.asnumpy(), loc, scale**2, axis=1)
    lo, hi = np.array([[0.0], [5.0]], np.float32), np.array([[1.0], [9.0]], np.float32)
    u = nd.random.uniform(nd.array(lo), nd.array(hi), shape=(N,)).asnumpy()
    assert u.shape == (2, 1, N)
    assert (u >= lo[..., None]).all() and (u < hi[..., None]).all()
    _check_moments(u[:, 0], (lo + hi)[:, 0] / 2, ((hi - lo) ** 2)[:, 0] / 12, axis=-1)
    assert nd.sample_uniform(nd.zeros((3,)), nd.ones((3,))).shape == (3,)


@pytest.mark.parametrize(
    "name,params,mean,var",
    [
        ("exponential", ([1.0, 4.0],), [1.0, 4.0], [1.0, 16.0]),
        ("gamma", ([2.0, 0.5], [1.0, 3.0]), [2.0, 1.5], [2.0, 4.5]),
        ("poisson", ([1.0, 20.0],), [1.0, 20.0], [1.0, 20.0]),
        ("negative_binomial", ([2.0, 5.0], [0.5, 0.8]), [2.0, 1.25], [4.0, 1.5625]),
        ("generalized_negative_binomial", ([3.0, 1.0], [0.0, 1.0]), [3.0, 1.0], [3.0, 2.0]),
    ],
)
def test_sample_ops_per_element_moments(name, params, mean, var):
    mx.random.seed(2)
    args = [nd.array(np.array(p, np.float32)) for p in params]
    x = getattr(nd.random, name)(*args, shape=(N,))
    assert x.shape == (2, N)
    _check_moments(x.asnumpy(), np.array(mean), np.array(var), axis=1)


def test_sample_params_get_no_gradient():
    # MXNet 1.9.1: the gradient of a sample with respect to its parameters is zero
    mu = nd.array([0.0, 1.0])
    mu.attach_grad()
    with mx.autograd.record():
        y = nd.random.normal(mu, nd.array([1.0, 1.0]), shape=(3,))
    y.backward()
    np.testing.assert_array_equal(mu.grad.asnumpy(), np.zeros(2))


def test_mixed_parameters_rejected():
    with pytest.raises(MXNetError, match="numbers or all be NDArrays"):
        nd.random.uniform(nd.array([0.0]), 2.0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: nd.random.uniform(2, 1, shape=(2,)),
        lambda: nd.random.normal(0, -1, shape=(2,)),
        lambda: nd.random.gamma(-1, 1, shape=(2,)),
        lambda: nd.random.poisson(-1, shape=(2,)),
        lambda: nd.random.negative_binomial(2, 1.5, shape=(2,)),
    ],
)
def test_invalid_parameters(call):
    with pytest.raises(MXNetError):
        call()


@pytest.mark.parametrize(
    "name,dtype",
    [(n, d) for n in CHEAP for d in ["float32", "float16"]]
    + [("gamma", "float32"), ("poisson", "float16")],
)
def test_like_ops(name, dtype):
    data = nd.zeros((3, 4), dtype=dtype)
    out = getattr(nd.random, name + "_like")(data)
    assert out.shape == (3, 4) and out.dtype == np.dtype(dtype)


def test_like_moments():
    mx.random.seed(9)
    x = nd.random.normal_like(nd.zeros((N,)), loc=1.0, scale=2.0).asnumpy()
    _check_moments(x, 1.0, 4.0)
    x = nd.random.uniform_like(nd.zeros((N,)), low=-2.0, high=0.0).asnumpy()
    assert x.min() >= -2 and x.max() < 0
    _check_moments(x, -1.0, 4 / 12)


# ----------------------------------------------------------------------------- ops / nd layer
def test_registry_names_and_string_attrs():
    for n in (
        "_random_uniform",
        "random_uniform",
        "uniform",
        "_random_normal",
        "normal",
        "random_normal",
        "_random_randint",
        "_sample_multinomial",
        "sample_multinomial",
        "_shuffle",
        "shuffle",
        "_sample_uniform",
        "sample_normal",
        "_random_uniform_like",
        "_random_normal_like",
    ):
        assert registry.get(n).random
    x = nd._random_uniform(low="2", high="3", shape="(2, 2)", dtype="float16").asnumpy()
    assert x.shape == (2, 2) and x.dtype == np.float16
    assert ((x >= 2) & (x <= 3)).all()
    v = nd._random_randint(low="1", high="3", shape="(50,)").asnumpy()
    assert set(np.unique(v)) <= {1, 2}


def test_new_parameter_values_do_not_recompile():
    op = registry.get("_random_normal")
    nd.random.normal(0.0, 1.0, shape=(7, 3))
    before = len(op._kernels)
    for loc in (1.0, 2.0, 3.0):
        x = nd.random.normal(loc, 0.001, shape=(7, 3)).asnumpy()
        np.testing.assert_allclose(x, loc, atol=0.01)
    assert len(op._kernels) == before


def test_ctx_and_out():
    x = nd.random.uniform(shape=(2, 3), ctx=mx.cpu(0))
    assert x.context == mx.cpu(0)
    out = nd.zeros((4,))
    res = nd.random.normal(5.0, 0.001, shape=(4,), out=out)
    assert res is out
    np.testing.assert_allclose(out.asnumpy(), 5.0, atol=0.01)


def test_randn():
    mx.random.seed(4)
    assert nd.random.randn(2, 3).shape == (2, 3)
    x = nd.random.randn(N, loc=3.0, scale=2.0).asnumpy()
    _check_moments(x, 3.0, 4.0)
    assert nd.random_normal is nd.random.normal and nd.random_uniform is nd.random.uniform
