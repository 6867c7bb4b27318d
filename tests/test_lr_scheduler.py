"""Learning-rate schedulers against MXNet 1.9.1 (tests/fixtures/lr_schedulers.npz,
written by tools/make_optimizer_fixtures.py) and their use by optimizers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import lr_scheduler as lrs

FIX = np.load(Path(__file__).parent / "fixtures" / "lr_schedulers.npz")
CASES = json.loads(str(FIX["cases"]))
POINTS = [int(n) for n in FIX["points"]]


def _make(spec):
    return getattr(lrs, spec["class"])(**{k: v for k, v in spec.items() if k != "class"})


@pytest.mark.parametrize("name, spec", CASES, ids=[c[0] for c in CASES])
def test_schedule_matches_mxnet(name, spec):
    s = _make(spec)
    got = [s(n) for n in POINTS]  # called in increasing order, as MXNet's fixture
    np.testing.assert_allclose(got, FIX[name], rtol=1e-12, atol=0)


def test_formulas_with_numpy():
    cos = lrs.CosineScheduler(
        max_update=10, base_lr=0.4, final_lr=0.1, warmup_steps=2, warmup_begin_lr=0.0
    )
    assert cos(1) == pytest.approx(0.2)  # linear warm-up from 0 to 0.4 over 2 updates
    assert cos(6) == pytest.approx(0.1 + 0.3 * (1 + math.cos(math.pi * 4 / 8)) / 2)
    assert cos(50) == pytest.approx(0.25)  # past max_update: the last value, as MXNet
    assert cos(10) == pytest.approx(0.1) and cos(50) == pytest.approx(0.1)
    poly = lrs.PolyScheduler(max_update=10, base_lr=1.0, pwr=3)
    assert poly(4) == pytest.approx(0.6**3)
    fac = lrs.FactorScheduler(
        step=5,
        factor=0.5,
        base_lr=1.0,
        warmup_steps=3,
        warmup_begin_lr=0.25,
        warmup_mode="constant",
    )
    assert [fac(n) for n in (0, 2, 3, 5, 6, 11)] == [0.25, 0.25, 1.0, 1.0, 0.5, 0.25]
    mf = lrs.MultiFactorScheduler(step=[2, 4], factor=0.1, base_lr=1.0)
    assert [mf(n) for n in (1, 2, 3, 5)] == pytest.approx([1.0, 1.0, 0.1, 0.01])


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: lrs.FactorScheduler(step=0), "step"),
        (lambda: lrs.FactorScheduler(step=2, factor=1.5), "Factor"),
        (lambda: lrs.MultiFactorScheduler(step=[3, 2]), "increasing"),
        (lambda: lrs.MultiFactorScheduler(step=[0, 2]), "step"),
        (lambda: lrs.PolyScheduler(max_update=0), "strictly positive"),
        (lambda: lrs.CosineScheduler(max_update=5.5), "int"),
        (lambda: lrs.CosineScheduler(max_update=5, base_lr=0.1, warmup_begin_lr=0.2), "warmup"),
        (lambda: lrs.PolyScheduler(max_update=5, warmup_steps=-1), "positive"),
        (lambda: lrs.FactorScheduler(step=2, warmup_mode="cubic"), "linear and constant"),
    ],
)
def test_invalid_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_optimizer_uses_scheduler_with_num_update():
    sched = lrs.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    o = mx.optimizer.create("sgd", learning_rate=0.4, lr_scheduler=sched)
    assert sched.base_lr == 0.4  # learning_rate overrides the scheduler's base_lr
    upd = mx.optimizer.get_updater(o)
    w = mx.nd.zeros((2,))
    seen = []
    for _ in range(5):
        upd(0, mx.nd.ones((2,)), w)
        seen.append(o.learning_rate)
    assert seen == pytest.approx([0.4, 0.4, 0.2, 0.2, 0.1])
    np.testing.assert_allclose(w.asnumpy(), [-1.3, -1.3], rtol=1e-6)
    with pytest.raises(mx.MXNetError, match="LRScheduler"):
        o.set_learning_rate(0.1)
