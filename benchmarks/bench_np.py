"""MXNet's NumPy interface: an eager ``mx.np`` op against the same ``mx.nd`` op, and a
hybridized LeNet training step in NumPy mode against the same step in nd mode, each beside
real MXNet 1.9.1 running the same source (``SRC``: ``mx`` is whichever library runs it)."""

from __future__ import annotations

import gluonjax as mx

from .common import Table, mxnet_seconds

SRC = r'''
import time
import numpy as onp


def _best(fn, n, rounds):
    for _ in range(20):
        out = fn()
    mx.nd.waitall()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            out = fn()
        mx.nd.waitall()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def eager_op(kind, n, rounds):
    """Seconds per ``exp(a + b)`` on (64, 256) float32 arrays (two eager ops)."""
    rs = onp.random.RandomState(0)
    a0, b0 = rs.randn(64, 256).astype("float32"), rs.randn(64, 256).astype("float32")
    if kind == "np":
        a, b = mx.np.array(a0), mx.np.array(b0)
        return _best(lambda: mx.np.exp(a + b), n, rounds) / 2
    a, b = mx.nd.array(a0), mx.nd.array(b0)
    return _best(lambda: mx.nd.exp(a + b), n, rounds) / 2


def lenet_step(kind, n, rounds):
    """Seconds per hybridized LeNet SGD step, batch 64, in NumPy mode or nd mode."""
    nn = mx.gluon.nn
    if kind == "np":
        mx.npx.set_np()
    try:
        net = nn.HybridSequential()
        net.add(nn.Conv2D(6, 5, activation="relu"), nn.MaxPool2D(2),
                nn.Conv2D(16, 5, activation="relu"), nn.MaxPool2D(2),
                nn.Dense(120, activation="relu"), nn.Dense(84, activation="relu"), nn.Dense(10))
        net.initialize(mx.init.Xavier())
        net.hybridize()
        loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
        loss_fn.hybridize()
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
        rs = onp.random.RandomState(0)
        x0 = rs.randn(64, 1, 28, 28).astype("float32")
        y0 = rs.randint(0, 10, 64).astype("float32")
        make = mx.np.array if kind == "np" else mx.nd.array
        x, y = make(x0), make(y0)

        def step():
            with mx.autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(64)
            return loss

        return _best(step, n, rounds)
    finally:
        if kind == "np":
            mx.npx.reset_np()
'''


def run(n=1000):
    scope = {"mx": mx}
    exec(SRC, scope)  # noqa: S102 - our own benchmark source, shared with MXNet's run
    t = Table("NumPy interface: mx.np against mx.nd, gluonjax and MXNet 1.9.1")
    rows = [
        ("eager_op", n, 5, "eager exp(a + b), 64x256, per op"),
        ("lenet_step", max(n // 20, 10), 3, "LeNet step, hybridized, batch 64"),
    ]
    for fn, calls, rounds, label in rows:
        nd_s = scope[fn]("nd", calls, rounds)
        np_s = scope[fn]("np", calls, rounds)
        mx_np = mxnet_seconds(SRC + f"\nprint({fn}('np', {calls}, {rounds}))\n")
        t.add(f"gluonjax nd: {label}", nd_s)
        t.add(f"gluonjax np: {label}", np_s, nd_s, target=1.0, note="(vs gluonjax nd)")
        if mx_np is None:
            t.add(f"MXNet np: {label}", float("nan"), note="(.venv-mxnet not installed)")
        else:
            t.add(f"MXNet 1.9.1 np: {label}", mx_np)
            t.add(f"gluonjax np vs MXNet np: {label}", np_s, mx_np, target=1.0)
    t.show()
