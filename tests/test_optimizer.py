"""Optimizers against MXNet 1.9.1 trajectories (tests/fixtures/optimizers.npz).

The fixture (tools/make_optimizer_fixtures.py, run with the MXNet interpreter)
holds, for every case, both weights after each of 5 updates with fixed gradients
made by ``mx.optimizer.get_updater``. Each case is replayed three ways here: the
eager Updater, a ``jax.jit``-compiled ``lax.scan`` over ``Optimizer.step``, and
``gluon.Trainer`` with gradients from a real backward pass.
"""

from __future__ import annotations

import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, gluon, nd
from gluonjax._io import read_arrays, write_arrays

FIX = np.load(Path(__file__).parent / "fixtures" / "optimizers.npz")
CASES = json.loads(str(FIX["cases"]))
STEPS = int(FIX["steps"])
W0 = [FIX["init_w0"], FIX["init_w1"]]
GRADS = [FIX["grads_g0"], FIX["grads_g1"]]
TOL = dict(rtol=1e-5, atol=1e-6)
IDS = [c[0] for c in CASES]


def _sched(ex, lr):
    spec = ex.get("sched")
    if spec is None:
        return None
    kw = {k: v for k, v in spec.items() if k != "class"}
    return getattr(mx.lr_scheduler, spec["class"])(base_lr=lr, **kw)


def _make(opt, kw, ex, with_mults=True):
    kw = dict(kw)
    sched = _sched(ex, kw.get("learning_rate", 0.01))
    if sched is not None:
        kw["lr_scheduler"] = sched
    if "idx2name" in ex:
        kw["param_idx2name"] = {int(k): v for k, v in ex["idx2name"].items()}
    o = mx.optimizer.create(opt, **kw)
    if with_mults and "lr_mult" in ex:
        o.set_lr_mult(dict(enumerate(ex["lr_mult"])))
        o.set_wd_mult(dict(enumerate(ex["wd_mult"])))
    return o


def _expected(name, t, i):
    return FIX[f"{name}__w{i}"][t]


@pytest.mark.parametrize("name, opt, kw, ex", CASES, ids=IDS)
def test_eager_updater_matches_mxnet(name, opt, kw, ex):
    mode = ex.get("mode", "single")
    if mode == "separate":  # one optimizer per parameter, as the fixture
        upds = [mx.optimizer.get_updater(_make(opt, kw, ex)) for _ in range(2)]
    else:
        upd = mx.optimizer.get_updater(_make(opt, kw, ex))
        upds = [upd, upd]
    ws = [nd.array(w) for w in W0]
    for t in range(STEPS):
        gs = [nd.array(GRADS[i][t]) for i in range(2)]
        if mode == "list":
            upds[0]([0, 1], gs, ws)
        else:
            for i in range(2):
                upds[i](i, gs[i], ws[i])
        for i in range(2):
            np.testing.assert_allclose(
                ws[i].asnumpy(), _expected(name, t, i), **TOL, err_msg=f"step {t + 1}, weight {i}"
            )


@pytest.mark.parametrize("name, opt, kw, ex", CASES, ids=IDS)
def test_jit_scan_of_step_matches_mxnet(name, opt, kw, ex):
    o = _make(opt, kw, ex)
    lrs, wds, ts = [], [], []
    for _ in range(STEPS):  # the per-step scalars, computed on the host like the Trainer
        o._update_count([0, 1])
        lrs.append([o._get_lr(i) for i in range(2)])
        wds.append([o._get_wd(i) for i in range(2)])
        ts.append([o._index_update_count[i] for i in range(2)])
    ws = [jnp.asarray(w) for w in W0]
    states = [o.create_state(i, ws[i]) for i in range(2)]
    rescale = o.rescale_grad

    def body(carry, x):
        ws, states = carry
        gs, lr, wd, t = x
        new_w, new_s = [], []
        for k in range(2):
            g = o.preprocess(gs[k], rescale)
            w, s = o.step(ws[k], g, states[k], lr[k], wd[k], t[k], None)
            new_w.append(w.astype(ws[k].dtype))
            new_s.append(s)
        return (new_w, new_s), new_w

    run = jax.jit(lambda ws, states, xs: jax.lax.scan(body, (ws, states), xs)[1])
    xs = (
        [jnp.asarray(g) for g in GRADS],
        jnp.asarray(lrs, jnp.float32),
        jnp.asarray(wds, jnp.float32),
        jnp.asarray(ts, jnp.int32),
    )
    traj = run(ws, states, xs)
    for i in range(2):
        np.testing.assert_allclose(np.asarray(traj[i]), FIX[f"{name}__w{i}"], **TOL)


