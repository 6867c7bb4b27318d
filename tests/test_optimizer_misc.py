"""Optimizer details outside the fixture trajectories: SGLD's noise (statistically),
DCASGD with momentum (NumPy reference), clipping, wd multipliers, errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, gluon, nd
from gluonjax.optimizer import preprocess_grad

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

N = 20000


def _sgld_check(w0, w1, g, lr, wd, n_sigma=5.0):
    """``w1 - (w0 - lr/2 (g + wd w0))`` must be N(0, lr) noise."""
    z = (w1 - (w0 - lr / 2 * (g + wd * w0))) / np.sqrt(lr)
    n = z.size
    assert abs(z.mean()) < n_sigma / np.sqrt(n)
    assert abs(z.std() - 1.0) < n_sigma * np.sqrt(0.5 / n)
    assert abs(np.mean(z**3)) < n_sigma * np.sqrt(15.0 / n)  # symmetric
    assert abs(np.mean(z**4) - 3.0) < n_sigma * np.sqrt(96.0 / n)  # Gaussian tails
    return z


@pytest.mark.parametrize("lr, wd, rescale, clip", [(0.01, 0.0, 1.0, None), (0.04, 0.1, 0.5, 0.3)])
def test_sgld_eager_noise_is_gaussian(lr, wd, rescale, clip):
    rng = np.random.RandomState(0)
    w0 = rng.randn(N).astype(np.float32)
    g = rng.randn(N).astype(np.float32)
    o = mx.optimizer.create(
        "sgld", learning_rate=lr, wd=wd, rescale_grad=rescale, clip_gradient=clip
    )
    upd = mx.optimizer.get_updater(o)
    w = nd.array(w0)
    upd(0, nd.array(g), w)
    gc = rescale * g if clip is None else np.clip(rescale * g, -clip, clip)
    z1 = _sgld_check(w0.astype(np.float64), w.asnumpy().astype(np.float64), gc, lr, wd)
    w_mid = w.asnumpy().astype(np.float64)
    upd(0, nd.array(g), w)  # a second step draws fresh noise
    z2 = _sgld_check(w_mid, w.asnumpy().astype(np.float64), gc, lr, wd)
    assert abs(np.corrcoef(z1, z2)[0, 1]) < 5 / np.sqrt(N)


def test_sgld_trainer_noise_is_gaussian_and_per_parameter():
    rng = np.random.RandomState(1)
    ps, w0 = [], []
    for i in range(2):
        w = rng.randn(N // 2).astype(np.float32)
        p = gluon.Parameter(f"s{i}", shape=w.shape)
        p.initialize()
        p.set_data(nd.array(w))
        ps.append(p)
        w0.append(w.astype(np.float64))
    g = [rng.randn(N // 2).astype(np.float32) for _ in range(2)]
    tr = gluon.Trainer(ps, "sgld", {"learning_rate": 0.01, "wd": 0.2})
    with autograd.record():
        loss = (ps[0].data() * nd.array(g[0])).sum() + (ps[1].data() * nd.array(g[1])).sum()
    loss.backward()
    tr.step(2)  # rescale_grad = 1/2
    z = [
        _sgld_check(w0[i], ps[i].data().asnumpy().astype(np.float64), g[i] / 2, 0.01, 0.2)
        for i in range(2)
    ]
    assert abs(np.corrcoef(z[0], z[1])[0, 1]) < 5 / np.sqrt(N // 2)


def test_dcasgd_momentum_matches_numpy():
    # MXNet 1.9.1 cannot run this case (it tests an NDArray's truth value); the rule
    # is its momentum formula written out
    rng = np.random.RandomState(2)
    w = rng.randn(3, 4).astype(np.float32)
    grads = rng.randn(4, 3, 4).astype(np.float32)
    lr, mom_c, lamda, wd, clip, rescale = 0.1, 0.8, 0.3, 0.05, 0.6, 0.7
    o = mx.optimizer.create(
        "dcasgd",
        learning_rate=lr,
        momentum=mom_c,
        lamda=lamda,
        wd=wd,
        clip_gradient=clip,
        rescale_grad=rescale,
    )
    upd = mx.optimizer.get_updater(o)
    x = nd.array(w)
    ref_w, prev, mom = w.astype(np.float64), w.astype(np.float64), np.zeros_like(w, np.float64)
    for g in grads:
        upd(0, nd.array(g), x)
        gc = np.clip(rescale * g.astype(np.float64), -clip, clip)
        mom = mom_c * mom - lr * (gc + wd * ref_w + lamda * gc * gc * (ref_w - prev))
        prev = ref_w
        ref_w = ref_w + mom
        np.testing.assert_allclose(x.asnumpy(), ref_w, rtol=1e-5, atol=1e-6)


def test_clip_gradient_attribute_and_deferred_clipping():
    adam = mx.optimizer.create("adam", clip_gradient=0.5)
    sgd = mx.optimizer.create("sgd", clip_gradient=0.5)
    assert adam.clip_gradient == 0.5 and sgd.clip_gradient == 0.5
    assert adam.clip_in_step and not sgd.clip_in_step
    assert mx.optimizer.create("adam").clip_gradient is None
    g = jnp.asarray([-2.0, 0.1, 3.0])
    np.testing.assert_allclose(preprocess_grad(g, 2.0, 0.5), [-0.5, 0.2, 0.5])
    np.testing.assert_allclose(sgd.preprocess(g, 2.0), [-0.5, 0.2, 0.5])
    np.testing.assert_allclose(adam.preprocess(g, 2.0), [-4.0, 0.2, 6.0])  # Adam clips in step
    adam.clip_gradient = 1.0  # settable after construction, as in MXNet
    assert adam.clip_gradient == 1.0


@needs_mxnet
def test_wd_mult_defaults_from_param_names_match_mxnet():
    names = {0: "fc_weight", 1: "fc_bias", 2: "bn_gamma", 3: "bn_beta", 4: "emb"}
    script = f"""
