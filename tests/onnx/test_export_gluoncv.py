"""A gluoncv 0.10.5 detector exported with mx.onnx runs in ONNX Runtime to gluonjax's outputs.

YOLOv3 on MobileNet 0.25 at 64x64 (seeded weights, ``tools/gluoncv_common.py``) takes every
detection op of the path: box decoding, ``box_nms`` with per-class suppression, its top-k
cut and its fixed-shape -1 padding (``--post-nms -1`` keeps all 5040 rows, the padding
included). The check is ``tools/check_onnx_zoo.py --gluoncv`` in a subprocess, so the
``mxnet`` alias stays out of this process (as tests/test_gluoncv_zoo.py). Skipped when
gluoncv is not installed (``make test`` installs it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from onnx_common import onnx  # noqa: F401  (skips this module without onnx/onnxruntime)

REPO = Path(__file__).resolve().parents[2]
NEEDED = ("gluoncv", "tqdm", "portalocker", "PIL", "scipy")
MISSING = [m for m in NEEDED if importlib.util.find_spec(m) is None]
TOL = 1e-4  # max |ORT - gluonjax| / max(1, max |gluonjax|), per output


@pytest.mark.skipif(bool(MISSING), reason=f"gluoncv 0.10.5 needs {MISSING} (make installs them)")
def test_yolo3_detector_matches_onnxruntime():
    name = "yolo3_mobilenet0.25_voc"
    proc = subprocess.run(
        [sys.executable, str(REPO / "tools" / "check_onnx_zoo.py")]
        + ["--gluoncv", name, "--post-nms", "-1", "--json"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        cwd=str(REPO),
        timeout=280,
    )
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert [r["model"] for r in rows] == [name], proc.stderr[-3000:]
    (row,) = rows
    assert row["status"] == "ok" and row["err"] < TOL, row
    assert row["outputs"] == [[1, 5040, 1], [1, 5040, 1], [1, 5040, 4]], row
    # NMS kept some of its 400 candidates and suppressed others; the rest is -1 padding
    assert 0 < row["kept"] < 400 and row["kept"] + row["padding"] == 5040, row
    assert proc.returncode == 0, proc.stderr[-3000:]
