"""gluoncv 0.10.5's ResNets, unmodified, on gluonjax against MXNet 1.9.1 and PyTorch (CPU).

Rows (all in one run, each contender in a fresh process):

* ``resnet50_v1b`` inference at batch 1 and batch 32, 224x224, hybridized
  (``static_alloc=True, static_shape=True``);
* one SGD training step (momentum 0.9, wd 1e-4, softmax cross-entropy) of ``resnet18_v1b`` at
  batch 32, 224x224;
* the same ``resnet50_v1b`` XLA program called by plain jax (its ``export`` artifact through
  ``gluonjax.deploy``), at batch 1: gluonjax's per-call overhead against XLA:CPU's own time;
* time to the first output: from ``get_model`` to the first inference output at batch 1
  (build, ``initialize``, deferred shapes, trace and XLA compile / MXNet's bind), and to the end
  of the first training step.

The same script runs in gluonjax's interpreter with the ``mxnet`` alias on
(:mod:`gluonjax.mxnet_alias`) and in MXNet 1.9.1's (``.venv-mxnet``, with gluoncv installed
there; its default CPU path, MKLDNN on). gluonjax starts with an empty persistent compilation
cache, so its first output includes every XLA compile; a "second run" row repeats only the
first outputs in a new process with the cache the first one filled (re-running a script).
PyTorch runs an equivalent ResNet (torchvision's layout, written out below so torchvision is
not needed) in eager mode. Per-call times are medians of a few runs (batch 32 at 224x224 is
slow on a small CPU). Targets: per call faster than MXNet (ratio <= 1.0) and the first output
within 1.5x of MXNet's. A contender whose interpreter or package is missing is skipped with a
note.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import Table

ROOT = Path(__file__).resolve().parents[1]
MXNET_PY = ROOT / ".venv-mxnet" / "bin" / "python"
BATCH = 32

# runs in both gluonjax's (alias on) and MXNet's interpreter; prints one JSON line
CHILD = """
import json, statistics, sys, time
import numpy as np
{setup}
import mxnet as mx
from mxnet import autograd, gluon
from gluoncv import model_zoo

REPEATS, BATCH, FIRST_ONLY = {repeats}, {batch}, {first_only}


def median(fn):
    if FIRST_ONLY:
        return float("nan")
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn()
        mx.nd.waitall()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


rng = np.random.RandomState(0)
x1 = mx.nd.array(rng.uniform(size=(1, 3, 224, 224)))
xb = mx.nd.array(rng.uniform(size=(BATCH, 3, 224, 224)))
yb = mx.nd.array(rng.randint(0, 1000, size=BATCH))
res = {{}}
mx.nd.waitall()

t0 = time.perf_counter()
net = model_zoo.get_model("resnet50_v1b", pretrained=False)
net.initialize()
net.hybridize(static_alloc=True, static_shape=True)
net(x1).wait_to_read()
res["infer_first"] = time.perf_counter() - t0
res["infer1"] = median(lambda: net(x1))
if not FIRST_ONLY:
    net(xb).wait_to_read()  # the batch-32 shape: compile / bind once
res["infer32"] = median(lambda: net(xb))
{xla_rows}
del net

t0 = time.perf_counter()
net = model_zoo.get_model("resnet18_v1b", pretrained=False)
net.initialize()
net.hybridize(static_alloc=True, static_shape=True)
trainer = gluon.Trainer(
    net.collect_params(), "sgd", {{"learning_rate": 0.01, "momentum": 0.9, "wd": 1e-4}}
)
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()


def step():
    with autograd.record():
        loss = loss_fn(net(xb), yb)
    loss.backward()
    trainer.step(BATCH)


step()
mx.nd.waitall()
res["train_first"] = time.perf_counter() - t0
res["train32"] = median(step)
print(json.dumps(res))
"""

# gluonjax only: the same model's XLA program called by plain jax (its jax.export artifact
# through gluonjax.deploy), to tell gluonjax's per-call overhead from XLA:CPU's kernels
XLA_ROWS = """
if not FIRST_ONLY:
    import tempfile, jax
    from gluonjax import deploy
    with tempfile.TemporaryDirectory() as d:
        net.export(d + "/r50")
        served = deploy.load(d + "/r50")
        xd = jax.device_put(x1.asnumpy())
        np.asarray(served(xd))
        res["infer1_xla"] = median(lambda: np.asarray(served(xd)))
"""

GLUONJAX_SETUP = """
sys.modules.setdefault("torch", None)  # gluoncv 0.10.5 refuses torch>=2 beside it
import gluonjax.mxnet_alias
gluonjax.mxnet_alias.install()
"""

TORCH_CHILD = """
import json, statistics, time
import numpy as np
import torch
from torch import nn

REPEATS, BATCH = {repeats}, {batch}


class Bottleneck(nn.Module):
    def __init__(self, cin, mid, stride, expansion):
        super().__init__()
        cout = mid * expansion
        if expansion == 4:
            self.body = nn.Sequential(
                nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(inplace=True),
                nn.Conv2d(mid, mid, 3, stride, 1, bias=False), nn.BatchNorm2d(mid),
                nn.ReLU(inplace=True), nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        else:
            self.body = nn.Sequential(
                nn.Conv2d(cin, mid, 3, stride, 1, bias=False), nn.BatchNorm2d(mid),
                nn.ReLU(inplace=True), nn.Conv2d(mid, mid, 3, 1, 1, bias=False),
                nn.BatchNorm2d(mid))
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        skip = x if self.down is None else self.down(x)
        return torch.relu(self.body(x) + skip)


def resnet(layers, expansion):
    mods = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for i, n in enumerate(layers):
        mid = 64 * 2 ** i
        for j in range(n):
            mods.append(Bottleneck(cin, mid, 2 if (j == 0 and i > 0) else 1, expansion))
            cin = mid * expansion
    mods += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000)]
    return nn.Sequential(*mods)


