"""Timing helpers shared by the benchmark rows."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from pathlib import Path

import jax

MXNET_PY = Path(__file__).resolve().parents[1] / ".venv-mxnet" / "bin" / "python"


def block(x):
    """Wait for ``x`` (NDArray, jax array or pytree of them)."""
    raw = getattr(x, "_data", x)
    jax.block_until_ready(
        jax.tree_util.tree_map(
            lambda v: getattr(v, "_data", v), raw, is_leaf=lambda v: hasattr(v, "_data")
        )
    )


def per_call(fn, n=1000, repeats=5, warmup=20):
    """Median seconds per call of ``fn()`` over ``repeats`` runs of ``n`` calls."""
    for _ in range(warmup):
        out = fn()
    block(out)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            out = fn()
        block(out)
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times)


def compare(fns, n=1000, rounds=7, warmup=20):
    """Seconds per call of each ``fns[name]()``, measured interleaved (round-robin).

    Each round times ``n`` calls of every function in turn; the minimum over the
    rounds is reported, so a burst of load on the machine hits all rows alike and
    does not decide a ratio.
    """
    for fn in fns.values():
        for _ in range(warmup):
            out = fn()
        block(out)
    best = {k: float("inf") for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(n):
                out = fn()
            block(out)
            best[k] = min(best[k], (time.perf_counter() - t0) / n)
    return best


class Table:
    """Rows of ``name | time | ratio vs baseline | target``."""

    def __init__(self, title):
        self.title = title
        self.rows = []

    def add(self, name, seconds, baseline=None, target=None, note=""):
        self.rows.append((name, seconds, baseline, target, note))

    def show(self):
        print(f"\n== {self.title}")
        print(f"{'row':<44}{'per call':>12}{'ratio':>9}{'target':>10}  status")
        for name, sec, base, target, note in self.rows:
            ratio = sec / base if base else None
            r = f"{ratio:8.2f}x" if ratio is not None else " " * 9
            t = f"<= {target:.2f}" if target is not None else ""
            status = ""
            if target is not None and ratio is not None:
                status = "meets" if ratio <= target else "MISSES"
            print(f"{name:<44}{fmt(sec):>12}{r}{t:>10}  {status} {note}".rstrip())


def fmt(sec):
    if sec < 1e-3:
        return f"{sec * 1e6:.1f} us"
    return f"{sec * 1e3:.2f} ms"


def mxnet_seconds(script, timeout=900):
    """Run ``script`` with real MXNet 1.9.1 (``.venv-mxnet``; ``mx`` is imported) and
    return the float it prints last, or None when that interpreter is not installed."""
    if not MXNET_PY.exists():
        return None
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.setdefault("MXNET_MKLDNN_ENABLED", "1")  # MXNet's default CPU path, as users run it
    proc = subprocess.run(
        [
            str(MXNET_PY),
            "-c",
            "import warnings; warnings.simplefilter('ignore')\nimport mxnet as mx\n" + script,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the MXNet benchmark script failed:\n{proc.stderr[-2000:]}")
    return float(proc.stdout.strip().splitlines()[-1])


def fusion_profile(fn, calls=3, top=8):
    """Where the XLA time of ``fn()`` goes: ``[(kind, ms per call)]`` of its compiled
    programs' thunks (XLA:CPU fusions, convolutions, copies), grouped by name without the
    ``.N`` suffix, largest first; from a jax profiler trace (Perfetto JSON) of ``calls``
    calls after a warm-up call."""
    import collections
    import glob
    import gzip
    import json
    import re
    import tempfile

    fn()
    with tempfile.TemporaryDirectory() as d:
        jax.profiler.start_trace(d, create_perfetto_trace=True)
        for _ in range(calls):
            fn()
        jax.profiler.stop_trace()
        path = glob.glob(os.path.join(d, "**", "*.trace.json.gz"), recursive=True)[0]
        with gzip.open(path) as f:
            events = json.load(f)["traceEvents"]
    cat = collections.Counter()
    skip = ("$", "end: ")
    for e in events:
        name = e.get("name", "")
        if e.get("ph") != "X" or "dur" not in e or name.startswith(skip):
            continue
        if "Execute" in name or "Pjit" in name or " " in name or name[:1].isupper():
            continue  # runtime frames, not thunks
        cat[re.sub(r"\.\d+$", "", name)] += e["dur"] / 1e3 / calls
    return cat.most_common(top)
