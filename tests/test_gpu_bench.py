"""``python -m benchmarks --gpu``: its dry run on the CPU gives every row and a passing
correctness pass; without a GPU the command refuses and says how to dry-run. No timing is
asserted (timings live in benchmarks/), only that each cell was measured."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ is a directory of the checkout, not installed
    sys.path.insert(0, str(ROOT))

from benchmarks import _gpu_check, _gpu_gluoncv, _gpu_jobs, _gpu_table, gpu  # noqa: E402

HAVE_TORCH = subprocess.run([sys.executable, "-c", "import torch"]).returncode == 0


def _env(**extra):
    return dict(os.environ, JAX_PLATFORMS="cpu", **extra)


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_bench") / "table.json"
    cmd = [sys.executable, "-m", "benchmarks", "--gpu", "--dry-run", "--out", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return proc.stdout, json.loads(out.read_text())


@pytest.mark.slow
@pytest.mark.timeout(700)
def test_dry_run_table_has_every_row_measured(dry_run):
    stdout, table = dry_run
    expected = _gpu_jobs.rows()
    assert len(expected) == len({name for name, _, _ in expected}) >= 45
    assert [r["row"] for r in table["rows"]] == [name for name, _, _ in expected]
    assert table["problems"] == [] and table["dry_run"] is True
    printed = {line.split("  ")[0].strip(): line for line in stdout.splitlines()}
    for (name, has_jax, has_torch), rec in zip(expected, table["rows"]):
        assert name in printed, f"{name!r} not in the printed table"
        cols = [("gluonjax_ms", True), ("jax_ms", has_jax), ("torch_ms", has_torch and HAVE_TORCH)]
        for col, want in cols:
            value = rec[col]
            if want:
                assert value is not None and math.isfinite(value) and value > 0, (name, col)
            elif col == "jax_ms":
                assert value is None, (name, col)
        if has_jax:
            assert rec["vs_jax"] == pytest.approx(rec["gluonjax_ms"] / rec["jax_ms"])
            assert f"{rec['vs_jax']:.2f}x" in printed[name]
        assert "not measured" not in rec["note"]


@pytest.mark.slow
@pytest.mark.timeout(700)
def test_dry_run_correctness_pass_ran_and_passed(dry_run):
    stdout, table = dry_run
    check = table["correctness"]
    assert check["ok"] and check["returncode"] == 0 and not check["timed_out"]
    assert check["files"] == _gpu_check.DRY_TESTS
    assert check["passed"] >= 5 and check["failed"] == 0
    assert check["context"] == "cpu(0)"  # the plugin set gluonjax's default context
    head = f"correctness: {check['passed']} passed, 0 failed, ok, on cpu(0)"
    assert head in stdout


def test_without_a_gpu_it_refuses_and_says_how_to_dry_run():
    cmd = [sys.executable, "-m", "benchmarks", "--gpu"]
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "no GPU found" in proc.stderr and "cpu device" in proc.stderr
    assert "JAX_PLATFORMS=cpu python -m benchmarks --gpu --dry-run" in proc.stderr
    assert proc.stdout == ""


def test_correctness_command_line():
    files = _gpu_check.TESTS
    assert set(_gpu_check.DRY_TESTS) <= set(files)
    for f in files:
        assert (ROOT / f).is_file(), f
    cmd = _gpu_check.correctness_cmd(files)
    assert cmd[:3] == [sys.executable, "-m", "pytest"]
    assert cmd[cmd.index("-m", 3) + 1] == "not mxnet"
    assert "-x" in cmd and "no:cacheprovider" in cmd and "benchmarks._gpu_ctx" in cmd
    assert [a for a in cmd if a.startswith("tests/")] == files


def test_gpu_gluoncv_script_is_bench_gluoncvs_on_the_gpu():
    script = _gpu_gluoncv.gluoncv_script(gpu.FULL, first_only=False)
    compile(script, "gluoncv_child", "exec")
    assert "gluonjax.Context('gpu', 0).__enter__()" in script
    assert script.index("__enter__()") < script.index("import mxnet as mx")
    assert 'get_model("resnet50_v1b"' in script and "(BATCH, 3, 224, 224)" in script
    assert "REPEATS, BATCH, FIRST_ONLY = 10, 32, False" in script
    dry = _gpu_gluoncv.gluoncv_script(gpu.DRY, first_only=True)
    assert "get_model" not in dry and "ResNetV1b(" in dry and "(BATCH, 3, 32, 32)" in dry


def test_table_marks_cells_not_measured():
    rows = [("a", True, True), ("b", False, True), ("c", True, False)]
    cells = {"a": {"gluonjax": 0.002, "jax": 0.001, "torch": 0.004, "note": ["x"]}}
    cells["c"] = {"gluonjax": 0.5, "note": []}
    table = {
        "device": "d",
        "torch": "t",
        "torch_ok": True,
        "dry_run": False,
        "correctness": None,
        "rows": rows,
        "cells": cells,
        "problems": ["first mlp eager cold: not run (time budget spent)"],
        "seconds": 1.0,
    }
    recs = _gpu_table.records(table)
    assert recs[0]["vs_jax"] == pytest.approx(2.0) and recs[0]["vs_torch"] == pytest.approx(0.5)
    assert recs[0]["note"] == "x"
    assert recs[1]["note"] == "not measured: gluonjax, PyTorch"
    assert recs[2]["note"] == "not measured: pure JAX" and recs[2]["vs_jax"] is None
    text = _gpu_table.render(table)
    assert "correctness: skipped" in text and "problem: first mlp eager cold" in text
    assert "2.00x" in text and "0.50x" in text
    md = _gpu_table.to_markdown(table)
    assert md.count("\n| ") == 1 + len(rows)
    assert json.loads(_gpu_table.to_json(table))["rows"][2]["gluonjax_ms"] == 500.0
