"""NDArray surface: indexing views, optimizer update ops and the gamma sampler, each
against the same work written directly in jax."""

from __future__ import annotations

import jax
import numpy as np

import gluonjax as mx

from . import _newshape
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
    new_shapes(n)


def new_shapes(n=1000):
    """Eager ops on shapes the process has not seen, against MXNet 1.9.1, PyTorch and
    pure JAX eager in the same run (benchmarks/_newshape.py has the workloads)."""
    from gluonjax._ops import registry as _reg

    r = _newshape.measure()
    mx_ = r["mx"]
    t = Table(
        "Eager ops on new shapes: 60 shapes x 5 ops, per op, median of 3 processes"
        " (ratio: vs MXNet 1.9.1)"
    )
    if mx_ is None:
        t.add("(MXNet 1.9.1 not installed: make test creates .venv-mxnet)", r["gj_empty"])
    t.add("new shapes, empty compile cache", r["gj_empty"], mx_, target=3.0)
    t.add("new shapes, warm cache (second process)", r["gj_warm"], mx_, target=1.0)
    t.add("  host programs off (all classes compiled), empty", r["gj_compiled_empty"], mx_)
    t.add("  host programs off, warm cache", r["gj_compiled_warm"], mx_)
    t.add("  size classes off, empty cache", r["gj_off_empty"], mx_)
    t.add("  size classes off, warm cache", r["gj_off_warm"], mx_)
    t.add("same shapes again (in process)", r["gj_again"], r["mx_again"])
    t.add("  size classes off: same shapes again", r["gj_off_again"], r["mx_again"])
    t.add("  MXNet 1.9.1", mx_)
    t.add("  MXNet 1.9.1, same shapes again", r["mx_again"])
    t.add("  PyTorch (eager)", r["torch"], mx_)
    t.add("  pure JAX eager (jnp op by op)", r["jax"], mx_)
    mg = r["mx_grad"]
    t.add("record + backward per shape, empty cache", r["gj_grad_empty"], mg, target=2.0)
    t.add("record + backward per shape, warm cache", r["gj_grad_warm"], mg, target=2.0)
    t.add("  MXNet 1.9.1", mg)
    t.add("  PyTorch", r["torch_grad"], mg)
    t.add("  pure JAX eager (jax.vjp)", r["jax_grad"], mg)
    mp = r["mx_prof"]
    t.add("profiler_ndarray loop (f32/f16), empty cache", r["gj_prof_empty"], mp, target=2.0)
    t.add("profiler_ndarray loop, warm cache", r["gj_prof_warm"], mp, target=2.0)
    t.add("  MXNet 1.9.1", mp)
    # a known shape: the exact program, with the size-class check, and without it (the
    # ops unmarked: the path before size classes); interleaved rounds
    a, b = mx.nd.ones((64, 256)), mx.nd.ones((64, 256))
    ops = [_reg.get("exp"), _reg.get("broadcast_add")]
    marks = [o.bucket for o in ops]

    def call(marked):
        def fn():
            for o, m in zip(ops, marks):
                o.bucket = m if marked else None
            return mx.nd.exp(a + b)

        return fn

    try:
        r = compare({"on": call(True), "off": call(False)}, n, rounds=11)
    finally:
        for o, m in zip(ops, marks):
            o.bucket = m
    cmp = {k: v / 2 for k, v in r.items()}
    t.add("known shape: exp(a + b), per op", cmp["on"], cmp["off"], target=1.05)
    t.add("  the same, size classes off", cmp["off"])
    t.show()