def median(fn):
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


torch.manual_seed(0)
# untrained weights and predict-mode BatchNorm shrink activations into denormals, which
# are very slow on x86; XLA flushes them to zero, and so does MXNet's MKLDNN path
torch.set_flush_denormal(True)
rng = np.random.RandomState(0)
x1 = torch.as_tensor(rng.uniform(size=(1, 3, 224, 224)).astype(np.float32))
xb = torch.as_tensor(rng.uniform(size=(BATCH, 3, 224, 224)).astype(np.float32))
yb = torch.as_tensor(rng.randint(0, 1000, size=BATCH))
res = {{}}
t0 = time.perf_counter()
net = resnet([3, 4, 6, 3], 4).eval()
with torch.no_grad():
    net(x1)
    res["infer_first"] = time.perf_counter() - t0
    net(x1)
    res["infer1"] = median(lambda: net(x1))
    net(xb)
    res["infer32"] = median(lambda: net(xb))
t0 = time.perf_counter()
net = resnet([2, 2, 2, 2], 1).train()
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)


def step():
    loss = nn.functional.cross_entropy(net(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()


step()
res["train_first"] = time.perf_counter() - t0
step()
res["train32"] = median(step)
print(json.dumps(res))
"""


def _child(python, script, env_extra=None):
    """Run ``script`` in ``python``; (its JSON dict, "") or (None, why not)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if env_extra:
        env.update(env_extra)
    proc = subprocess.run(
        [str(python), "-c", script], capture_output=True, text=True, env=env, timeout=900
    )
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"failed: {tail[:80]}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), ""


def _gluonjax(repeats, cache):
    """Cold (an empty compilation cache at ``cache``, which this run fills), then a second
    process that only times the first outputs with that cache (re-running a script)."""
    if importlib.util.find_spec("gluoncv") is None:
        return None, None, "gluoncv not installed (pip install -e '.[gluoncv]')"
    extra = {"PYTHONPATH": str(ROOT), "GLUONJAX_CACHE_DIR": cache}
    script = CHILD.format(
        setup=GLUONJAX_SETUP, repeats=repeats, batch=BATCH, first_only=False, xla_rows=XLA_ROWS
    )
    cold, why = _child(sys.executable, script, extra)
    if cold is None:
        return None, None, why
    script = CHILD.format(
        setup=GLUONJAX_SETUP, repeats=repeats, batch=BATCH, first_only=True, xla_rows=""
    )
    warm, _ = _child(sys.executable, script, extra)
    return cold, warm, ""


def _mxnet(repeats):
    if not MXNET_PY.exists():
        return None, ".venv-mxnet missing"
    script = CHILD.format(setup="", repeats=repeats, batch=BATCH, first_only=False, xla_rows="")
    return _child(MXNET_PY, script, {"MXNET_STORAGE_FALLBACK_LOG_VERBOSE": "0"})


def _torch(repeats):
    if importlib.util.find_spec("torch") is None:
        return None, "torch not installed"
    return _child(sys.executable, TORCH_CHILD.format(repeats=repeats, batch=BATCH))


ROWS = (
    ("infer1", "resnet50_v1b inference, batch 1", 1.0),
    ("infer32", f"resnet50_v1b inference, batch {BATCH}", 1.0),
    ("train32", f"resnet18_v1b SGD step, batch {BATCH}", 1.0),
    ("infer_first", "resnet50_v1b: get_model to first output", 1.5),
    ("train_first", "resnet18_v1b: get_model to first step", 1.5),
)


def run(n=1000):
    repeats = 3 if n < 1000 else 5
    with tempfile.TemporaryDirectory() as cache:
        ours, warm, why = _gluonjax(repeats, cache)
    ref, mx_why = _mxnet(repeats)
    torch_res, torch_why = _torch(repeats)
    table = Table(
        "gluoncv ResNets, 224x224, CPU, hybridized (MXNet: static_alloc, MKLDNN); ratio = "
        "time / baseline; targets <= 1.00 vs MXNet per call, <= 1.50 to the first output"
    )
    for key, title, target in ROWS:
        if ref is not None:
            table.add(f"{title}: MXNet 1.9.1", ref[key])
        else:
            table.add(f"{title}: MXNet 1.9.1", float("nan"), note=f"(skipped: {mx_why})")
        if torch_res is not None:
            table.add(f"{title}: PyTorch eager", torch_res[key])
        else:
            table.add(f"{title}: PyTorch eager", float("nan"), note=f"(skipped: {torch_why})")
        if ours is None:
            table.add(f"{title}: gluonjax", float("nan"), note=f"(skipped: {why})")
            continue
        if ref is not None:
            table.add(f"{title}: gluonjax vs MXNet", ours[key], ref[key], target)
        if torch_res is not None:
            table.add(f"{title}: gluonjax vs PyTorch", ours[key], torch_res[key])
        if key == "infer1" and "infer1_xla" in ours:
            # gluonjax's call against the same XLA program called by plain jax: the
            # remaining gap to MXNet is XLA:CPU's (see bench_conv_cpu)
            table.add(f"{title}: same XLA program, plain jax", ours["infer1_xla"])
            table.add(f"{title}: gluonjax vs that program", ours[key], ours["infer1_xla"])
        if key.endswith("_first") and warm is not None and ref is not None:
            table.add(f"{title}: gluonjax, second run", warm[key], ref[key], target)
    table.show()


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
