"""NDArray surface: indexing views, optimizer update ops and the gamma sampler, each
against the same work written directly in jax."""

from __future__ import annotations

import jax
import numpy as np

import gluonjax as mx

from .common import Table, compare


def run(n=1000):
    nd = mx.nd
    rng = np.random.RandomState(0)
    t = Table("NDArray surface (gluonjax vs jax)")
    a = nd.array(rng.randn(64, 256))
    ar = a._data
    r = compare({"view": lambda: a[3] + 1, "jax": lambda: ar[3] + 1}, n)
    t.add("a[3] + 1 (view of a row, then an op)", r["view"], r["jax"], target=3.0)
    t.add("  jax: x[3] + 1", r["jax"])
    w, g, m = (nd.array(rng.randn(256, 256)) for _ in range(3))
    wr, gr, mr = w._data, g._data, m._data

    @jax.jit
    def jmom(w, g, m):
        m = 0.9 * m - 0.01 * 1e-4 * w - 0.01 * g
        return w + m, m

    r = compare(
        {
            "op": lambda: nd.sgd_mom_update(w, g, m, out=w, lr=0.01, momentum=0.9, wd=1e-4),
            "jax": lambda: jmom(wr, gr, mr),
        },
        n,
    )
    t.add("sgd_mom_update 256x256 (out=, state in place)", r["op"], r["jax"], target=3.0)
    t.add("  jax.jit: the same formula", r["jax"])
    key = jax.random.PRNGKey(0)
    jgamma = jax.jit(lambda k: jax.random.gamma(k, 0.5, (100000,)))
    r = compare(
        {
            "mx": lambda: nd.random.gamma(0.5, 1.0, shape=(100000,)),
            "jax": lambda: jgamma(key),
        },
        max(n // 50, 5),
    )
    t.add("random.gamma(0.5) 100k samples", r["mx"], r["jax"], target=1.0)
    t.add("  jax.random.gamma", r["jax"])
    t.show()