# one or two cases per optimizer: schedules, multipliers, clipping and wd together
TRAINER_NAMES = [
    "sgd_clip_mult",
    "sgd_list_sched",
    "nag_sched",
    "nag_mom",
    "adam_wd_clip",
    "adam_betas_mult_sched",
    "adamw_mult",
    "adagrad_mult",
    "adadelta_wd_clip",
    "rmsprop_gamma_cw",
    "rmsprop_centered_sched",
    "adamax_wd_clip",
    "nadam_wd_clip",
    "ftrl_wd_clip",
    "ftml_wd_clip",
    "lamb_bounds",
    "lamb_nobias_list",
    "lars_mom",
    "lars_clip",
    "signum_wd",
    "signsgd",
    "dcasgd_wd_clip",
]
TRAINER_CASES = [c for c in CASES if c[0] in TRAINER_NAMES]


@pytest.mark.parametrize("name, opt, kw, ex", TRAINER_CASES, ids=[c[0] for c in TRAINER_CASES])
def test_trainer_matches_mxnet(name, opt, kw, ex):
    mults = list(zip(ex.get("lr_mult", [1.0, 1.0]), ex.get("wd_mult", [1.0, 1.0]), strict=True))
    params = []
    for i, w in enumerate(W0):
        p = gluon.Parameter(f"p{i}", shape=w.shape, lr_mult=mults[i][0], wd_mult=mults[i][1])
        p.initialize()
        p.set_data(nd.array(w))
        params.append(p)
    kw = dict(kw)
    sched = _sched(ex, kw.get("learning_rate", 0.01))
    if sched is not None:
        kw["lr_scheduler"] = sched
    tr = gluon.Trainer(params, opt, kw)
    for t in range(STEPS):
        g = [nd.array(GRADS[i][t]) for i in range(2)]
        with autograd.record():  # d loss / d p_i = G_i exactly
            loss = (params[0].data() * g[0]).sum() + (params[1].data() * g[1]).sum()
        loss.backward()
        tr.step(1)
        for i in range(2):
            np.testing.assert_allclose(
                params[i].data().asnumpy(),
                _expected(name, t, i),
                **TOL,
                err_msg=f"step {t + 1}, weight {i}",
            )


@pytest.mark.parametrize(
    "case",
    [
        "adam_betas_mult_sched",
        "rmsprop_centered",
        "nadam_wd_clip",
        "lars_sched_names",
        "ftml_wd_clip",
    ],
)
def test_updater_states_roundtrip_without_pickle(case):
    name, opt, kw, ex = next(c for c in CASES if c[0] == case)
    mode = ex.get("mode", "single")
    upd = mx.optimizer.get_updater(_make(opt, kw, ex))
    ws = [nd.array(w) for w in W0]

    def run(u, t):
        gs = [nd.array(GRADS[i][t]) for i in range(2)]
        if mode == "list":
            u([0, 1], gs, ws)
        else:
            for i in range(2):
                u(i, gs[i], ws[i])

    for t in range(2):
        run(upd, t)
    blob = upd.get_states(dump_optimizer=True)
    assert isinstance(blob, bytes) and b"pickle" not in blob
    arrays, names = read_arrays(blob)  # MXNet's NDArray-list format
    assert "__meta__" in names
    # a fresh updater with a fresh optimizer restores states, counts and schedule
    fresh = mx.optimizer.get_updater(mx.optimizer.create(opt))
    fresh.set_states(blob)
    assert type(fresh.optimizer) is type(upd.optimizer)
    for t in range(2, STEPS):
        run(fresh, t)
        for i in range(2):
            np.testing.assert_allclose(ws[i].asnumpy(), _expected(name, t, i), **TOL)


def test_updater_states_only_keep_optimizer():
    name, opt, kw, ex = next(c for c in CASES if c[0] == "adagrad_wd_clip")
    o = _make(opt, kw, ex)
    upd = mx.optimizer.get_updater(o)
    ws = [nd.array(w) for w in W0]
    for i in range(2):
        upd(i, nd.array(GRADS[i][0]), ws[i])
    blob = upd.get_states()
    upd2 = mx.optimizer.get_updater(o)  # same optimizer object keeps its counts
    upd2.set_states(blob)
    assert upd2.optimizer is o and sorted(upd2.states) == [0, 1]
    for i in range(2):
        upd2(i, nd.array(GRADS[i][1]), ws[i])
        np.testing.assert_allclose(ws[i].asnumpy(), _expected(name, 1, i), **TOL)
    with pytest.raises(mx.MXNetError):
        upd2.set_states(write_arrays([np.zeros(2, np.float32)], ["x"]))
