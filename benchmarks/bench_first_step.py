"""Time to the first training step and to the steady state, and XLA compiles on the way.

Each row runs in a fresh process (so nothing is compiled yet), for the workloads of
``_workloads`` (MLP and LeNet at batch 64, the CIFAR ResNet-18 of the model zoo,
``resnet18_v1(classes=10, thumbnail=True)``, at batch 32), SGD: gluonjax's three-line loop
hybridized and eager, a hand-written pure JAX + optax step, and in the same run MXNet 1.9.1
(``hybridize(static_alloc=True, static_shape=True)``, its own interpreter) and PyTorch eager.
"cold" has no persistent compilation cache; "second run" is a second process with the cache
the first one filled (``GLUONJAX_CACHE_DIR``; pure JAX gets the same jax cache settings),
which is what re-running a script or notebook costs. Libraries are imported before the
clock starts.

- first step: from building the model to the end of step 0 (trace, compile, run);
- steady: from building the model to the end of the first step that runs within 1.5x of
  the steady per-step time (the median of the last third of the steps);
- compiles: XLA programs compiled in the loop until then; "cached": programs loaded from the
  persistent cache instead (jax reports both as ``backend_compile``; a load is a
  ``cache_hits`` event too); "setup": compiles before the loop (parameters, optimizer
  states, inputs).

"pure-out" is the pure JAX step returning also what Gluon's loop leaves the user (the
per-sample losses, the net's outputs, the gradients): the same work as gluonjax's program,
shown beside the target's baseline (the minimal step) to tell the cost of those outputs
from gluonjax's own.

Targets (issue "Fast from the first step"): hybridized, at most 3 programs (compiled or
loaded) to the steady state, and time to the steady state at most 1.3x pure JAX's.
Timings on a shared 2-core machine are noisy; compare ratios within one run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# real MXNet 1.9.1 in its own interpreter (GLUONJAX_MXNET_PY or the checkout's .venv-mxnet)
MXNET_PY = Path(
    os.environ.get("GLUONJAX_MXNET_PY")
    or Path(__file__).resolve().parents[1] / ".venv-mxnet" / "bin" / "python"
)

# steps per process; the steady per-step time is the median of the last third
STEPS = {"mlp": 30, "lenet": 30, "resnet18": 6}
JAX_MODES = ("pure", "pure-out", "hybrid", "eager")


def _child(kind, mode):
    import numpy as np

    compiles, hits = [], []
    if mode in JAX_MODES:
        from jax._src import monitoring

        monitoring.register_event_duration_secs_listener(
            lambda e, d, **kw: (
                compiles.append(d) if e == "/jax/core/compile/backend_compile_duration" else None
            )
        )
        # a persistent-cache hit also reports a backend_compile (the load): told apart here
        monitoring.register_event_listener(
            lambda e, **kw: hits.append(1) if e == "/jax/compilation_cache/cache_hits" else None
        )
        cache = os.environ.get("BENCH_JAX_CACHE")
        if cache:  # the persistent cache as gluonjax configures it, for every contender
            import jax

            jax.config.update("jax_compilation_cache_dir", cache)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.05)
    from . import _workloads as w

    # the library is imported before the clock starts (an import is not a step)
    if mode in ("pure", "pure-out"):
        import optax  # noqa: F401
    elif mode == "torch":  # torch.optim imports most of torch lazily (~800 modules)
        import torch

        p = torch.zeros(1, requires_grad=True)
        p.grad = torch.ones(1)
        torch.optim.SGD([p], lr=0.1).step()
    elif mode == "mxnet":
        import mxnet as mx
    else:
        import gluonjax as mx
    start = time.perf_counter()
    if mode in ("pure", "pure-out"):
        step = w.pure_step(kind, outputs=mode == "pure-out")
    elif mode == "torch":
        step = w.torch_step(kind)
    else:
        step = w.gluon_step(mx, kind, hybridize=mode != "eager", static_alloc=mode == "mxnet")
    setup = len(compiles) - len(hits)
    times, marks = [], []
    for _ in range(STEPS[kind]):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
        marks.append((time.perf_counter() - start, len(compiles) - len(hits), len(hits)))
    steady = float(np.median(times[2 * len(times) // 3 :]))
    k = next(i for i, t in enumerate(times) if t <= 1.5 * steady)
    print(
        json.dumps(
            {
                "first": marks[0][0],
                "steady_at": marks[k][0],
                "setup": setup,
                "compiles": marks[k][1] - setup,
                "cached": marks[k][2],
                "step": steady,
                "jax": mode in JAX_MODES,
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
    py = sys.executable
    if mode == "mxnet":
        py = str(MXNET_PY)
        env.pop("PYTHONPATH", None)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = [py, "-m", "benchmarks.bench_first_step", "--child", kind, mode]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=root)
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} {mode}: " + proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _have_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def run(n=None):
    print(
        "\n== time to the first step and to the steady state (fresh process each; SGD; "
        "MLP and LeNet batch 64,\n   CIFAR ResNet-18 batch 32); ratio = time to the steady "
        "state / pure JAX's in the same run;\n   targets: hybridized <= 3 compiles and "
        "steady <= 1.3x pure JAX. MXNet 1.9.1: hybridize(static_alloc=True,\n   "
        "static_shape=True), its own interpreter; PyTorch: eager. (noisy on a shared machine)"
    )
    head = f"{'row':<34}{'first step':>11}{'steady at':>11}{'compiles':>9}{'cached':>7}"
    head += f"{'setup':>6}{'step':>11}"
    print(head + f"{'ratio (steady)':>16}  status")
    others = [m for m, ok in (("mxnet", MXNET_PY.exists()), ("torch", _have_torch())) if ok]
    for kind in ("mlp", "lenet", "resnet18"):
        for label, warm in (("cold", False), ("second run", True)):
            modes = list(JAX_MODES) if not warm else ["pure", "pure-out", "hybrid"]
            if kind != "resnet18" and warm:
                modes.append("eager")
            with tempfile.TemporaryDirectory() as d:
                res = {}
                for mode in modes + ([] if warm else others):
                    cache = os.path.join(d, mode) if warm else None
                    if warm:  # the first process fills the cache
                        _measure(kind, mode, cache)
                    res[mode] = _measure(kind, mode, cache)
            base = res["pure"]["steady_at"]
            for mode, r in res.items():
                ratio = r["steady_at"] / base
                status = ""
                if mode == "hybrid":
                    ok = r["compiles"] + r["cached"] <= 3 and ratio <= 1.3
                    status = "meets" if ok else "MISSES"
                name = f"{kind} {label}: {mode}"
                cc = f"{'-':>9}{'-':>7}{'-':>6}"
                if r["jax"]:
                    cc = f"{r['compiles']:>9d}{r['cached']:>7d}{r['setup']:>6d}"
                print(
                    f"{name:<34}{r['first'] * 1e3:>9.0f}ms{r['steady_at'] * 1e3:>9.0f}ms{cc}"
                    f"{r['step'] * 1e3:>9.2f}ms{ratio:>15.2f}x  {status}"
                )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3])
    else:
        run()
