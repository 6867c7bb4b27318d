"""The tree stays ruff-clean (lint and format), as configured in pyproject.toml."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["gluonjax", "tests", "benchmarks", "tools"]


def _ruff():
    exe = Path(sys.executable).with_name("ruff")
    return str(exe) if exe.exists() else shutil.which("ruff")


@pytest.mark.parametrize("args", [["check"], ["format", "--check"]])
def test_ruff(args):
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff is not installed (it is in the test extra: pip install -e '.[test]')")
    res = subprocess.run([ruff, *args, *PATHS], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
