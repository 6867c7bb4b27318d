"""Sparse storage and the key-value store (issue 13): their cost next to plain jax.

* the storage-type check that makes ``nd.dot``/``nd.relu`` sparse-aware, on dense inputs,
  against the registry's own function: a flag test until a sparse array exists, then a
  look at the inputs;
* ``nd.sparse.dot(csr, dense)`` (run with ``jax.experimental.sparse``) against
  ``jax.numpy.dot`` of the same dense values and a jitted BCOO product;
* ``kv.push`` of four values and ``kv.pull`` against summing them in ``jax.numpy``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

import gluonjax as mx
from gluonjax.ndarray.sparse._ops import _dense

from .common import Table, compare


def run(n=1000):
    nd = mx.nd
    rng = np.random.RandomState(0)
    t = Table("sparse storage and kvstore (gluonjax vs plain jax on the same values)")
    x, w = nd.array(rng.randn(64, 256)), nd.array(rng.randn(256, 64))
    plain_dot, plain_relu = _dense("dot"), _dense("relu")
    r = compare(
        {
            "dot": lambda: nd.dot(x, w),
            "pdot": lambda: plain_dot(x, w),
            "relu": lambda: nd.relu(x),
            "prelu": lambda: plain_relu(x),
        },
        n,
    )
    t.add("nd.dot, dense inputs (64x256 @ 256x64)", r["dot"], r["pdot"], 1.05)
    t.add("  registry dot without the storage check", r["pdot"])
    t.add("nd.relu, dense input (64x256)", r["relu"], r["prelu"], 1.05)
    t.add("  registry relu without the storage check", r["prelu"])
    nd.zeros((1, 1), stype="csr")  # from now on calls look for sparse inputs
    r = compare({"dot": lambda: nd.dot(x, w), "pdot": lambda: plain_dot(x, w)}, n)
    t.add("nd.dot, dense inputs, after a sparse array", r["dot"], r["pdot"], 1.10)

    dense = rng.randn(256, 1024).astype(np.float32) * (rng.rand(256, 1024) < 0.01)
    nz = dense != 0
    parts = (dense[nz], np.nonzero(nz)[1], np.r_[0, np.cumsum(nz.sum(1))])
    csr = nd.sparse.csr_matrix(parts, shape=dense.shape)  # its pattern is known: BCOO
    rhs = nd.array(rng.randn(1024, 64))
    dr, rr = jnp.asarray(dense), rhs._data
    bcoo = jsparse.BCOO.fromdense(dr)
    jdot = jax.jit(jnp.dot)
    bdot = jax.jit(lambda a, b: a @ b)
    r = compare(
        {
            "sdot": lambda: nd.sparse.dot(csr, rhs),
            "jdot": lambda: jdot(dr, rr),
            "bcoo": lambda: bdot(bcoo, rr),
        },
        max(n // 4, 10),
    )
    t.add("nd.sparse.dot(csr 256x1024 1% nnz, 1024x64)", r["sdot"], r["bcoo"], 1.2)
    t.add("  jax.experimental.sparse: jitted BCOO @ dense", r["bcoo"])
    t.add("  jax.numpy dot of the dense values", r["jdot"], r["bcoo"], None, "(dense math)")

    vals = [nd.array(rng.randn(256, 256)) for _ in range(4)]
    raw = [v._data for v in vals]
    out = nd.zeros((256, 256))
    kv = mx.kv.create("device")
    kv.init(0, nd.zeros((256, 256)))
    jsum = jax.jit(lambda a, b, c, d: a + b + c + d)

    def push_pull():
        kv.push(0, vals)
        kv.pull(0, out=out)
        return out

    r = compare({"kv": push_pull, "jsum": lambda: jsum(*raw)}, max(n // 4, 10))
    t.add("kv.push 4 x (256x256) + kv.pull", r["kv"], r["jsum"], 1.5)
    t.add("  jax: one jitted sum of the 4 arrays", r["jsum"])
    t.show()
