"""Data parallel across processes: a ``dist_sync`` training step on 2 local workers.

``python -m gluonjax.launch -n 2`` starts two workers on this machine (one CPU device
each, collectives over gloo); each times, interleaved in rounds, a step of a 10-layer
MLP (Dense 64, relu; 20 parameters; batch 32 per worker) made three ways:

- gluonjax, the three-line loop hybridized, ``Trainer(kvstore='dist_sync')`` (every dense
  gradient in one push, summed as one flat buffer);
- the same with one push per parameter (the store's per-key path, as MXNet's Trainer
  calls it), to show what the batched push saves;
- pure JAX: one ``jax.jit`` step over a global mesh of both processes' devices, the batch
  sharded over the processes (``make_array_from_process_local_data``), the parameters
  replicated; XLA inserts the all-reduce.

Ratios are against pure JAX in the same job. Target: none formal (the issue's 1.1x target
is for devices of one process); gluonjax does more per step (one dispatch per phase, the
store's bookkeeping), which the ratio shows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import Table

WIDTH, DEPTH, BATCH = 64, 10, 32


def _child(steps, rounds, out):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    import gluonjax as mx
    from gluonjax.kvstore import DistKVStore

    rank = jax.process_index()
    rs = np.random.RandomState(rank)
    xn = rs.rand(BATCH, WIDTH).astype(np.float32)
    x = mx.nd.array(xn)

    def gluon_step(batched):
        mx.random.seed(0)
        net = mx.gluon.nn.HybridSequential()
        for _ in range(DEPTH):
            net.add(mx.gluon.nn.Dense(WIDTH, activation="relu", in_units=WIDTH))
        net.initialize()
        net.hybridize()
        trainer = mx.gluon.Trainer(
            net.collect_params(), "sgd", {"learning_rate": 1e-3}, kvstore="dist_sync"
        )

        def step():
            DistKVStore._batched = batched
            with mx.autograd.record():
                loss = net(x).sum()
            loss.backward()
            trainer.step(2 * BATCH)
            return net[0].weight.data()

        return step

    mesh = Mesh(np.array(jax.devices()), ("p",))
    rep, rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("p"))
    keys = jax.random.split(jax.random.PRNGKey(0), DEPTH)
    params = [(jax.random.normal(k, (WIDTH, WIDTH)) * 0.1, jnp.zeros((WIDTH,))) for k in keys]
    params = jax.device_put(params, rep)
    gx = jax.make_array_from_process_local_data(rows, xn)

    def loss_fn(ps, xb):
        h = xb
        for w, b in ps:
            h = jax.nn.relu(h @ w.T + b)
        return h.sum()

    @jax.jit
    def pure(ps, xb):
        grads = jax.grad(loss_fn)(ps, xb)
        return jax.tree_util.tree_map(lambda p, g: p - 1e-3 / (2 * BATCH) * g, ps, grads)

    state = {"ps": params}

    def pure_step():
        state["ps"] = pure(state["ps"], gx)
        return state["ps"][0][0]

    fns = {"batched": gluon_step(True), "per_key": gluon_step(False), "pure": pure_step}
    for fn in fns.values():  # warm up (compiles); every worker runs the same calls
        for _ in range(5):
            last = fn()
        jax.block_until_ready(getattr(last, "_data", last))
    best = {k: float("inf") for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(steps):
                last = fn()
            jax.block_until_ready(getattr(last, "_data", last))
            best[k] = min(best[k], (time.perf_counter() - t0) / steps)
    if rank == 0:
        Path(out).write_text(json.dumps(best))


def run(n=1000):
    steps, rounds = max(n // 50, 4), 5
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "times.json"
        env = dict(os.environ, PYTHONPATH=str(root))
        env.pop("XLA_FLAGS", None)
        cmd = [sys.executable, "-m", "gluonjax.launch", "-n", "2", "--timeout", "600"]
        cmd += [sys.executable, "-m", "benchmarks.bench_dist", str(steps), str(rounds), str(out)]
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
        if proc.returncode != 0 or not out.exists():
            print(f"\n== dist_sync: the 2-worker job failed ({proc.returncode})")
            print(proc.stdout[-2000:])
            return
        best = json.loads(out.read_text())
    t = Table(
        f"dist_sync step, 2 local workers, MLP {DEPTH}x Dense {WIDTH}, batch {BATCH} per "
        f"worker (ratio vs pure JAX global-mesh jit in the same job)"
    )
    t.add("pure JAX: jit over a global mesh", best["pure"], best["pure"])
    t.add("gluonjax Trainer dist_sync (one push)", best["batched"], best["pure"])
    t.add("gluonjax, one push per parameter", best["per_key"], best["pure"])
    t.show()


if __name__ == "__main__":
    _child(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
