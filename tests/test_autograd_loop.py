"""The everyday training loops, deferral on against the eager tape, and plan reuse.

The first three are the programs that crashed on their second step before the
autograd package: a d2l-style ``Block``, an unhybridized ``HybridBlock`` and a
recorded call whose input has ``attach_grad``. Each trains 100 steps and must
match deferral switched off exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, gluon, nd
from gluonjax.autograd import _plan
from gluonjax.gluon import nn


class D2LMLP(gluon.Block):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.hidden = nn.Dense(16)
        self.out = nn.Dense(3)

    def forward(self, x):
        return self.out(nd.relu(self.hidden(x)))


class HybridMLP(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.d1 = nn.Dense(16)
            self.d2 = nn.Dense(3)

    def hybrid_forward(self, F, x):
        return self.d2(F.relu(self.d1(F.flatten(x))))


def _data():
    rng = np.random.RandomState(0)
    return nd.array(rng.randn(8, 5)), nd.array(rng.randint(0, 3, 8))


def _train(make, steps, hybridize=False, x_grad=False):
    mx.random.seed(1)
    net = make()
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x, y = _data()
    if x_grad:
        x.attach_grad()
    losses = []
    for _ in range(steps):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        tr.step(8)
        losses.append(loss.asnumpy())
    out = [p.data().asnumpy() for p in net.collect_params().values()] + losses
    if x_grad:
        out.append(x.grad.asnumpy())
    return out


@pytest.mark.parametrize(
    "make, hybridize, x_grad",
    [
        (D2LMLP, False, False),  # user Block, eager ops between built-in layers
        (HybridMLP, False, False),  # hybrid_forward, not hybridized
        (HybridMLP, True, False),
        (lambda: nn.Dense(3), False, True),  # an input with attach_grad
        (D2LMLP, False, True),
    ],
)
def test_repro_programs_train_100_steps_like_the_eager_tape(make, hybridize, x_grad, eager_tape):
    want = eager_tape(lambda: _train(make, 100, hybridize, x_grad))
    got = _train(make, 100, hybridize, x_grad)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
    assert got[-2 if x_grad else -1].mean() < want[len(want) // 2].mean() + 10  # it trained


def test_a_structure_seen_before_reuses_its_compiled_plan():
    net = HybridMLP()
    net.initialize()
    net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x, y = _data()
    plans = []
    for step in range(6):
        old = autograd.set_deferral(step % 2 == 0)  # switching does not make new plans
        try:
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            call = net.d1.weight.grad().__dict__.get("_gsrc", (None,))[0]
            plans.append(None if call is None else call.plan)
            tr.step(8)
        finally:
            autograd.set_deferral(old)
    deferred = [p for p in plans if p is not None]
    assert len(deferred) >= 2 and all(p is deferred[-1] for p in deferred[1:])


def test_a_different_tape_gets_its_own_plan(eager_tape):
    """Same blocks, another structure (an eager op between them): no plan of the first
    structure runs on it, and the values are right."""

    def run():
        mx.random.seed(3)
        net = HybridMLP()
        net.initialize(mx.init.Xavier())
        net.hybridize()
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        x, y = _data()
        out = []
        for extra in (False, True, False, True):
            with autograd.record():
                h = net(x)
                if extra:
                    h = nd.tanh(h) * 2
                loss = loss_fn(h, y)
            loss.backward()
            out.append(net.d1.weight.grad().asnumpy())
        return out

    want = eager_tape(run)
    before = len(_plan._PLANS)
    got = run()
    assert len(_plan._PLANS) >= min(before + 1, _plan._PLANS.maxsize)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
    assert not np.allclose(got[0], got[1])  # the two structures really differ


def test_a_node_forced_since_recording_changes_the_plan(eager_tape):
    """Reading a pending output forces its node: the tape's structure changes (a forced
    node instead of a deferred one) and the backward is planned for what it is."""

    def run(read):
        mx.random.seed(4)
        net = HybridMLP()
        net.initialize(mx.init.Xavier())
        net.hybridize()
        x, y = _data()
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        out = []
        for step in range(4):
            with autograd.record():
                h = net(x)
                loss = loss_fn(h, y)
            if read and step % 2:
                h.asnumpy()  # the net's node runs on its own now
            loss.backward()
            out.append(net.d2.weight.grad().asnumpy())
        return out

    want = eager_tape(lambda: run(False))
    for w, g in zip(want, run(True)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def test_deferral_switch_from_the_environment():
    import subprocess
    import sys

    code = "import gluonjax as mx; print(mx.autograd.is_deferral())"
    for value, want in (("0", "False"), ("off", "False"), ("1", "True")):
        env = {"GLUONJAX_DEFER": value, "JAX_PLATFORMS": "cpu"}
        import os

        env = {**os.environ, **env}
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        assert res.stdout.strip() == want, res.stderr
    prev = autograd.set_deferral(False)
    try:
        assert autograd.is_deferral() is False
    finally:
        assert autograd.set_deferral(prev) is False
