"""Issue "Gluon Blocks": the seed MLP per call, eager and hybridized, vs raw JAX."""

from __future__ import annotations

import jax
import jax.numpy as jnp

import gluonjax as mx
from gluonjax.gluon import nn

from .common import Table, compare


def _net():
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
    net.initialize()
    return net


def dense(x, w, b):
    """``x @ w.T + b`` contracted in place (as FullyConnected does; ``w.T`` would copy w)."""
    return jax.lax.dot_general(x, w, (((1,), (1,)), ((), ()))) + b


def mlp(ps, x):
    w1, b1, w2, b2, w3, b3 = ps
    h = jnp.maximum(dense(x, w1, b1), 0)
    h = jnp.maximum(dense(h, w2, b2), 0)
    return dense(h, w3, b3)


def run(n=1000):
    x = mx.nd.random.normal(shape=(1, 512))
    net = _net()
    net(x)
    ps = [p.data()._data for p in net.collect_params().values()]
    xr = x._data
    raw_jit = jax.jit(mlp)
    hyb = _net()
    hyb.hybridize()
    hyb(x)
    r = compare(
        {
            "jit": lambda: raw_jit(ps, xr),
            "jnp": lambda: mlp(ps, xr),
            "eager": lambda: net(x),
            "hybrid": lambda: hyb(x),
        },
        n=max(n // 5, 100),
        rounds=25,  # many short rounds: this VM flips between speed states for seconds
    )
    t_jit, t_jnp, t_eager, t_hyb = r["jit"], r["jnp"], r["eager"], r["hybrid"]
    t = Table("seed MLP Dense(256,relu)-Dense(128,relu)-Dense(2), input (1, 512), per call")
    t.add("raw jax.jit pure function", t_jit)
    t.add("plain jax.numpy op by op", t_jnp)
    t.add("gluonjax hybridized / raw jax.jit", t_hyb, t_jit, 1.2)
    t.add("gluonjax eager / jax.numpy op by op", t_eager, t_jnp, 0.3)
    t.show()
