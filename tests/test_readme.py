"""README's quick start runs as written, in a fresh interpreter."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_starts_with_the_two_commands():
    text = (ROOT / "README.md").read_text()
    first_block = re.search(r"```\n(.*?)```", text, re.S).group(1).split()
    assert first_block == ["make", "demo", "make", "test"]


def test_quick_start_runs(tmp_path):
    text = (ROOT / "README.md").read_text()
    code = re.search(r"## Quick start\s+```python\n(.*?)```", text, re.S).group(1)
    assert len(code.strip().splitlines()) <= 20
    res = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr
    assert "HybridSequential" in res.stdout
    assert (tmp_path / "net.params").exists()
