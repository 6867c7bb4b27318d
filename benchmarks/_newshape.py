"""Eager ops on shapes a process has not seen (issue: eager mode without compile stalls).

Each workload is a script run in its own process, so that "a new process with an empty
compile cache" and "a second process with a warm one" are what they say. The same
script text runs on gluonjax and on real MXNet 1.9.1 (``mx`` is either); PyTorch and
pure JAX get the same work written in their own API. Each script prints the seconds
per op last.

Shapes follow MXNet's ``example/profiler/profiler_ndarray.py``: rank 1-3, each
dimension uniform in ``[1, 1000 ** (1 / rank))``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np

from .common import mxnet_seconds

SHAPES = """
import time
import numpy as np
rng = np.random.RandomState(SEED)
def _shape():
    r = rng.randint(1, 4)
    return tuple(int(d) for d in rng.randint(1, int(1000 ** (1 / r)), size=r))
shapes = [_shape() for _ in range(60)]
host = [(rng.rand(*s).astype(np.float32),
         rng.rand(*(s[1:] if len(s) > 1 else s)).astype(np.float32)) for s in shapes]
"""

# 60 shapes x 5 ops: broadcast_add, *, -, exp, sum(axis=0); the result is read per shape
ND = (
    SHAPES
    + """
data = [(mx.nd.array(a), mx.nd.array(b)) for a, b in host]
mx.nd.waitall()
def once():
    for x, y in data:
        z = mx.nd.broadcast_add(x, y); z = z * x; z = z - x; z = mx.nd.exp(z)
        z = mx.nd.sum(z, axis=0)
        z.wait_to_read()
t0 = time.perf_counter(); once(); t = time.perf_counter() - t0
if AGAIN:
    t0 = time.perf_counter(); once(); t = time.perf_counter() - t0
print(t / 300)
"""
)

ND_GRAD = (
    SHAPES
    + """
data = [(mx.nd.array(a), mx.nd.array(b)) for a, b in host]
mx.nd.waitall()
t0 = time.perf_counter()
for x, y in data:
    x.attach_grad(); y.attach_grad()
    with mx.autograd.record():
        z = mx.nd.broadcast_add(x, y); z = z * x; z = z - x; z = mx.nd.exp(z)
        z = mx.nd.sum(z, axis=0)
    z.backward()
    x.grad.wait_to_read(); y.grad.wait_to_read()
print((time.perf_counter() - t0) / 300)
"""
)

TORCH = (
    SHAPES
    + """
import torch
torch.set_num_threads(os.cpu_count() or 1)
data = [(torch.from_numpy(a), torch.from_numpy(b)) for a, b in host]
t0 = time.perf_counter()
for x, y in data:
    if GRAD:
        x.requires_grad_(); y.requires_grad_()
    z = x + y; z = z * x; z = z - x; z = torch.exp(z); z = z.sum(0)
    if GRAD:
        z.backward(torch.ones_like(z)); x.grad.numpy(); y.grad.numpy()
    else:
        z.numpy()
print((time.perf_counter() - t0) / 300)
"""
)

JAX = (
    SHAPES
    + """
import jax, jax.numpy as jnp
data = [(jax.device_put(a), jax.device_put(b)) for a, b in host]
def f(x, y):
    z = x + y; z = z * x; z = z - x; z = jnp.exp(z); return jnp.sum(z, axis=0)
t0 = time.perf_counter()
for x, y in data:
    if GRAD:
        out, vjp = jax.vjp(f, x, y); jax.block_until_ready(vjp(jnp.ones_like(out)))
    else:
        f(x, y).block_until_ready()
print((time.perf_counter() - t0) / 300)
"""
)

# MXNet's profiler_ndarray.py elementwise loop, shortened: float32 and float16 arrays of
# changing shapes, seven ops each, every result read back (as its check does)
PROFILER = """
import time
import numpy as np
rng = np.random.RandomState(0)
ops = [lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / y,
       lambda x, y: mx.nd.sqrt(x), lambda x, y: mx.nd.square(x), lambda x, y: mx.nd.norm(x)]
cases = []
for repeat in range(6):
    for dim in range(1, 4):
        for dtype in (np.float32, np.float16):
            for op in ops:
                s = tuple(int(d) for d in rng.randint(1, int(1000 ** (1.0 / dim)), size=dim))
                cases.append((op, rng.uniform(1, 10, s).astype(dtype),
                              rng.uniform(1, 10, s).astype(dtype)))
