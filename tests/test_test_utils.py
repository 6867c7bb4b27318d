"""``gluonjax.test_utils``: MXNet's testing helpers written for gluonjax."""

from __future__ import annotations

import os

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import test_utils as tu


def test_star_import_surface():
    ns = {}
    exec("from gluonjax.test_utils import *", ns)  # noqa: S102  (MXNet's tests do this)
    for name in (
        "assert_almost_equal",
        "same",
        "default_context",
        "rand_ndarray",
        "np",
        "mx",
        "array",
        "sys",
        "os",
        "check_numeric_gradient",
        "compare_optimizer",
        "environment",
        "verify_generator",
        "use_np",
        "set_default_context",
    ):
        assert name in ns, name


def test_tolerances_by_dtype():
    assert tu.get_tols(np.ones(1, np.float16), np.ones(1, np.float32), None, None) == (1e-2, 1e-1)
    assert tu.get_tols(np.ones(1, np.float32), np.ones(1, np.float64), None, None) == (1e-4, 1e-3)
    assert tu.get_tols(np.ones(1, np.int32), np.ones(1, np.int32), None, None) == (0, 0)
    assert tu.get_tols(np.ones(1), np.ones(1), 0.5, {np.dtype(np.float64): 0.2}) == (0.5, 0.2)
    assert tu.effective_dtype(mx.nd.ones(2)) == np.float32


def test_assert_almost_equal_and_friends():
    tu.assert_almost_equal(mx.nd.array([1.0, 2.0]), np.array([1.0005, 2.0]))
    with pytest.raises(AssertionError, match="Location of maximum error"):
        tu.assert_almost_equal(np.array([1.0, 2.0]), np.array([1.0, 2.5]), names=("x", "y"))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.ones((2, 1)), np.ones(2), use_broadcast=False)
    tu.assert_almost_equal(np.array([np.nan]), np.array([np.nan]), equal_nan=True)
    assert tu.almost_equal(np.array([1.0]), np.array([1.0 + 1e-7]))
    assert not tu.almost_equal(np.array([1.0]), np.array([1.001]))
    assert tu.same(mx.nd.array([1, 2]), np.array([1, 2], np.float32))
    tu.assert_almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([5.0, 1.0]))
    tu.assert_exception(lambda: 1 / 0, ZeroDivisionError)
    with pytest.raises(AssertionError):
        tu.assert_exception(lambda: 1, ZeroDivisionError)


def test_retry_reruns_failing_assertions():
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) == 2

    flaky()
    assert len(calls) == 2


def test_random_data_follows_np_random():
    np.random.seed(3)
    a = tu.random_arrays((2, 3), (4,))
    np.random.seed(3)
    b = [np.random.randn(2, 3).astype(np.float32), np.random.randn(4).astype(np.float32)]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    s = tu.rand_shape_nd(4, dim=3)
    assert len(s) == 4 and all(1 <= d <= 3 for d in s)
    assert len(tu.rand_shape_2d()) == 2 and len(tu.rand_shape_3d()) == 3
    assert tu.rand_ndarray((2, 3)).shape == (2, 3)
    low = tu.random_uniform_arrays((50,), low=2, high=3)[0]
    assert low.min() >= 2 and low.max() < 3
    assert sorted(tu.random_sample([1, 2, 3, 4], 4)) == [1, 2, 3, 4]
    red = tu.np_reduce(np.arange(24.0).reshape(2, 3, 4), (0, 2), True, np.sum)
    assert red.shape == (1, 3, 1)
    np.testing.assert_array_equal(red.ravel(), np.arange(24.0).reshape(2, 3, 4).sum((0, 2)))


def test_check_symbolic_forward_backward_and_numeric_gradient():
    x, w = mx.sym.var("x"), mx.sym.var("w")
    y = mx.sym.sum(mx.sym.square(x) * w, axis=1)
    xv, wv = np.array([[1.0, -2.0], [0.5, 3.0]]), np.array([[2.0, 1.0], [1.0, 0.5]])
    tu.check_symbolic_forward(y, [xv, wv], [(xv**2 * wv).sum(1)])
    tu.check_symbolic_forward(y, {"x": xv, "w": wv}, {y.list_outputs()[0]: (xv**2 * wv).sum(1)})
    head = np.array([1.0, 2.0])
    tu.check_symbolic_backward(
        y, [xv, wv], [head], [2 * xv * wv * head[:, None], xv**2 * head[:, None]]
    )
    tu.check_symbolic_backward(
        y, [xv, wv], [head], {"x": 2 * xv * wv * head[:, None]}, grad_req={"x": "add", "w": "null"}
    )
    tu.check_numeric_gradient(y, [xv, wv], rtol=1e-2, atol=1e-2)
    with pytest.raises(AssertionError):
        tu.check_symbolic_forward(y, [xv, wv], [np.zeros(2)])


def test_check_consistency_between_dtypes():
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    ctx_list = [
        {"ctx": mx.cpu(0), "data": (2, 4), "type_dict": {"data": np.float32}},
        {"ctx": mx.cpu(0), "data": (2, 4), "type_dict": {"data": np.float16}},
    ]
    gt = tu.check_consistency(sym, ctx_list, rtol=1e-2, atol=1e-2)
    assert "fc_output" in gt


def test_compare_optimizer_single_and_multi_tensor():
    tu.compare_optimizer(mx.optimizer.Adam(), mx.optimizer.Adam(), (3, 4), np.float32)
    tu.compare_optimizer(
        mx.optimizer.SGD(momentum=0.9, multi_precision=True),
        mx.optimizer.SGD(momentum=0.9, multi_precision=True),
        (3, 4),
        np.float16,
        rtol=1e-3,
        atol=1e-3,
    )
    tu.compare_optimizer(
        mx.optimizer.SGD(), mx.optimizer.SGD(), [(2, 3), (4,)], np.float32, ntensors=2
    )
    with pytest.raises(AssertionError):
        tu.compare_optimizer(
            mx.optimizer.SGD(learning_rate=0.1),
            mx.optimizer.SGD(learning_rate=0.5),
            (3, 4),
            np.float32,
        )


def test_statistics_helpers():
    np.random.seed(0)
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda q: q, 4)
    assert probs == [0.25] * 4 and buckets[0] == (0.0, 0.25)
    p, obs, exp = tu.chi_square_check(
        lambda n: np.random.uniform(size=n), buckets, probs, nsamples=4000
    )
    assert obs.sum() == 4000 and p > 1e-4
    tu.verify_generator(lambda n: np.random.uniform(size=n), buckets, probs, nsamples=4000)
    with pytest.raises(AssertionError, match="generator test failed"):
        tu.verify_generator(lambda n: np.random.uniform(size=n) ** 2, buckets, probs, nsamples=4000)
    assert tu.mean_check(lambda n: np.random.normal(0, 1, n), 0, 1, nsamples=10000)


def test_environment_and_context_helpers():
    key = "GLUONJAX_TEST_UTILS_VAR"
    os.environ.pop(key, None)
    with tu.environment({key: "a"}):
        assert os.environ[key] == "a"
        with tu.environment(key, None):
            assert key not in os.environ
        assert os.environ[key] == "a"
    assert key not in os.environ
    assert tu.default_context() == mx.current_context()
    assert tu.default_dtype() == np.float32
    assert list(tu.list_gpus()) == list(range(mx.context.num_gpus()))
    with tu.discard_stderr():
        pass
    old = mx.current_context()
    tu.set_default_context(mx.cpu(0))
    assert tu.default_context() == mx.cpu(0)
    tu.set_default_context(old)
