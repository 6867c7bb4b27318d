"""``mx.random``: samplers re-exported from ``nd.random``, per-context seeding,
``sym.random``, and the samplers' distributions (moments and a chi-square test)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

import gluonjax as mx
from gluonjax.test_utils import gen_buckets_probs_with_ppf, verify_generator


def test_mx_random_has_the_samplers():
    for name in (
        "uniform",
        "normal",
        "randn",
        "poisson",
        "exponential",
        "gamma",
        "negative_binomial",
        "generalized_negative_binomial",
        "multinomial",
        "randint",
        "shuffle",
    ):
        assert getattr(mx.random, name) is getattr(mx.nd.random, name)
    assert mx.rnd is mx.random


def test_seed_reproduces_and_differs():
    mx.random.seed(11)
    a = mx.random.uniform(shape=(5,)).asnumpy()
    b = mx.random.uniform(shape=(5,)).asnumpy()
    mx.random.seed(11)
    assert np.array_equal(mx.random.uniform(shape=(5,)).asnumpy(), a)
    assert not np.array_equal(a, b)
    mx.random.seed(12)
    assert not np.array_equal(mx.random.uniform(shape=(5,)).asnumpy(), a)


@pytest.mark.parametrize("seed", [-(2**31), 2**31 + 5, 2**40 + 3])
def test_seed_accepts_any_int(seed):
    mx.random.seed(seed)
    a = mx.random.normal(shape=(3,)).asnumpy()
    mx.random.seed(seed)
    assert np.array_equal(mx.random.normal(shape=(3,)).asnumpy(), a)


def test_seed_rejects_non_integers():
    with pytest.raises(mx.MXNetError, match="integer"):
        mx.random.seed("abc")
    with pytest.raises(mx.MXNetError, match="'all'"):
        mx.random.seed(1, ctx="some")


def test_seed_per_context():
    ctx = mx.cpu(0)
    mx.random.seed(5)
    ref = mx.random.uniform(shape=(4,)).asnumpy()
    mx.random.seed(99)  # all contexts
    mx.random.seed(5, ctx=ctx)  # only cpu(0): the same stream as seed(5)
    assert np.array_equal(mx.random.uniform(shape=(4,), ctx=ctx).asnumpy(), ref)
    with ctx:
        mx.random.seed(5, ctx=ctx)
        assert np.array_equal(mx.nd.random.uniform(shape=(4,)).asnumpy(), ref)
    mx.random.seed(5)  # 'all' resets the per-context generators too
    assert np.array_equal(mx.random.uniform(shape=(4,)).asnumpy(), ref)


def test_sym_random_matches_nd_semantics():
    mu, sigma = mx.sym.var("mu"), mx.sym.var("sigma")
    s = mx.sym.random.normal(mu, sigma, shape=(2000,))
    assert s.list_arguments() == ["mu", "sigma"]
    ex = s.bind(mx.cpu(), {"mu": mx.nd.array([0.0, 10.0]), "sigma": mx.nd.array([1.0, 0.1])})
    out = ex.forward()[0].asnumpy()
    assert out.shape == (2, 2000)
    np.testing.assert_allclose(out.mean(axis=1), [0.0, 10.0], atol=0.1)
    u = mx.sym.random.uniform(low=2, high=3, shape=(3, 4)).eval()[0].asnumpy()
    assert u.shape == (3, 4) and u.min() >= 2 and u.max() < 3
    with pytest.raises(mx.MXNetError, match="all be numbers or all be"):
        mx.sym.random.uniform(0, mu)
    # a seed before the forward reproduces a graph's draws
    g = mx.sym.random.uniform(shape=(5,))
    ex = g.bind(mx.cpu(), {})
    mx.random.seed(3)
    first = ex.forward()[0].asnumpy()
    mx.random.seed(3)
    assert np.array_equal(ex.forward()[0].asnumpy(), first)


@pytest.mark.parametrize(
    "draw, mean, std",
    [
        (lambda n: mx.nd.random.gamma(0.5, 2.0, shape=n), 1.0, np.sqrt(2.0)),
        (lambda n: mx.nd.random.gamma(9.0, 0.5, shape=n), 4.5, 1.5),
        (lambda n: mx.nd.random.exponential(0.25, shape=n), 0.25, 0.25),
        (lambda n: mx.nd.random.poisson(4.0, shape=n), 4.0, 2.0),
        (lambda n: mx.nd.random.negative_binomial(3, 0.4, shape=n), 4.5, np.sqrt(3 * 0.6) / 0.4),
        (
            lambda n: mx.nd.random.generalized_negative_binomial(2.0, 0.3, shape=n),
            2.0,
            np.sqrt(2.0 + 0.3 * 4.0),
        ),
        (lambda n: mx.nd.random.randn(n, loc=1.0, scale=2.0), 1.0, 2.0),
    ],
)
def test_sampler_moments(draw, mean, std):
    mx.random.seed(7)
    x = draw(20000).asnumpy().astype(np.float64)
    assert abs(x.mean() - mean) < 0.05 * max(1.0, std)
    assert abs(x.std() - std) < 0.05 * max(1.0, std)


def test_gamma_chi_square():
    mx.random.seed(8)
    buckets, probs = gen_buckets_probs_with_ppf(lambda q: ss.gamma.ppf(q, a=0.5, scale=1.0), 5)
    verify_generator(
        lambda n: mx.nd.random.gamma(0.5, 1.0, shape=n).asnumpy(),
        buckets,
        probs,
        nsamples=20000,
        nrepeat=3,
    )


def test_per_element_gamma_parameters():
    mx.random.seed(9)
    x = mx.nd.random.gamma(mx.nd.array([0.2, 3.0]), mx.nd.array([1.0, 0.5]), shape=(20000,))
    np.testing.assert_allclose(x.asnumpy().mean(axis=1), [0.2, 1.5], rtol=0.05)


def test_multinomial_get_prob_and_dtype():
    probs = mx.nd.array([[0.1, 0.9], [0.7, 0.3]])
    s, logp = mx.random.multinomial(probs, shape=4000, get_prob=True, dtype="float32")
    assert s.dtype == np.float32 and s.shape == (2, 4000)
    np.testing.assert_allclose(s.asnumpy().mean(axis=1), [0.9, 0.3], atol=0.03)
    expected = np.log(np.where(s.asnumpy() == 1, [[0.9], [0.3]], [[0.1], [0.7]]))
    np.testing.assert_allclose(logp.asnumpy(), expected, rtol=1e-5)
