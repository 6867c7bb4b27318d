"""Building a model, its parameters, the optimizer states and the inputs compiles no XLA
program; the training loop compiles once and then runs what it compiled.

Compiles are counted with jax's ``backend_compile`` monitoring events (a persistent-cache hit
compiles nothing, so every count here is an upper bound that a warm cache only lowers).
"""

from __future__ import annotations

import numpy as np
import pytest
from jax._src import monitoring

import gluonjax as mx
from gluonjax import autograd, gluon, nd
from gluonjax.gluon import nn

_COUNT = [0]


def _listen(event, duration, **kwargs):
    if event == "/jax/core/compile/backend_compile_duration":
        _COUNT[0] += 1


monitoring.register_event_duration_secs_listener(_listen)


def _net():
    net = nn.HybridSequential()
    net.add(
        nn.Conv2D(3, 3, in_channels=1, activation="relu"),
        nn.MaxPool2D(2),
        nn.Dense(7, in_units=27),
        nn.Dense(4, in_units=7),
    )
    return net


@pytest.mark.parametrize(
    "opt, kw",
    [("sgd", {}), ("sgd", {"momentum": 0.9}), ("adam", {}), ("nag", {"momentum": 0.9})],
)
def test_setup_and_loop_compiles(opt, kw):
    rs = np.random.RandomState(1)
    xn = rs.randn(2, 1, 9, 9).astype(np.float32)
    before = _COUNT[0]
    net = _net()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), opt, {"learning_rate": 0.1, **kw})
    x, y = nd.array(xn), nd.array([1, 3])
    assert _COUNT[0] == before, f"{_COUNT[0] - before} XLA programs compiled before the loop"
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    counts = []
    for _ in range(3):
        start = _COUNT[0]
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(2)
        loss.wait_to_read()
        counts.append(_COUNT[0] - start)
    # one program for the whole step (optimizer states are made on the host, not compiled)
    assert counts == [1, 0, 0] or counts == [0, 0, 0], f"compiles per step: {counts}"


def test_initialize_compiles_nothing():
    before = _COUNT[0]
    net = nn.Dense(5, in_units=3)
    net.initialize(mx.init.Xavier())
    nn.Dense(6, in_units=4, bias_initializer="ones").initialize(mx.init.Uniform())
    nd.array(np.ones((3, 2), np.float64))
    nd.zeros((4, 3))
    assert _COUNT[0] == before
    w = net.weight.data().asnumpy()
    assert w.shape == (5, 3) and w.dtype == np.float32 and np.abs(w).max() > 0
