"""Model zoo: time to the first output of resnet18_v1, and the gradient of a convolution
whose kernel covers its input (MXNet's test_conv2d_16c layer).

Rows:

* resnet18_v1 (batch 1, 224x224): build + ``initialize()`` + first hybridized output
  (trace and XLA compile included), then seconds per hybridized call; against MXNet
  1.9.1 (``hybridize(static_alloc=True)``) in a subprocess when ``.venv-mxnet`` exists.
  Target: per call faster than MXNet, first output within 1.5x of MXNet's.
* input and weight gradient of a 64x64 kernel over 4x3x64x64 images: gluonjax's
  convolution (one dot product per output position) against XLA's own convolution
  gradient (a transposed convolution over the padded input) in the same run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import jax
import numpy as np

import gluonjax as mx
from gluonjax._ops.defs import conv

from .common import Table, block, compare

MXNET_PY = Path(__file__).resolve().parents[1] / ".venv-mxnet" / "bin" / "python"

MXNET_TIMER = """
import os, time
os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
import mxnet as mx
x = mx.nd.ones((1, 3, 224, 224))
t0 = time.perf_counter()
net = mx.gluon.model_zoo.vision.resnet18_v1()
net.initialize()
net.hybridize(static_alloc=True, static_shape=True)
net(x).wait_to_read()
first = time.perf_counter() - t0
for _ in range(10):
    net(x).wait_to_read()
best = float("inf")
for _ in range(5):
    t0 = time.perf_counter()
    for _ in range({n}):
        out = net(x)
    out.wait_to_read()
    best = min(best, (time.perf_counter() - t0) / {n})
print(first, best)
"""


def _mxnet_resnet18(n):
    if not MXNET_PY.exists():
        return None, None
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [str(MXNET_PY), "-c", textwrap.dedent(MXNET_TIMER).format(n=n)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        return None, None
    first, per_call = proc.stdout.split()[-2:]
    return float(first), float(per_call)


def _resnet18(n):
    x = mx.nd.ones((1, 3, 224, 224))
    t0 = time.perf_counter()
    net = mx.gluon.model_zoo.vision.resnet18_v1()
    net.initialize()
    net.hybridize(static_alloc=True, static_shape=True)
    block(net(x))
    first = time.perf_counter() - t0
    return first, compare({"net": lambda: net(x)}, n)["net"]


def _big_kernel_grads(n):
    rng = np.random.default_rng(0)
    x = jax.numpy.asarray(rng.standard_normal((4, 3, 64, 64)).astype(np.float32))
    w = jax.numpy.asarray(rng.standard_normal((16, 3, 64, 64)).astype(np.float32))

    def ours(a, b):
        return conv._conv_by_patches(a, b, (64, 64), (1, 1), (1, 1), (0, 0), 1, "NCHW").sum()

    def xla(a, b):
        dn = ("NCHW", "OIHW", "NCHW")
        return jax.lax.conv_general_dilated(a, b, (1, 1), "VALID", dimension_numbers=dn).sum()

    g_ours = jax.jit(jax.grad(ours, (0, 1)))
    g_xla = jax.jit(jax.grad(xla, (0, 1)))
    return compare({"ours": lambda: g_ours(x, w), "xla": lambda: g_xla(x, w)}, n, rounds=3)


def run(n=1000):
    first, per_call = _resnet18(max(n // 50, 5))
    mx_first, mx_call = _mxnet_resnet18(max(n // 50, 5))
    t = Table("model zoo: resnet18_v1, batch 1, 224x224, hybridized (MXNet: static_alloc)")
    if mx_first is not None:
        t.add("MXNet 1.9.1: build + initialize + first output", mx_first)
        t.add("gluonjax: build + initialize + first output", first, mx_first, 1.5)
        t.add("MXNet 1.9.1: per call", mx_call)
        t.add("gluonjax: per call", per_call, mx_call, 1.0)
    else:
        t.add("gluonjax: build + initialize + first output", first)
        t.add("gluonjax: per call", per_call, note="(no .venv-mxnet: MXNet rows skipped)")
    t.show()
    r = _big_kernel_grads(max(n // 200, 2))
    t = Table("d/dx, d/dw of a 64x64 kernel over 4x3x64x64 images (16 filters)")
    t.add("XLA convolution gradient", r["xla"])
    t.add("gluonjax: a dot product per output position", r["ours"], r["xla"], 1.0)
    t.show()


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
