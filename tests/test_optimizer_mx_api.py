"""The optimizers through MXNet's NDArray API (``create_state``/``update`` as MXNet code
and MXNet's tests call them), and agreement with the registry's update operators."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import lr_scheduler


def _wg(shape=(3, 4), dtype="float32", seed=0):
    rng = np.random.RandomState(seed)
    w = mx.nd.array(rng.uniform(-1, 1, shape), dtype=dtype)
    g = mx.nd.array(rng.uniform(-1, 1, shape), dtype=dtype)
    return w, g


def test_state_layouts_follow_mxnet():
    w, _ = _wg()
    assert mx.optimizer.SGD().create_state(0, w) is None
    mom = mx.optimizer.SGD(momentum=0.9).create_state(0, w)
    assert isinstance(mom, mx.nd.NDArray) and mom.shape == w.shape
    mean, var = mx.optimizer.Adam().create_state(0, w)
    assert mean.shape == var.shape == w.shape
    (n,) = mx.optimizer.RMSProp().create_state(0, w)
    assert n.shape == w.shape
    w16 = w.astype("float16")
    mom, w32 = mx.optimizer.SGD(momentum=0.9, multi_precision=True).create_state_multi_precision(
        0, w16
    )
    assert mom.dtype == np.float32 and w32.dtype == np.float32
    w32, (mean, var) = mx.optimizer.Adam(multi_precision=True).create_state_multi_precision(0, w16)
    assert w32.dtype == np.float32
    # a jax weight (what the Trainer passes) still gets the rule's tuple of jax arrays
    assert isinstance(mx.optimizer.SGD(momentum=0.9).create_state(0, w._data), tuple)


@pytest.mark.parametrize(
    "opt, op, op_kw, n_states",
    [
        (
            mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01, clip_gradient=0.5),
            "sgd_mom_update",
            dict(lr=0.1, momentum=0.9, wd=0.01, clip_gradient=0.5),
            1,
        ),
        (
            mx.optimizer.Signum(learning_rate=0.1, momentum=0.9, wd_lh=0.01),
            "signum_update",
            dict(lr=0.1, momentum=0.9, wd_lh=0.01),
            1,
        ),
        (
            mx.optimizer.FTML(learning_rate=0.1, beta1=0.6, beta2=0.9),
            "ftml_update",
            dict(lr=0.1, beta1=0.6, beta2=0.9, t=1),
            3,
        ),
        (
            mx.optimizer.Ftrl(learning_rate=0.1, lamda1=0.01, beta=1.0),
            "ftrl_update",
            dict(lr=0.1, lamda1=0.01, beta=1.0),
            2,
        ),
    ],
)
def test_update_matches_the_update_operator(opt, op, op_kw, n_states):
    w, g = _wg()
    w_op = w.copy()
    state = opt.create_state_multi_precision(0, w)
    opt.update_multi_precision(0, w, g, state)
    states = [mx.nd.zeros(w.shape) for _ in range(n_states)]
    getattr(mx.nd, op)(w_op, g, *states, out=w_op, **op_kw)
    np.testing.assert_allclose(w.asnumpy(), w_op.asnumpy(), rtol=1e-5, atol=1e-6)
    got = [state] if isinstance(state, mx.nd.NDArray) else list(state)
    for a, b in zip(got, states):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)


def test_multi_precision_updates_master_copy():
    w, g = _wg(dtype="float16")
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, multi_precision=True)
    state = opt.create_state_multi_precision(0, w)
    w0 = state[1].asnumpy().copy()
    opt.update_multi_precision(0, w, g, state)
    ref = w0 - 0.1 * g.asnumpy().astype(np.float32)
    np.testing.assert_allclose(state[1].asnumpy(), ref, rtol=1e-6)
    assert w.dtype == np.float16
    np.testing.assert_allclose(w.asnumpy(), ref.astype(np.float16))


def test_subclass_in_mxnet_style():
    class PlainSGD(mx.optimizer.Optimizer):
        def create_state(self, index, weight):
            return None

        def update(self, index, weight, grad, state):
            self._update_count(index)
            weight[:] = weight - self._get_lr(index) * grad

    w, g = _wg()
    w0 = w.asnumpy()
    opt = PlainSGD(learning_rate=0.5)
    opt.update_multi_precision(0, w, g, opt.create_state_multi_precision(0, w))
    np.testing.assert_allclose(w.asnumpy(), w0 - 0.5 * g.asnumpy(), rtol=1e-6)
    assert opt._get_lrs([0, 1]) == [0.5, 0.5]


def test_set_learning_rate_with_scheduler_raises_user_warning():
    o = mx.optimizer.Optimizer(lr_scheduler=lr_scheduler.FactorScheduler(step=1), learning_rate=0.3)
    with pytest.raises(UserWarning):
        o.set_learning_rate(0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mx.optimizer.Optimizer(learning_rate=0.1).set_learning_rate(0.2)


def test_adamw_skips_a_non_finite_rescale():
    w, g = _wg()
    mean, var = mx.nd.ones(w.shape), mx.nd.ones(w.shape)
    w0 = w.asnumpy()
    mx.nd.contrib.adamw_update(w, g, mean, var, mx.nd.array([np.inf]), out=w, lr=0.1, eta=1.0)
    np.testing.assert_array_equal(w.asnumpy(), w0)
    assert mean.asnumpy().sum() == w.size and var.asnumpy().sum() == w.size
    mx.nd.contrib.adamw_update(w, g, mean, var, mx.nd.array([1.0]), out=w, lr=0.1, eta=1.0)
    assert not np.array_equal(w.asnumpy(), w0)
