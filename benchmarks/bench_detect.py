"""Issue 16: contrib/detection ops (eager ``nd.contrib`` calls) vs real MXNet 1.9.1.

Each row times one call of the op at a detection-sized input (SSD300, Faster R-CNN,
FCN) in gluonjax and, when the reference interpreter ``.venv-mxnet`` exists (or
``GLUONJAX_MXNET_PY`` names one), the same call in MXNet 1.9.1 in a subprocess.
Ratio = gluonjax / MXNet; target <= 1 (faster than MXNet).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import gluonjax as mx

from .common import Table, per_call

ROOT = Path(__file__).resolve().parents[1]


def _boxes(rng, shape):
    lo_hi = np.sort(rng.rand(*shape, 2, 2), axis=-1)  # (..., x/y, min/max)
    return np.swapaxes(lo_hi, -1, -2).reshape(*shape, 4).astype(np.float32)


def _softmax(rng, shape, axis=1):
    e = np.exp(rng.randn(*shape))
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)


def cases():
    """(row name, contrib op or nd op, inputs, attrs); inputs are numpy arrays."""
    rng = np.random.RandomState(0)
    a = 8732  # SSD300 anchors
    nms = np.concatenate(
        [rng.randint(0, 20, (1, 6000, 1)), rng.rand(1, 6000, 1), _boxes(rng, (1, 6000))], -1
    ).astype(np.float32)
    anchors = _boxes(rng, (1, a))
    labels = -np.ones((8, 50, 5), np.float32)
    for b in range(8):
        n = rng.randint(1, 20)
        labels[b, :n, 0] = rng.randint(0, 20, n)
        labels[b, :n, 1:] = _boxes(rng, (n,))
    rois = np.concatenate([np.zeros((128, 1)), _boxes(rng, (128,)) * 760], 1).astype(np.float32)
    return [
        ("box_nms (1x6000x6, topk 400)", "box_nms", [nms],
         dict(overlap_thresh=0.45, topk=400, id_index=0, valid_thresh=0.01)),
        ("MultiBoxDetection (SSD300, 21 classes)", "MultiBoxDetection",
         [_softmax(rng, (1, 21, a)), 0.2 * rng.randn(1, 4 * a).astype(np.float32), anchors],
         dict(nms_topk=400)),
        ("MultiBoxTarget (8 images, SSD300)", "MultiBoxTarget",
         [anchors, labels, rng.randn(8, 21, a).astype(np.float32)],
         dict(negative_mining_ratio=3.0)),
        ("bipartite_matching (8x8732x50)", "bipartite_matching",
         [rng.rand(8, a, 50).astype(np.float32)], dict(threshold=1e-12)),
        ("Proposal (38x50 map, 15 anchors, 6000->300)", "Proposal",
         [_softmax(rng, (1, 30, 38, 50)), 0.2 * rng.randn(1, 60, 38, 50).astype(np.float32),
          np.array([[600, 800, 1.0]], np.float32)],
         dict(rpn_pre_nms_top_n=6000, rpn_post_nms_top_n=300, scales=(2, 4, 8, 16, 32))),
        ("ROIAlign (256x50x50, 128 rois, 7x7, sr 2)", "ROIAlign",
         [rng.randn(1, 256, 50, 50).astype(np.float32), rois],
         dict(pooled_size=(7, 7), spatial_scale=1 / 16, sample_ratio=2)),
        ("ROIPooling (512x38x50, 128 rois, 7x7)", "ROIPooling",
         [rng.randn(1, 512, 38, 50).astype(np.float32), rois],
         dict(pooled_size=(7, 7), spatial_scale=1 / 16)),
        ("BilinearResize2D (21x60x60 -> 480x480)", "BilinearResize2D",
         [rng.randn(1, 21, 60, 60).astype(np.float32)], dict(height=480, width=480)),
        ("AdaptiveAvgPooling2D (4x512x60x60 -> 6)", "AdaptiveAvgPooling2D",
         [rng.randn(4, 512, 60, 60).astype(np.float32)], dict(output_size=6)),
        ("DeformableConvolution (64x64x64, 3x3x64)", "DeformableConvolution",
         [rng.randn(1, 64, 64, 64).astype(np.float32), rng.randn(1, 18, 64, 64).astype(np.float32),
          0.1 * rng.randn(64, 64, 3, 3).astype(np.float32), np.zeros(64, np.float32)],
         dict(kernel=(3, 3), num_filter=64, pad=(1, 1))),
    ]  # fmt: skip


def _fn(module, name):
    return getattr(module.contrib, name, None) or getattr(module, name)


_MXNET_SCRIPT = """
import json, sys, time, numpy as np, mxnet as mx
spec = json.loads(sys.stdin.read())
data = np.load(spec["npz"])
out = {}
for i, (name, op, n_in, attrs, n) in enumerate(spec["cases"]):
    fn = getattr(mx.nd.contrib, op, None) or getattr(mx.nd, op)
    xs = [mx.nd.array(data[f"{i}.{j}"]) for j in range(n_in)]
    for _ in range(3):
        fn(*xs, **attrs)
    mx.nd.waitall()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            r = fn(*xs, **attrs)
        mx.nd.waitall()
        best = min(best, (time.perf_counter() - t0) / n)
    out[name] = best
print(json.dumps(out))
"""


def _mxnet_python():
    py = os.environ.get("GLUONJAX_MXNET_PY") or str(ROOT / ".venv-mxnet" / "bin" / "python")
    return py if Path(py).exists() else None


def _mxnet_times(rows, n, tmp):
    py = _mxnet_python()
    if py is None:
        return {}
    arrays = {f"{i}.{j}": x for i, (_, _, xs, _) in enumerate(rows) for j, x in enumerate(xs)}
    np.savez(tmp, **arrays)
    spec = {"npz": str(tmp), "cases": [(nm, op, len(xs), at, n) for nm, op, xs, at in rows]}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(MXNET_ENGINE_TYPE="ThreadedEnginePerDevice")
    proc = subprocess.run(
        [py, "-c", textwrap.dedent(_MXNET_SCRIPT)],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    if proc.returncode != 0:
        print(f"(MXNet rows skipped: {proc.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
        return {}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(n=1000):
    import tempfile

    rows = cases()
    reps = max(n // 200, 3)
    with tempfile.TemporaryDirectory() as tmp:
        ref = _mxnet_times(rows, reps, Path(tmp) / "inputs.npz")
    t = Table("detection ops, one eager call (gluonjax vs MXNet 1.9.1 CPU)")
    for name, op, xs, attrs in rows:
        args = [mx.nd.array(x) for x in xs]
        fn = _fn(mx.nd, op)
        sec = per_call(lambda fn=fn, args=args, attrs=attrs: fn(*args, **attrs), reps, 3, 3)
        base = ref.get(name)
        t.add(name, sec, base, 1.0 if base else None)
        if base:
            t.add("  MXNet 1.9.1", base)
    t.show()


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
