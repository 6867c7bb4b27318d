"""Access to the reference MXNet 1.9.1 interpreter (``.venv-mxnet``) for cross-checks.

MXNet is never imported into the test process: snippets run in a subprocess of
the separate interpreter that ``make mxnet-ref`` installs.

* ``MXNET_PY``: path of that interpreter (inside the repository).
* ``have_mxnet()``: whether it exists and can import mxnet.
* ``needs_mxnet``: pytest marker that skips a test when it is missing.
* ``run_mxnet(script, cwd)``: run a Python snippet there and return its stdout.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
MXNET_VENV = REPO_ROOT / ".venv-mxnet"
MXNET_PY = MXNET_VENV / "bin" / "python"

__all__ = ["REPO_ROOT", "MXNET_VENV", "MXNET_PY", "have_mxnet", "needs_mxnet", "run_mxnet"]


@functools.cache
def have_mxnet() -> bool:
    """True when ``.venv-mxnet`` has an interpreter and an installed mxnet package.

    Checked on disk (no subprocess), so importing this module stays cheap.
    """
    if not MXNET_PY.exists():
        return False
    return any(MXNET_VENV.glob("lib/python*/site-packages/mxnet/__init__.py"))


needs_mxnet = pytest.mark.skipif(
    not have_mxnet(), reason=".venv-mxnet is not installed; run `make mxnet-ref`"
)


def _env():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # keep gluonjax's environment out of the MXNet interpreter
    env.setdefault("MXNET_ENGINE_TYPE", "NaiveEngine")
    return env


def run_mxnet(script: str, cwd=None, timeout: float = 300) -> str:
    """Run ``script`` (Python source) with the MXNet interpreter and return its stdout.

    Raises ``RuntimeError`` with the interpreter's stderr when the script fails.
    """
    proc = subprocess.run(
        [str(MXNET_PY), "-c", script],
        cwd=str(cwd) if cwd is not None else str(REPO_ROOT),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(),
    )
    if proc.returncode != 0:
        raise RuntimeError(f"MXNet script failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc.stdout
