"""gluoncv 0.10.5's model zoo, unmodified, on gluonjax with the ``mxnet`` alias.

The outputs of a small detection model (MobileNet backbone, YOLOv3 head, NMS) match real
MXNet 1.9.1's on the same seeded weights: eager, hybridized, and after ``export`` +
``SymbolBlock.imports``. The reference outputs come from ``tools/make_gluoncv_fixtures.py``
(MXNet's interpreter); the check is ``tools/check_gluoncv.py --fixtures`` in a subprocess, so
the alias stays out of this process. Skipped when gluoncv is not installed
(``pip install -e '.[gluoncv]'``).

Two SGD steps of a small classifier (BatchNorm in training mode, momentum, weight decay) match
MXNet's: in float32 within a small multiple of MXNet's own float32 noise (MXNet float32 against
MXNet float64), and in float64 (jax x64) to 1e-6, which leaves no room for a different gradient
or update rule (``tools/check_gluoncv.py --train``; fixtures by
``tools/make_gluoncv_fixtures.py --train``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NEEDED = ("gluoncv", "tqdm", "portalocker", "PIL", "scipy")
MISSING = [m for m in NEEDED if importlib.util.find_spec(m) is None]
# YOLOv3 on a MobileNet backbone: convolutions, BatchNorm, upsampling, box decoding, NMS;
# the other families run in tools/check_gluoncv.py (too slow to compile for make test)
MODELS = ("yolo3_mobilenet0.25_voc",)
TRAIN_MODELS = ("mobilenet0.25",)
TOL = 1e-4  # max |gluonjax - MXNet| / max(1, max |MXNet|)


@pytest.mark.skipif(bool(MISSING), reason=f"gluoncv 0.10.5 needs {MISSING} (make installs them)")
def test_gluoncv_models_match_mxnet():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, str(REPO / "tools" / "check_gluoncv.py"), "--fixtures", "--json"]
        + ["--models", ",".join(MODELS)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(REPO),
        timeout=280,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert [r["model"] for r in rows] == list(MODELS)
    for r in rows:
        assert r["status"] == "ok", r
        for key in ("eager", "hybrid", "export"):
            assert r[key] < TOL, (r["model"], key, r[key])


def _check(args, env=None):
    proc = subprocess.run(
        [sys.executable, str(REPO / "tools" / "check_gluoncv.py"), *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO), **(env or {})),
        cwd=str(REPO),
        timeout=280,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


@pytest.mark.skipif(bool(MISSING), reason=f"gluoncv 0.10.5 needs {MISSING} (make installs them)")
@pytest.mark.parametrize("x64", [False, True], ids=["float32", "float64"])
def test_gluoncv_two_sgd_steps_match_mxnet(x64):
    args = ["--train", "--fixtures", "--json", "--hybrid-only", "--no-x64"]
    args += ["--models", ",".join(TRAIN_MODELS)] + (["--x64"] if x64 else [])
    rows = _check(args, {"JAX_ENABLE_X64": "1"} if x64 else None)
    assert [r["model"] for r in rows] == list(TRAIN_MODELS)
    for r in rows:
        assert r["status"] == "ok", r
        if x64:
            assert r["gj64_vs_mx64"] < 1e-6, r
        else:
            # MXNet float32 itself is this far from float64; gluonjax within 10x of that
            assert r["train_err_vs_f64"] <= 10 * r["mxnet_f32_vs_f64"], r
