"""Write optimizer and lr-scheduler reference trajectories computed by MXNet 1.9.1.

Run with the reference interpreter::

    .venv-mxnet/bin/python tools/make_optimizer_fixtures.py

Outputs (relative to the repository): ``tests/fixtures/optimizers.npz`` (for every
case, the two weights after each of 5 updates, plus the case list as JSON) and
``tests/fixtures/lr_schedulers.npz`` (schedule values at many ``num_update``).
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import mxnet as mx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures"
STEPS = 5
MULTS = {"lr_mult": [1.0, 0.5], "wd_mult": [1.0, 0.0]}
FACTOR = {"class": "FactorScheduler", "step": 2, "factor": 0.5}
MULTIF = {"class": "MultiFactorScheduler", "step": [1, 3], "factor": 0.3}
POLY = {"class": "PolyScheduler", "max_update": 8, "pwr": 2, "final_lr": 0.001}

# (case name, optimizer, kwargs, extras). extras: mode ('single' = one updater call
# per index, 'list' = one call with both indices like gluon.Trainer, 'separate' = one
# optimizer per parameter, 'adamw_op' = MXNet's contrib.adamw_update op), sched,
# lr_mult/wd_mult (per parameter), idx2name, trainer (False: not reproducible there).
CASES = [
    ("sgd_plain", "sgd", {"learning_rate": 0.1}, {}),
    (
        "sgd_mom",
        "sgd",
        {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "rescale_grad": 0.5},
        {},
    ),
    (
        "sgd_clip_mult",
        "sgd",
        {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.05, "clip_gradient": 0.3},
        dict(MULTS),
    ),
    (
        "sgd_list_sched",
        "sgd",
        {"learning_rate": 0.2, "momentum": 0.5, "wd": 0.02},
        {"mode": "list", "sched": FACTOR},
    ),
    ("nag_plain", "nag", {"learning_rate": 0.1}, {}),
    (
        "nag_mom",
        "nag",
        {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "clip_gradient": 0.5},
        {},
    ),
    (
        "nag_sched",
        "nag",
        {"learning_rate": 0.1, "momentum": 0.9, "rescale_grad": 2.0},
        {"sched": FACTOR},
    ),
    ("adam_plain", "adam", {"learning_rate": 0.01}, {}),
    (
        "adam_wd_clip",
        "adam",
        {"learning_rate": 0.01, "wd": 0.1, "clip_gradient": 0.5, "rescale_grad": 0.7},
        {},
    ),
    (
        "adam_betas_mult_sched",
        "adam",
        {"learning_rate": 0.05, "beta1": 0.5, "beta2": 0.9, "epsilon": 1e-3, "wd": 0.02},
        dict(MULTS, sched=MULTIF),
    ),
    ("adamw_plain", "adamw", {"learning_rate": 0.01, "wd": 0.1}, {"mode": "adamw_op"}),
    (
        "adamw_clip_nobias",
        "adamw",
        {
            "learning_rate": 0.02,
            "wd": 0.05,
            "clip_gradient": 0.4,
            "rescale_grad": 2.0,
            "correct_bias": False,
        },
        {"mode": "adamw_op"},
    ),
    (
        "adamw_mult",
        "adamw",
        {"learning_rate": 0.02, "wd": 0.05, "beta1": 0.8, "epsilon": 1e-4},
        dict(MULTS, mode="adamw_op"),
    ),
    ("adagrad_plain", "adagrad", {"learning_rate": 0.1}, {}),
    (
        "adagrad_wd_clip",
        "adagrad",
        {"learning_rate": 0.1, "wd": 0.05, "clip_gradient": 0.5, "eps": 1e-3},
        {},
    ),
    (
        "adagrad_mult",
        "adagrad",
        {"learning_rate": 0.1, "rescale_grad": 0.5, "wd": 0.1},
        dict(MULTS),
    ),
    ("adadelta_plain", "adadelta", {}, {}),
    (
        "adadelta_wd_clip",
        "adadelta",
        {"rho": 0.5, "epsilon": 1e-3, "wd": 0.1, "clip_gradient": 0.3},
        {},
    ),
    ("rmsprop_plain", "rmsprop", {"learning_rate": 0.01}, {}),
    (
        "rmsprop_centered",
        "rmsprop",
        {
            "learning_rate": 0.01,
            "centered": True,
            "wd": 0.05,
            "clip_gradient": 0.5,
            "clip_weights": 0.9,
        },
        {},
    ),
    (
        "rmsprop_gamma_cw",
        "rmsprop",
        {
            "learning_rate": 0.02,
            "gamma1": 0.5,
            "epsilon": 1e-4,
            "rescale_grad": 2.0,
            "clip_weights": 1.1,
        },
        {},
    ),
    (
        "rmsprop_centered_sched",
        "rmsprop",
        {"learning_rate": 0.02, "centered": True, "gamma2": 0.5, "wd": 0.01},
        dict(MULTS, sched=POLY),
    ),
    ("adamax_plain", "adamax", {}, {}),
    (
        "adamax_wd_clip",
        "adamax",
        {"wd": 0.1, "clip_gradient": 0.3, "rescale_grad": 0.5, "beta1": 0.8},
        {},
    ),
    ("nadam_plain", "nadam", {}, {"mode": "separate"}),
    (
        "nadam_wd_clip",
        "nadam",
        {"learning_rate": 0.01, "wd": 0.1, "clip_gradient": 0.5, "schedule_decay": 0.1},
        {"mode": "separate"},
    ),
    ("ftrl_plain", "ftrl", {}, {}),
    (
        "ftrl_wd_clip",
        "ftrl",
        {"learning_rate": 0.5, "lamda1": 0.001, "beta": 0.5, "wd": 0.1, "clip_gradient": 0.5},
        {},
    ),
    ("ftml_plain", "ftml", {"learning_rate": 0.05}, {}),
    (
        "ftml_wd_clip",
        "ftml",
        {"learning_rate": 0.05, "beta1": 0.5, "wd": 0.1, "clip_gradient": 0.3, "rescale_grad": 0.5},
        {},
    ),
    ("lamb_plain", "lamb", {"learning_rate": 0.01}, {}),
    (
        "lamb_bounds",
        "lamb",
        {
            "learning_rate": 0.01,
            "wd": 0.1,
            "clip_gradient": 0.5,
            "lower_bound": 0.5,
            "upper_bound": 2.0,
        },
        {},
    ),
    (
        "lamb_nobias_list",
        "lamb",
        {"learning_rate": 0.02, "bias_correction": False, "rescale_grad": 2.0, "wd": 0.01},
        {"mode": "list"},
    ),
    ("lars_mom", "lars", {"learning_rate": 0.1, "momentum": 0.9, "eta": 0.01, "wd": 0.01}, {}),
    (
        "lars_clip",
        "lars",
        {
            "learning_rate": 0.1,
            "eta": 0.1,
            "eps": 1e-3,
            "clip_gradient": 0.3,
            "rescale_grad": 0.5,
            "wd": 0.05,
        },
        {},
    ),
    (
        "lars_sched_names",
        "lars",
        {"learning_rate": 0.1, "momentum": 0.9, "eta": 0.05, "wd": 0.1},
        {
            "mode": "list",
            "sched": FACTOR,
            "idx2name": {"0": "fc_weight", "1": "fc_bias"},
            "trainer": False,
        },
    ),
    ("signum_plain", "signum", {"learning_rate": 0.05}, {}),
    (
        "signum_wd",
        "signum",
        {"learning_rate": 0.05, "momentum": 0.5, "wd": 0.1, "wd_lh": 0.05, "clip_gradient": 0.3},
        {},
    ),
    ("signsgd", "signum", {"learning_rate": 0.05, "momentum": 0.0, "wd": 0.1}, dict(MULTS)),
    ("dcasgd_plain", "dcasgd", {"learning_rate": 0.1}, {}),
    (
        "dcasgd_wd_clip",
        "dcasgd",
        {"learning_rate": 0.1, "lamda": 0.5, "wd": 0.1, "clip_gradient": 0.5},
        {},
    ),
]


def make_sched(spec, base_lr):
    if spec is None:
        return None
    kw = {k: v for k, v in spec.items() if k != "class"}
    return getattr(mx.lr_scheduler, spec["class"])(base_lr=base_lr, **kw)


def inputs():
    rng = np.random.RandomState(7)
    w = [rng.randn(3, 4).astype(np.float32), (0.5 * rng.randn(4)).astype(np.float32)]
    g = [rng.randn(STEPS, 3, 4).astype(np.float32), rng.randn(STEPS, 4).astype(np.float32)]
    return w, g


def make_opt(name, kw, ex):
    kw = dict(kw)
    lr = kw.get("learning_rate", 0.01)
    sched = make_sched(ex.get("sched"), lr)
    if sched is not None:
        kw["lr_scheduler"] = sched
    if "idx2name" in ex:
        kw["param_idx2name"] = {int(k): v for k, v in ex["idx2name"].items()}
    o = mx.optimizer.create(name, **kw)
    if "lr_mult" in ex:
        o.set_lr_mult(dict(enumerate(ex["lr_mult"])))
        o.set_wd_mult(dict(enumerate(ex["wd_mult"])))
    return o


def run_adamw(kw, ex, w0, grads):
    b1, b2 = kw.get("beta1", 0.9), kw.get("beta2", 0.999)
    eps, wd, lr = kw.get("epsilon", 1e-6), kw.get("wd", 0.0), kw["learning_rate"]
    clip = kw.get("clip_gradient", -1.0)
    rescale = mx.nd.array([kw.get("rescale_grad", 1.0)])
    ws = [mx.nd.array(w) for w in w0]
    states = [(mx.nd.zeros(w.shape), mx.nd.zeros(w.shape)) for w in w0]
    traj = [[], []]
    for t in range(1, STEPS + 1):
        for i in range(2):
            lr_i = lr * ex.get("lr_mult", [1, 1])[i]
            wd_i = wd * ex.get("wd_mult", [1, 1])[i]
            if kw.get("correct_bias", True):
                lr_i *= math.sqrt(1 - b2**t) / (1 - b1**t)
            m, v = states[i]
            mx.nd.contrib.adamw_update(
                ws[i],
                mx.nd.array(grads[i][t - 1]),
                m,
                v,
                rescale,
                lr=1.0,
                eta=lr_i,
                beta1=b1,
                beta2=b2,
                epsilon=eps,
                wd=wd_i,
                clip_gradient=clip,
                out=ws[i],
            )
            traj[i].append(ws[i].asnumpy())
    return traj


def run_case(name, kw, ex, w0, grads):
    mode = ex.get("mode", "single")
    if mode == "adamw_op":
        return run_adamw(kw, ex, w0, grads)
    ws = [mx.nd.array(w) for w in w0]
    if mode == "separate":
        upds = [mx.optimizer.get_updater(make_opt(name, kw, ex)) for _ in range(2)]
    else:
        upd = mx.optimizer.get_updater(make_opt(name, kw, ex))
        upds = [upd, upd]
    traj = [[], []]
    for t in range(STEPS):
        gs = [mx.nd.array(grads[i][t]) for i in range(2)]  # fresh: some rules edit grad in place
        if mode == "list":
            upds[0]([0, 1], gs, ws)
        else:
            for i in range(2):
                upds[i](i, gs[i], ws[i])
        for i in range(2):
            traj[i].append(ws[i].asnumpy())
    return traj


SCHED_CASES = [
    ("factor", {"class": "FactorScheduler", "step": 3, "factor": 0.5, "base_lr": 0.1}),
    (
        "factor_stop",
        {
            "class": "FactorScheduler",
            "step": 2,
            "factor": 0.1,
            "base_lr": 1.0,
            "stop_factor_lr": 1e-3,
        },
    ),
    (
        "factor_warm",
        {
            "class": "FactorScheduler",
            "step": 4,
            "factor": 0.9,
            "base_lr": 0.5,
            "warmup_steps": 5,
            "warmup_begin_lr": 0.1,
        },
    ),
    (
        "multifactor",
        {"class": "MultiFactorScheduler", "step": [3, 7, 12], "factor": 0.5, "base_lr": 0.2},
    ),
    (
        "multifactor_warm",
        {
            "class": "MultiFactorScheduler",
            "step": [6, 10],
            "factor": 0.1,
            "base_lr": 1.0,
            "warmup_steps": 4,
            "warmup_begin_lr": 0.2,
            "warmup_mode": "constant",
        },
    ),
    ("poly", {"class": "PolyScheduler", "max_update": 20, "base_lr": 0.1, "pwr": 2}),
    (
        "poly_final_warm",
        {
            "class": "PolyScheduler",
            "max_update": 20,
            "base_lr": 0.1,
            "pwr": 1.5,
            "final_lr": 0.01,
            "warmup_steps": 5,
            "warmup_begin_lr": 0.02,
        },
    ),
    ("cosine", {"class": "CosineScheduler", "max_update": 15, "base_lr": 0.3}),
    (
        "cosine_final_warm",
        {
            "class": "CosineScheduler",
            "max_update": 25,
            "base_lr": 0.3,
            "final_lr": 0.05,
            "warmup_steps": 6,
            "warmup_begin_lr": 0.01,
        },
    ),
]
SCHED_POINTS = list(range(0, 31)) + [35, 50, 100]


def main():
    logging.disable(logging.CRITICAL)
    mx.random.seed(0)
    w0, grads = inputs()
    out = {"init_w0": w0[0], "init_w1": w0[1], "grads_g0": grads[0], "grads_g1": grads[1]}
    for name, opt, kw, ex in CASES:
        traj = run_case(opt, kw, ex, w0, grads)
        out[f"{name}__w0"] = np.stack(traj[0])
        out[f"{name}__w1"] = np.stack(traj[1])
    out["cases"] = np.array(json.dumps([[n, o, kw, ex] for n, o, kw, ex in CASES]))
    out["steps"] = np.array(STEPS)
    OUT.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT / "optimizers.npz", **out)

    sched = {"cases": np.array(json.dumps(SCHED_CASES)), "points": np.array(SCHED_POINTS)}
    for name, spec in SCHED_CASES:
        kw = {k: v for k, v in spec.items() if k != "class"}
        s = getattr(mx.lr_scheduler, spec["class"])(**kw)
        sched[name] = np.array([s(n) for n in SCHED_POINTS], np.float64)
    np.savez_compressed(OUT / "lr_schedulers.npz", **sched)
    print(f"wrote {len(CASES)} optimizer cases and {len(SCHED_CASES)} schedules to {OUT}")


if __name__ == "__main__":
    main()