t0 = time.perf_counter()
for op, a, b in cases:
    op(mx.nd.array(a, dtype=a.dtype), mx.nd.array(b, dtype=b.dtype)).asnumpy()
print((time.perf_counter() - t0) / len(cases))
"""


def _script(body, **names):
    head = "".join(f"{k} = {v!r}\n" for k, v in names.items())
    return "import os\n" + head + body


def gluonjax_seconds(body, cache, timeout=900, classes=True, host=True, **names):
    """Seconds per op of ``body`` run by gluonjax in a new process using ``cache``
    as its persistent compile cache; ``classes=False``: size classes off (exact shapes,
    what gluonjax did before them); ``host=False``: every size class compiled (no NumPy
    host programs)."""
    env = dict(os.environ, GLUONJAX_CACHE_DIR=cache, GLUONJAX_COMPILE_NOTICE="0")
    env["GLUONJAX_SIZE_CLASSES"] = "1" if classes else "0"
    env["GLUONJAX_HOST_OPS"] = "1" if host else "0"
    code = "import gluonjax as mx\n" + _script(body, **names)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the gluonjax workload failed:\n{proc.stderr[-2000:]}")
    return float(proc.stdout.strip().splitlines()[-1])


def plain_seconds(body, timeout=900, **names):
    """Seconds per op of a PyTorch or JAX script, or None when that library is missing."""
    proc = subprocess.run(
        [sys.executable, "-c", _script(body, **names)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, JAX_COMPILATION_CACHE_DIR=""),
    )
    if proc.returncode != 0:
        if "ModuleNotFoundError" in proc.stderr:
            return None
        raise RuntimeError(f"the workload failed:\n{proc.stderr[-2000:]}")
    return float(proc.stdout.strip().splitlines()[-1])


def measure(seed=1, rounds=3):
    """Every number of the new-shape rows, in one run: each the median of ``rounds``
    processes, the libraries interleaved round by round (a 15-70 ms workload swings
    by a third from one process to the next on a loaded machine)."""
    runs = [_round(seed) for _ in range(rounds)]
    return {
        k: (None if any(r[k] is None for r in runs) else float(np.median([r[k] for r in runs])))
        for k in runs[0]
    }


def _round(seed):
    res = {}
    res["mx"] = mxnet_seconds(_script(ND, SEED=seed, AGAIN=False))
    res["mx_again"] = mxnet_seconds(_script(ND, SEED=seed, AGAIN=True))
    res["mx_grad"] = mxnet_seconds(_script(ND_GRAD, SEED=seed))
    res["mx_prof"] = mxnet_seconds(PROFILER)
    res["torch"] = plain_seconds(TORCH, SEED=seed, GRAD=False)
    res["torch_grad"] = plain_seconds(TORCH, SEED=seed, GRAD=True)
    res["jax"] = plain_seconds(JAX, SEED=seed, GRAD=False)
    res["jax_grad"] = plain_seconds(JAX, SEED=seed, GRAD=True)
    with tempfile.TemporaryDirectory() as d:
        res["gj_off_empty"] = gluonjax_seconds(ND, d, classes=False, SEED=seed, AGAIN=False)
        res["gj_off_warm"] = gluonjax_seconds(ND, d, classes=False, SEED=seed, AGAIN=False)
        res["gj_off_again"] = gluonjax_seconds(ND, d, classes=False, SEED=seed, AGAIN=True)
    with tempfile.TemporaryDirectory() as d:
        res["gj_compiled_empty"] = gluonjax_seconds(ND, d, host=False, SEED=seed, AGAIN=False)
        res["gj_compiled_warm"] = gluonjax_seconds(ND, d, host=False, SEED=seed, AGAIN=False)
    with tempfile.TemporaryDirectory() as d:
        res["gj_empty"] = gluonjax_seconds(ND, d, SEED=seed, AGAIN=False)
        res["gj_warm"] = gluonjax_seconds(ND, d, SEED=seed, AGAIN=False)
        res["gj_again"] = gluonjax_seconds(ND, d, SEED=seed, AGAIN=True)
    with tempfile.TemporaryDirectory() as d:
        res["gj_grad_empty"] = gluonjax_seconds(ND_GRAD, d, SEED=seed)
        res["gj_grad_warm"] = gluonjax_seconds(ND_GRAD, d, SEED=seed)
    with tempfile.TemporaryDirectory() as d:
        res["gj_prof_empty"] = gluonjax_seconds(PROFILER, d)
        res["gj_prof_warm"] = gluonjax_seconds(PROFILER, d)
    return res
