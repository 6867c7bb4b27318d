"""Issue "Speed": which runtime to serve an exported ResNet-50 with on the CPU.

``python -m benchmarks --only bench_onnx [--budget SECONDS]``; alone, with other sizes:
``python -m benchmarks.bench_onnx --model resnet18_v1 --size 64 --batches 1,2 --reps 2``.

gluon.model_zoo's resnet50_v1 (random weights from ``mx.random.seed(0)``, no download) at
batch 1 and 32, 224x224, float32, in three runtimes:

* gluonjax: the block hybridized (``static_alloc=True, static_shape=True``), the baseline;
* ONNX Runtime: the file ``mx.onnx.export_block`` writes (one per batch size, fixed
  shapes) in an ``InferenceSession`` with the ``CPUExecutionProvider`` and its defaults
  (all graph optimizations, ``intra_op_num_threads=0``: one thread per physical core);
* MXNet 1.9.1 (``.venv-mxnet``, MKLDNN on unless ``MXNET_MKLDNN_ENABLED`` says otherwise):
  its own model_zoo resnet50_v1 hybridized the same way, with the same weights (the
  ``.params`` file gluonjax saved, loaded by MXNet's ``load_parameters``), in a child
  process per batch size.

Per call: the median over ``reps`` calls, each timed until its result is on the host
(``asnumpy``; ORT's ``run`` returns numpy), in rounds of gluonjax then ONNX Runtime (one
untimed call first in each, so neither times the other's idle threads). Time to first
result, from a built model: gluonjax ``load_parameters`` + ``hybridize`` + first output
(trace and XLA compile, or a load from the persistent compile cache, which the row says:
``GLUONJAX_CACHE_DIR=off`` for a cold compile every run); ONNX Runtime ``export_block``
(from that hybridized block, already compiled) + ``InferenceSession`` + first output; MXNet
``load_parameters`` + ``hybridize`` + first output. Each first output is also compared
with gluonjax's: largest difference over gluonjax's largest output, within 1e-4.
Ratios are time over gluonjax's (below 1: faster than gluonjax). No target: information.

``--budget``: no measurement starts once it is spent (its row says so). The time left is
shared out for the timing loops, which stop early (one call timed at least): each batch
size gets an equal share of what is left when it starts (what one does not use goes on),
of which MXNet's child gets a third and gluonjax and ONNX Runtime the rest in turns.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np

from .common import MXNET_PY, Table

MODEL, SIZE, BATCHES = "resnet50_v1", 224, (1, 32)
TOL = 1e-4
SPENT = "not run (time budget spent)"

MXNET_SCRIPT = """
import json, os, sys, time
import numpy as np
import mxnet as mx
spec = json.loads(sys.argv[1])
b, d = spec["batch"], spec["dir"]
x = mx.nd.array(np.load(os.path.join(d, "x%d.npy" % b)))
net = mx.gluon.model_zoo.vision.get_model(spec["model"])
t0 = time.perf_counter()
net.load_parameters(os.path.join(d, "net.params"))
net.hybridize(static_alloc=True, static_shape=True)
y = net(x).asnumpy()
first = time.perf_counter() - t0
np.save(os.path.join(d, "mx%d.npy" % b), y)
times = []
net(x).asnumpy()
while len(times) < spec["reps"] and (not times or time.time() < spec["end"]):
    t0 = time.perf_counter()
    net(x).asnumpy()
    times.append(time.perf_counter() - t0)
print(json.dumps({"first": first, "times": times,
                  "mkldnn": mx.runtime.Features().is_enabled("MKLDNN")}))