import json, mxnet as mx
out = {{}}
for opt in ["sgd", "adam", "lars"]:
    o = mx.optimizer.create(opt, wd=0.1, learning_rate=0.5, param_idx2name={names!r})
    o.set_lr_mult({{"fc_bias": 2.0}})
    out[opt] = [[o._get_wd(i), o._get_lr(i)] for i in range(5)]
print(json.dumps(out))
"""
    ref = json.loads(run_mxnet(script).strip().splitlines()[-1])
    for opt, vals in ref.items():
        o = mx.optimizer.create(opt, wd=0.1, learning_rate=0.5, param_idx2name=names)
        o.set_lr_mult({"fc_bias": 2.0})
        got = [[o._get_wd(i), o._get_lr(i)] for i in range(5)]
        np.testing.assert_allclose(got, vals, err_msg=opt)


def test_errors():
    with pytest.raises(mx.MXNetError, match="unknown argument"):
        mx.optimizer.create("adam", beta3=0.1)
    with pytest.raises(mx.MXNetError, match="unknown optimizer"):
        mx.optimizer.create("adamz")
    with pytest.raises(mx.MXNetError, match="wd_lh"):
        mx.optimizer.create("signum", momentum=0.0, wd_lh=0.1)
    upd = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    with pytest.raises(mx.MXNetError):
        upd.set_states(b"not an ndarray file at all")


def test_registry_names_and_defaults():
    expect = {  # MXNet 1.9.1 defaults
        "adam": dict(lr=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8),
        "adamax": dict(lr=0.002, beta1=0.9, beta2=0.999),
        "nadam": dict(lr=0.001, schedule_decay=0.004, epsilon=1e-8),
        "rmsprop": dict(lr=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8, centered=False),
        "adagrad": dict(lr=0.01, float_stable_eps=1e-7),
        "adadelta": dict(rho=0.9, epsilon=1e-5),
        "ftrl": dict(lr=0.1, lamda1=0.01, beta=1),
        "ftml": dict(lr=0.01, beta1=0.6, beta2=0.999, epsilon=1e-8),
        "lamb": dict(lr=0.001, epsilon=1e-6, lower_bound=None, bias_correction=True),
        "lars": dict(lr=0.01, eta=0.001, eps=0, momentum=0.0),
        "signum": dict(lr=0.01, momentum=0.9, wd_lh=0.0),
        "dcasgd": dict(lamda=0.04, momentum=0.0),
        "adamw": dict(lr=0.001, epsilon=1e-6, correct_bias=True),
    }
    for name, attrs in expect.items():
        o = mx.optimizer.create(name.upper())
        for k, v in attrs.items():
            assert getattr(o, k) == v, (name, k)


def test_ftrl_row_sparse_gradient_updates_only_its_rows():
    """MXNet 1.9.1's ftrl_update on a row_sparse gradient leaves the rows it does not store
    (weight and state) as they are; the stored rows follow the FTRL rule (NumPy here)."""
    rng = np.random.RandomState(0)
    w = rng.uniform(size=(3, 4)).astype(np.float32)
    g = rng.uniform(size=(3, 4)).astype(np.float32)
    g[1] = 0
    opt = mx.optimizer.Ftrl()
    weight = mx.nd.array(w).tostype("row_sparse")
    grad = mx.nd.array(g).tostype("row_sparse")
    state = opt.create_state(0, weight)
    opt.update(0, weight, grad, state)
    lr, lamda1, beta = 0.1, 0.01, 1.0
    z = g - np.sqrt(g * g) * w / lr
    n = g * g
    want = (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / lr) * (np.abs(z) > lamda1)
    want[1] = w[1]
    np.testing.assert_allclose(weight.asnumpy(), want, rtol=1e-5, atol=1e-7)
