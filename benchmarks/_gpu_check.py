"""The correctness pass of ``python -m benchmarks --gpu`` (driver: :mod:`benchmarks.gpu`).

pytest on the training-loop and hybridize tests, before any timing, in a child process:
``-m "not mxnet"`` (no MXNet on a GPU machine), gluonjax's default context set to the run's
(``gpu(0)``) by the plugin :mod:`benchmarks._gpu_ctx`, and float32 matmuls at full precision
(``JAX_DEFAULT_MATMUL_PRECISION=highest``: jax's default on an Ampere-or-newer GPU is TF32,
too coarse for the tests' float32 tolerances).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = [
    "tests/test_autograd_loop.py",
    "tests/gluon/test_hybridize.py",
    "tests/gluon/test_trainer.py",
    "tests/test_update.py",
]
DRY_TESTS = ["tests/gluon/test_trainer.py"]


def correctness_cmd(files):
    """The pytest command line of the correctness pass (``-vv``: pyproject's ``-q`` plus
    this gives one PASSED/FAILED line per test)."""
    head = [sys.executable, "-m", "pytest", "-x", "-p", "no:cacheprovider", "-p", "no:xdist"]
    return head + ["-vv", "-p", "benchmarks._gpu_ctx", *files, "-m", "not mxnet"]


def correctness(cfg, files, timeout):
    """Run the pass (a child process): counts, timing, the first failure, ``ok``."""
    env = dict(os.environ, GLUONJAX_BENCH_CTX=cfg["ctx"], JAX_DEFAULT_MATMUL_PRECISION="highest")
    t0, timed_out = time.perf_counter(), False
    try:
        p = subprocess.run(
            correctness_cmd(files), cwd=ROOT, env=env, capture_output=True, text=True,
            timeout=timeout,
        )  # fmt: skip
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc, timed_out = text(e.stdout), None, True
    counts = {k: 0 for k in ("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS")}
    for word in re.findall(r"::\S+ (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b", out):
        counts[word] += 1
    ctx = re.search(r"gluonjax default context: (\S+)", out)
    first_bad = re.search(r"^(\S+::\S+) (?:FAILED|ERROR)", out, re.M)
    res = {
        "files": files,
        "passed": counts["PASSED"] + counts["XFAIL"],
        "failed": counts["FAILED"] + counts["ERROR"] + counts["XPASS"],
        "skipped": counts["SKIPPED"],
        "context": ctx.group(1) if ctx else "?",
        "seconds": time.perf_counter() - t0,
        "returncode": rc,
        "timed_out": timed_out,
        "first_failure": first_bad.group(1) if first_bad else None,
    }
    res["ok"] = rc == 0 and res["failed"] == 0 and res["passed"] > 0
    if not res["ok"]:
        sys.stderr.write(out[-6000:] + "\n")
    return res


def text(b):
    return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