"""


def missing():
    """Why the benchmark cannot run here, or None."""
    gone = [m for m in ("onnx", "onnxruntime") if importlib.util.find_spec(m) is None]
    if gone:
        return f"{' and '.join(gone)} not installed (pip install 'gluonjax[onnx]')"
    return None


_HITS = []


def _count_cache_hits():
    from jax._src import monitoring

    if not _HITS:  # registered once per process; _HITS[0] is a placeholder
        _HITS.append(0)
        monitoring.register_event_listener(
            lambda e, **kw: _HITS.append(1) if e == "/jax/compilation_cache/cache_hits" else None
        )
    return len(_HITS)


def rel_err(got, want):
    """Largest absolute difference over the largest absolute value of ``want``."""
    return float(np.abs(np.asarray(got) - want).max() / np.abs(want).max())


def _timed(fns, reps, end, rounds=2):
    """Seconds per call of each ``fns[name]()``: ``reps`` calls each, in ``rounds`` rounds
    of every function in turn (an untimed call first in each round). Before ``end`` each
    turn gets an equal share of the time left; every function has one timed call."""
    times = {k: [] for k in fns}
    per_round = -(-reps // rounds)
    for r in range(rounds):
        for i, (k, fn) in enumerate(fns.items()):
            now = time.perf_counter()
            if times[k] and now >= end:
                continue
            stop = now + max(end - now, 0.0) / ((rounds - r) * len(fns) - i)
            fn()
            for _ in range(min(per_round, reps - len(times[k]))):
                t0 = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t0)
                if time.perf_counter() >= stop:
                    break
    return times


def _mxnet(d, model, batch, reps, stop, end):
    """MXNet 1.9.1's ``{"first", "times", "mkldnn"}`` in a child process (timing until
    ``stop``), or a reason."""
    if not MXNET_PY.exists():
        return "no .venv-mxnet: MXNet 1.9.1 not installed (make mxnet-ref)"
    now = time.perf_counter()
    if now >= end:
        return SPENT
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.setdefault("MXNET_MKLDNN_ENABLED", "1")  # MXNet's default CPU path, as users run it
    spec = {"dir": d, "model": model, "batch": batch, "reps": reps}
    spec["end"] = time.time() + max(stop - now, 0.0)
    script = "import warnings; warnings.simplefilter('ignore')\n" + MXNET_SCRIPT
    try:
        proc = subprocess.run(
            [str(MXNET_PY), "-c", script, json.dumps(spec)],
            capture_output=True,
            text=True,
            env=env,
            timeout=min(end - now, 1e6) + 120,  # the first output may start just before the end
        )
    except subprocess.TimeoutExpired:
        return "MXNet's child process timed out"
    if proc.returncode != 0:
        return "MXNet failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _batch(mx, vision, d, model, size, batch, reps, share, end, out):
    """Measure one batch size into ``out[(runtime, batch)]``: timing loops until ``share``,
    no measurement started after ``end``."""
    import onnxruntime as ort

    x = mx.nd.array(np.random.RandomState(batch).uniform(size=(batch, 3, size, size)))
    np.save(os.path.join(d, f"x{batch}.npy"), x.asnumpy())
    net = vision.get_model(model)
    hits = _count_cache_hits()
    t0 = time.perf_counter()
    net.load_parameters(os.path.join(d, "net.params"))
    net.hybridize(static_alloc=True, static_shape=True)
    want = net(x).asnumpy()
    cached = _count_cache_hits() > hits
    out["gluonjax", batch] = {"first": time.perf_counter() - t0, "cached": cached}
    if time.perf_counter() >= end:
        out["ort", batch] = out["mxnet", batch] = SPENT
        return
    path = os.path.join(d, f"{model}_b{batch}.onnx")
    t0 = time.perf_counter()
    mx.onnx.export_block(net, x, path)
    t1 = time.perf_counter()
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    t2 = time.perf_counter()
    (got,) = sess.run(None, {"data": x.asnumpy()})
    t3 = time.perf_counter()
    out["ort", batch] = {
        "first": t3 - t0,
        "export": t1 - t0,
        "session": t2 - t1,
        "err": rel_err(got, want),
        "threads": sess.get_session_options().intra_op_num_threads,
        "opt": str(sess.get_session_options().graph_optimization_level).split(".")[-1],
    }
    feed = {"data": x.asnumpy()}
    fns = {"gluonjax": lambda: net(x).asnumpy(), "ort": lambda: sess.run(None, feed)}
    now = time.perf_counter()  # MXNet's child gets a third of the time left
    times = _timed(fns, reps, now + (share - now) * (2 / 3 if MXNET_PY.exists() else 1))
    for k, ts in times.items():
        out[k, batch]["times"] = ts
    res = _mxnet(d, model, batch, reps, share, end)
    if isinstance(res, dict):
        res["err"] = rel_err(np.load(os.path.join(d, f"mx{batch}.npy")), want)
    out["mxnet", batch] = res


def measure(model=MODEL, size=SIZE, batches=BATCHES, reps=10, budget=None):
    """``{(runtime, batch): dict or reason}``, runtime ``gluonjax``, ``ort``, ``mxnet``;
    ``reps``: timed calls per runtime, an int or ``{batch: int}``. A dict has ``first``
    (seconds to the first output), ``times`` (seconds per call), ``err`` (ort and mxnet:
    against gluonjax's first output) and its runtime's details."""
    import gluonjax as mx
    from gluonjax.gluon.model_zoo import vision

    end = time.perf_counter() + (float("inf") if budget is None else budget)
    out = {}
    with tempfile.TemporaryDirectory(prefix="bench-onnx-") as d:
        net = vision.get_model(model)
        mx.random.seed(0)
        net.initialize()
        net.infer_shape(mx.nd.zeros((1, 3, size, size)))
        net.save_parameters(os.path.join(d, "net.params"))
        for i, b in enumerate(batches):
            now = time.perf_counter()
            if now >= end:
                for rt in ("gluonjax", "ort", "mxnet"):
                    out[rt, b] = SPENT
                continue
            n = reps[b] if isinstance(reps, dict) else reps
            share = now + (end - now) / (len(batches) - i)  # what a batch leaves goes on
            _batch(mx, vision, d, model, size, b, n, share, end, out)
    return out


NAMES = {"gluonjax": "gluonjax hybridized", "ort": "ONNX Runtime", "mxnet": "MXNet 1.9.1"}


def tables(out, model=MODEL, size=SIZE, batches=BATCHES):
    """The two tables (per batch; time to first result) of ``measure``'s result."""
    ort_info = next((v for (rt, _), v in out.items() if rt == "ort" and isinstance(v, dict)), {})
    threads = ort_info.get("threads", 0)
    head = (
        f"{model}, {size}x{size}, float32, CPU ({os.cpu_count()} logical CPUs); ONNX Runtime "
        f"{_version('onnxruntime')} CPUExecutionProvider, intra_op_num_threads={threads}"
        f"{' (default: one per physical core)' if threads == 0 else ''}, "
        f"{ort_info.get('opt', 'ORT_ENABLE_ALL')}; ratio: time / gluonjax's"
    )
    per = Table(f"serving runtimes, median per batch: {head}")
    first = Table(f"serving runtimes, time to first result: {head}")
    for b in batches:
        base = out.get(("gluonjax", b))
        for rt in ("gluonjax", "ort", "mxnet"):
            r = out.get((rt, b), SPENT)
            name = f"batch {b}: {NAMES[rt]}"
            if not isinstance(r, dict):
                per.add(name, float("nan"), note=r)
                first.add(name, float("nan"), note=r)
                continue
            ref = base if rt != "gluonjax" and isinstance(base, dict) else None
            per.add(name, *_per_batch(r, ref, b))
            first.add(name, r["first"], ref["first"] if ref else None, note=_first_note(rt, r))
    return per, first


def _per_batch(r, ref, batch):
    ts = r.get("times") or []
    if not ts:
        return float("nan"), None, None, SPENT
    med = statistics.median(ts)
    note = f"{batch / med:8.1f} img/s, median of {len(ts)}"
    if "err" in r:
        ok = "ok" if r["err"] <= TOL else "DIFFERS"
        note += f"; vs gluonjax {r['err']:.1e} ({ok}, <= {TOL:.0e})"
    base = statistics.median(ref["times"]) if ref and ref.get("times") else None
    return med, base, None, note


def _first_note(rt, r):
    if rt == "gluonjax":
        how = "loaded from the persistent cache" if r["cached"] else "trace + XLA compile"
        return f"load_parameters + hybridize + first output ({how})"
    if rt == "ort":
        return f"export_block {r['export']:.2f} s + InferenceSession {r['session']:.2f} s + run"
    mkl = "MKLDNN" if r.get("mkldnn") else "no MKLDNN"
    return f"load_parameters + hybridize + first output ({mkl})"


def _version(name):
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def run(n=1000, budget=None, model=MODEL, size=SIZE, batches=BATCHES, reps=None):
    """Measure and print the two tables (``n``: 1000, or 200 with ``--quick``; unless
    ``reps`` is given, batch 1 gets ``n // 50`` timed calls, larger batches ``n // 200``,
    at least 3 each)."""
    why = missing()
    if why:
        print(f"\n== serving runtimes (ONNX Runtime vs gluonjax vs MXNet): skipped, {why}")
        return None
    reps = reps or {b: max(n // 50 if b == 1 else n // 200, 3) for b in batches}
    out = measure(model, size, batches, reps, budget)
    for t in tables(out, model, size, batches):
        t.show()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=MODEL, help="a gluon.model_zoo.vision name")
    ap.add_argument("--size", type=int, default=SIZE, help="image height and width")
    ap.add_argument("--batches", default=",".join(map(str, BATCHES)))
    ap.add_argument("--reps", type=int, help="timed calls per runtime and batch")
    ap.add_argument("--budget", type=float, help="seconds for the whole benchmark")
    a = ap.parse_args(argv)
    batches = tuple(int(b) for b in a.batches.split(","))
    run(budget=a.budget, model=a.model, size=a.size, batches=batches, reps=a.reps)


if __name__ == "__main__":
    main()
