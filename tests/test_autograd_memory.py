"""No leaks: a dropped model is freed, a step frees what it no longer needs, caches are bounded."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, gluon, nd
from gluonjax._caches import LRU, cache_info
from gluonjax.gluon import nn


class UserNet(gluon.Block):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.a = nn.Dense(8)
        self.b = nn.Dense(3)

    def forward(self, x):
        return self.b(nd.relu(self.a(x)))


def _make(kind):
    if kind == "block":
        return UserNet()
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.BatchNorm(), nn.Dense(3))
    return net


def _train(kind, hybridize, defer, fused=False):
    net = _make(kind)
    net.initialize()
    if hybridize:
        net.hybridize()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x, y = nd.array(np.random.randn(4, 5)), nd.array([0, 1, 2, 0])
    old = autograd.set_deferral(defer)
    try:
        if fused:
            step = tr.compile_step(net, loss_fn)
            for _ in range(3):
                loss = step(x, y)
        else:
            for _ in range(3):
                with autograd.record():
                    loss = loss_fn(net(x), y)
                loss.backward()
                tr.step(4)
    finally:
        autograd.set_deferral(old)
    return weakref.ref(net), [weakref.ref(p.data()) for p in net.collect_params().values()], loss


@pytest.mark.parametrize(
    "kind, hybridize, defer, fused",
    [
        ("seq", True, True, False),
        ("seq", True, False, False),
        ("seq", False, True, False),
        ("block", False, True, False),
        ("seq", True, True, True),
    ],
)
def test_a_dropped_model_is_freed(kind, hybridize, defer, fused):
    net_ref, param_refs, loss = _train(kind, hybridize, defer, fused)
    loss.asnumpy()  # the user still holds the last loss: it does not keep the model alive
    gc.collect()
    assert net_ref() is None
    assert all(r() is None for r in param_refs)


def test_after_a_step_the_old_parameter_buffers_and_the_batch_are_gone():
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.Dense(3))
    net.initialize()
    net.hybridize()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    y = nd.array([0, 1, 2, 0])
    for _ in range(3):  # the deferred, fused path is running from the third step
        x = nd.array(np.random.randn(4, 5))
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        tr.step(4)
    old = [weakref.ref(p.data()._data) for p in net.collect_params().values()]
    batch = weakref.ref(x._data)
    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    tr.step(4)
    del x
    gc.collect()
    assert all(r() is None for r in old)
    assert batch() is None
    assert np.isfinite(loss.asnumpy()).all()


def test_lru_cache_is_bounded_and_clear_caches_empties_it():
    cache = LRU(3, "test cache")
    for k in range(10):
        cache.put(k, str(k))
    assert len(cache) == 3 and cache.get(9) == "9" and cache.get(0) is None
    cache.get(7)
    cache.put(10, "10")  # 8 was the least recently used
    assert cache.get(8) is None and cache.get(7) == "7"
    assert cache_info()["test cache"] == 3
    mx.clear_caches()
    assert len(cache) == 0


def test_training_works_after_clear_caches():
    net = nn.Dense(3)
    net.initialize()
    net.hybridize()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x = nd.ones((2, 4))
    for _ in range(3):
        with autograd.record():
            loss = net(x).sum()
        loss.backward()
        tr.step(2)
        mx.clear_caches()
    assert np.isfinite(net.weight.data().asnumpy()).all()
