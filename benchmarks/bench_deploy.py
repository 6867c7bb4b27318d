"""Issue "Export and serve": the seed MLP at batch 1, exported and served.

Rows: the hybridized block in this process (baseline), the exported StableHLO
artifact through ``deploy.load`` in a fresh process that imports only jax and
numpy, and the IREE module through ``deploy.load_iree`` in a process without
jax (when ``iree-base-compiler``/``iree-base-runtime`` are installed). The other
processes time their calls with the same loop (minimum over rounds of ``n``
calls) and print seconds per call.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

import gluonjax as mx
from gluonjax.gluon import nn

from .common import Table, compare

TIMER = """
import sys, time
sys.path.insert(0, {d!r})
import numpy as np
import deploy
x = np.load({d!r} + '/x.npy')
f = {loader}({d!r} + '/mlp')
if {loader!r} == 'deploy.load':  # the block's input lives on the device too
    import jax
    x = jax.device_put(x)
for _ in range(20):
    out = f(x)
np.asarray(out)
best = float('inf')
for _ in range(7):
    t0 = time.perf_counter()
    for _ in range({n}):
        out = f(x)
    np.asarray(out)
    best = min(best, (time.perf_counter() - t0) / {n})
assert 'gluonjax' not in sys.modules
print(best)
"""


def _net():
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
    net.initialize()
    return net


def _time_in_subprocess(d, loader, n):
    script = textwrap.dedent(TIMER).format(d=d, loader=loader, n=n)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=d, env=env, capture_output=True, text=True, timeout=600
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return float(proc.stdout.strip().splitlines()[-1])


def run(n=1000):
    x = mx.nd.random.normal(shape=(1, 512))
    net = _net()
    net.hybridize()
    net(x)
    have_iree = (
        importlib.util.find_spec("iree.compiler") is not None
        and importlib.util.find_spec("iree.runtime") is not None
    )
    with tempfile.TemporaryDirectory() as d:
        net.export(os.path.join(d, "mlp"), example_inputs=[x], iree=have_iree)
        shutil.copy(os.path.join(os.path.dirname(mx.__file__), "deploy.py"), d)
        np.save(os.path.join(d, "x.npy"), x.asnumpy())
        from gluonjax import deploy

        local = deploy.load(os.path.join(d, "mlp"))
        xd = x._data
        r = compare({"hybrid": lambda: net(x), "deploy": lambda: local(xd)}, n)
        t_jax = _time_in_subprocess(d, "deploy.load", n)
        t_iree = _time_in_subprocess(d, "deploy.load_iree", n) if have_iree else None
    t = Table("seed MLP exported, input (1, 512), per call vs the hybridized block")
    t.add("hybridized block (this process)", r["hybrid"])
    t.add("deploy.load artifact (this process)", r["deploy"], r["hybrid"])
    t.add("deploy.load artifact (jax-only process)", t_jax, r["hybrid"], 1.2)
    if t_iree is not None:
        t.add("deploy.load_iree module (no-jax process)", t_iree, r["hybrid"])
    else:
        t.add("IREE: iree-base-compiler/runtime not installed", float("nan"), note="skipped")
    t.show()


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
