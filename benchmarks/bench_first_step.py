"""Time to the first training step and to the steady state, and XLA compiles on the way.

Each row runs in a fresh process (so nothing is compiled yet), for the MLP and the LeNet of
``bench_train`` with SGD at batch 64: gluonjax's three-line loop hybridized and eager, and a
hand-written pure JAX + optax step. "cold" has no persistent compilation cache; "second run"
is a second process with the cache the first one filled (``GLUONJAX_CACHE_DIR``; pure JAX
gets the same jax cache settings), which is what re-running a script or notebook costs.

- first step: from building the model to the end of step 0 (trace, compile, run);
- steady: from building the model to the end of the first step that runs within 1.5x of
  the steady per-step time (the median of steps 20-29);
- compiles: jax ``backend_compile`` events in the loop until then (a cache hit compiles
  nothing); "setup" counts those before the loop (parameters, optimizer states, inputs).

Targets (issue "Fast from the first step"): hybridized, at most 3 compiles to the steady
state, and time to the steady state at most 1.3x pure JAX's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

STEPS = 30


def _child(kind, mode):
    import numpy as np
    from jax._src import monitoring

    compiles = []
    monitoring.register_event_duration_secs_listener(
        lambda e, d, **kw: (
            compiles.append(d) if e == "/jax/core/compile/backend_compile_duration" else None
        )
    )
    cache = os.environ.get("BENCH_JAX_CACHE")
    if cache:  # the persistent cache as gluonjax configures it, for every contender
        import jax

        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.05)
    from . import bench_train as bt

    rs = np.random.RandomState(0)
    shape = (64, 512) if kind == "mlp" else (64, 1, 28, 28)
    xn, yn = rs.randn(*shape).astype(np.float32), rs.randint(0, 10, 64).astype(np.float32)
    times, marks = [], []
    start = time.perf_counter()
    if mode == "pure":
        import jax.numpy as jnp

        dims = [(6, 1, 5, 5), (16, 6, 5, 5), (120, 256)] if kind == "lenet" else [(256, 512)]
        dims += [(84, 120), (10, 84)] if kind == "lenet" else [(128, 256), (10, 128)]
        params = []
        for d in dims:  # MXNet's layouts: (out, in) and (out, in, kh, kw)
            params += [jnp.asarray(rs.randn(*d).astype(np.float32) * 0.05)]
            params += [jnp.zeros((d[0],), jnp.float32)]
        step = bt._pure_step(kind, params)
        x, y = jnp.asarray(xn), jnp.asarray(yn)
        setup = len(compiles)
        for _ in range(STEPS):
            t = time.perf_counter()
            step(x, y)[0].block_until_ready()
            times.append(time.perf_counter() - t)
            marks.append((time.perf_counter() - start, len(compiles)))
    else:
        import gluonjax as mx
        from gluonjax import autograd, gluon, nd

        net = bt._mlp() if kind == "mlp" else bt._lenet()
        net.initialize(mx.init.Xavier())
        if mode == "hybrid":
            net.hybridize()
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": bt.LR})
        x, y = nd.array(xn), nd.array(yn)
        setup = len(compiles)
        for _ in range(STEPS):
            t = time.perf_counter()
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            tr.step(64)
            loss.wait_to_read()
            times.append(time.perf_counter() - t)
            marks.append((time.perf_counter() - start, len(compiles)))
    steady = float(np.median(times[20:]))
    k = next(i for i, t in enumerate(times) if t <= 1.5 * steady)
    print(
        json.dumps(
            {
                "first": marks[0][0],
                "steady_at": marks[k][0],
                "setup": setup,
                "compiles": marks[k][1] - setup,
                "step": steady,
            }
        )
    )


def _measure(kind, mode, cache):
    env = dict(os.environ, GLUONJAX_COMPILE_NOTICE="0")
    env["GLUONJAX_CACHE_DIR"] = cache or "off"
    if cache:
        env["BENCH_JAX_CACHE"] = cache
    else:
        env.pop("BENCH_JAX_CACHE", None)
    cmd = [sys.executable, "-m", "benchmarks.bench_first_step", "--child", kind, mode]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(n=None):
    print(
        "\n== time to the first step and to the steady state (fresh process each; SGD, "
        "batch 64)\n   ratio = gluonjax / pure JAX in the same run; targets: hybridized "
        "<= 3 compiles and steady <= 1.3x"
    )
    head = f"{'row':<34}{'first step':>12}{'steady at':>12}{'compiles':>10}{'setup':>7}{'step':>11}"
    print(head + f"{'ratio (steady)':>16}  status")
    for kind in ("mlp", "lenet"):
        for label, warm in (("cold", False), ("second run", True)):
            with tempfile.TemporaryDirectory() as d:
                res = {}
                for mode in ("pure", "hybrid", "eager"):
                    cache = os.path.join(d, mode) if warm else None
                    if warm:  # the first process fills the cache
                        _measure(kind, mode, cache)
                    res[mode] = _measure(kind, mode, cache)
            base = res["pure"]["steady_at"]
            for mode in ("pure", "hybrid", "eager"):
                r = res[mode]
                ratio = r["steady_at"] / base
                status = ""
                if mode == "hybrid":
                    ok = r["compiles"] <= 3 and ratio <= 1.3
                    status = "meets" if ok else "MISSES"
                name = f"{kind} {label}: {mode}"
                print(
                    f"{name:<34}{r['first'] * 1e3:>10.0f}ms{r['steady_at'] * 1e3:>10.0f}ms"
                    f"{r['compiles']:>10d}{r['setup']:>7d}{r['step'] * 1e6:>9.0f}us{ratio:>15.2f}x"
                    f"  {status}"
                )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3])
    else:
        run()
