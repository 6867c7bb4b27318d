"""benchmarks/bench_onnx.py (serving runtimes): at a tiny size every cell is measured and
ONNX Runtime's and MXNet's outputs match gluonjax's; ``--budget`` and a missing
onnxruntime say why rows are not run. No timing is asserted (timings live in benchmarks/)."""

import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ is a directory of the checkout, not installed
    sys.path.insert(0, str(ROOT))

from benchmarks import bench_onnx  # noqa: E402
from tests.mxnet_ref import have_mxnet  # noqa: E402

TINY = {"model": "resnet18_v1", "size": 32, "batches": (1, 2), "reps": 2}


def _finite(v):
    return isinstance(v, float) and math.isfinite(v) and v > 0


@pytest.mark.slow
def test_tiny_run_measures_every_cell_and_outputs_agree(capsys):
    pytest.importorskip("onnxruntime")
    out = bench_onnx.run(**TINY)
    printed = capsys.readouterr().out
    for b in TINY["batches"]:
        for rt in ("gluonjax", "ort", "mxnet"):
            r = out[rt, b]
            if rt == "mxnet" and not have_mxnet():
                assert isinstance(r, str) and "MXNet" in r, r
                continue
            assert isinstance(r, dict), (rt, b, r)
            assert _finite(r["first"]) and len(r["times"]) == 2, (rt, b)
            assert all(_finite(t) for t in r["times"]), (rt, b)
            if rt != "gluonjax":
                assert r["err"] <= bench_onnx.TOL, (rt, b, r["err"])
        assert out["ort", b]["threads"] == 0  # ORT's default thread count, as stated
        for name in ("gluonjax hybridized", "ONNX Runtime", "MXNet 1.9.1"):
            assert f"batch {b}: {name}" in printed
    assert printed.count("img/s") == (6 if have_mxnet() else 4)
    assert "intra_op_num_threads=0" in printed and "(ok, <= 1e-04)" in printed
    per, first = bench_onnx.tables(out, TINY["model"], TINY["size"], TINY["batches"])
    for table in (per, first):
        for name, sec, base, _, _ in table.rows:
            if "MXNet" in name and not have_mxnet():
                continue
            assert _finite(sec), name
            assert (base is None) == ("gluonjax" in name), name  # ratios are vs gluonjax


def test_budget_spent_rows_say_so(capsys):
    pytest.importorskip("onnxruntime")
    out = bench_onnx.run(budget=0, **TINY)
    assert set(out.values()) == {bench_onnx.SPENT}
    assert capsys.readouterr().out.count(bench_onnx.SPENT) == 12  # 6 rows, 2 tables


def test_timing_loop_stops_at_the_deadline_after_one_call_each():
    calls = {"a": 0, "b": 0}
    fns = {k: (lambda k=k: calls.__setitem__(k, calls[k] + 1)) for k in calls}
    times = bench_onnx._timed(fns, reps=5, end=0.0)
    assert {k: len(v) for k, v in times.items()} == {"a": 1, "b": 1}
    assert calls == {"a": 2, "b": 2}  # one untimed call first
    times = bench_onnx._timed(fns, reps=5, end=math.inf)
    assert {k: len(v) for k, v in times.items()} == {"a": 5, "b": 5}


def test_without_onnxruntime_it_skips_and_says_why(monkeypatch, capsys):
    find = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else find(name)
    )
    assert bench_onnx.run(**TINY) is None
    printed = capsys.readouterr().out
    assert "skipped, onnxruntime not installed (pip install 'gluonjax[onnx]')" in printed


def test_budget_option_of_python_m_benchmarks():
    cmd = [sys.executable, "-m", "benchmarks", "--only", "bench_onnx", "--budget", "0"]
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "== bench_onnx: not run (time budget spent)" in proc.stdout
