"""Trainer: the three-line loop eager and hybridized, fused step, states, errors."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, gluon, nd
from gluonjax.gluon import nn


class _SCE(gluon.HybridBlock):
    def hybrid_forward(self, F, pred, label):
        return -F.pick(F.log_softmax(pred), label)


def _data():
    rng = np.random.RandomState(0)
    x = rng.randn(256, 8).astype(np.float32)
    w = rng.randn(8, 3)
    return x, (x @ w).argmax(1).astype(np.float32)


def _net(seed=3):
    mx.random.seed(seed)
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation="relu"), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    return net


def _train(mode, epochs=15, opt="sgd", params=None):
    X, Y = _data()
    net = _net()
    if mode != "eager":
        net.hybridize()
    tr = gluon.Trainer(net.collect_params(), opt, params or {"learning_rate": 0.3, "momentum": 0.9})
    loss_fn = _SCE()
    fused = tr.compile_step(net, loss_fn) if mode == "fused" else None
    for _ in range(epochs):
        for i in range(0, len(X), 32):
            x, y = nd.array(X[i : i + 32]), nd.array(Y[i : i + 32])
            if fused is not None:
                fused(x, y)
            else:
                with autograd.record():
                    loss = loss_fn(net(x), y)
                loss.backward()
                tr.step(32)
    acc = float((net(nd.array(X)).argmax(axis=1).asnumpy() == Y).mean())
    return acc, [p.data().asnumpy() for p in net.collect_params().values()]


def test_three_line_loop_eager_hybrid_and_fused_agree_and_learn():
    acc_e, p_e = _train("eager")
    acc_h, p_h = _train("hybrid")
    acc_f, p_f = _train("fused")
    assert acc_e > 0.95
    for a, b, c in zip(p_e, p_h, p_f):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(b, c, rtol=1e-4, atol=1e-5)
    assert acc_h == acc_e and acc_f == acc_e


def test_sgd_step_matches_formula_with_wd_and_multipliers():
    p = gluon.Parameter("w", shape=(3,), init=mx.init.Constant(1.0))
    p.initialize()
    p.lr_mult, p.wd_mult = 2.0, 0.5
    tr = gluon.Trainer([p], "sgd", {"learning_rate": 0.1, "wd": 0.01, "momentum": 0.5})
    x = nd.array([1.0, 2.0, 3.0])
    w = np.ones(3, np.float32)
    mom = np.zeros(3, np.float32)
    for _ in range(3):
        with autograd.record():
            loss = (p.data() * x).sum()
        loss.backward()
        tr.step(2)
        g = np.array([1.0, 2.0, 3.0]) / 2 + 0.01 * 0.5 * w
        mom = 0.5 * mom - 0.1 * 2.0 * g
        w = w + mom
        np.testing.assert_allclose(p.data().asnumpy(), w, rtol=1e-6)


def test_stale_gradient_error_and_ignore():
    a = gluon.Parameter("a", shape=(2,), init="ones")
    b = gluon.Parameter("b", shape=(2,), init="ones")
    a.initialize()
    b.initialize()
    tr = gluon.Trainer([a, b], "sgd", {"learning_rate": 1.0})
    with autograd.record():
        loss = a.data().sum()
    loss.backward()
    with pytest.raises(mx.MXNetError, match="`b`.*ignore_stale_grad"):
        tr.step(1)
    tr.step(1, ignore_stale_grad=True)
    np.testing.assert_allclose(a.data().asnumpy(), [0.0, 0.0])
    np.testing.assert_allclose(b.data().asnumpy(), [1.0, 1.0])


def test_set_learning_rate_and_errors():
    p = gluon.Parameter("w", shape=(1,), init="zeros")
    p.initialize()
    tr = gluon.Trainer({"w": p}, "sgd", {"learning_rate": 0.1})
    assert tr.learning_rate == pytest.approx(0.1)
    tr.set_learning_rate(0.5)
    assert tr.learning_rate == pytest.approx(0.5)
    with pytest.raises(mx.MXNetError, match="list or dict of Parameters"):
        gluon.Trainer([1, 2], "sgd")
    with pytest.raises(mx.MXNetError, match="unknown optimizer"):
        gluon.Trainer([p], "no_such_opt")


def test_save_load_states_resume_exactly(tmp_path):
    X, Y = _data()
    loss_fn = _SCE()

    def run(steps, net, tr):
        for i in steps:
            x, y = nd.array(X[i * 32 : (i + 1) * 32]), nd.array(Y[i * 32 : (i + 1) * 32])
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            tr.step(32)

    net = _net()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.2, "momentum": 0.9})
    run(range(6), net, tr)
    full = [p.data().asnumpy() for p in net.collect_params().values()]

    net2 = _net()
    tr2 = gluon.Trainer(net2.collect_params(), "sgd", {"learning_rate": 0.2, "momentum": 0.9})
    run(range(3), net2, tr2)
    net2.save_parameters(str(tmp_path / "net.params"))
    tr2.save_states(str(tmp_path / "trainer.states"))

    net3 = _net(seed=99)
    net3(nd.array(X[:2]))
    net3.load_parameters(str(tmp_path / "net.params"))
    tr3 = gluon.Trainer(net3.collect_params(), "sgd", {"learning_rate": 0.2, "momentum": 0.9})
    tr3.load_states(str(tmp_path / "trainer.states"))
    run(range(3, 6), net3, tr3)
    for a, b in zip(full, [p.data().asnumpy() for p in net3.collect_params().values()]):
        np.testing.assert_array_equal(a, b)


def test_load_states_rejects_other_files(tmp_path):
    p = gluon.Parameter("w", shape=(2,), init="ones")
    p.initialize()
    nd.save(str(tmp_path / "x.params"), {"w": nd.ones((2,))})
    tr = gluon.Trainer([p], "sgd", {"learning_rate": 0.1})
    with pytest.raises(mx.MXNetError, match="not a Trainer state file"):
        tr.load_states(str(tmp_path / "x.params"))
