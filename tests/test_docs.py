"""Every ```python block of every docs/*.md page runs, page by page, in a fresh interpreter.

The blocks of one page run in order in one namespace (later blocks use earlier
names), in a temporary folder, so files the examples write go nowhere else.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
EXPECTED = {
    "ndarray.md",
    "blocks.md",
    "training.md",
    "symbol.md",
    "export.md",
    "numpy.md",
    "estimator.md",
}

_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)

RUNNER = r"""
import json, sys, traceback
blocks = json.load(open(sys.argv[1]))
ns = {"__name__": "__main__"}
for i, (line, code) in enumerate(blocks):
    try:
        exec(compile(code, f"{sys.argv[2]}:{line}", "exec"), ns)
    except BaseException:
        traceback.print_exc()
        print(f"FAILED: python block {i + 1} at {sys.argv[2]} line {line}", file=sys.stderr)
        sys.exit(1)
"""


def python_blocks(path):
    """``[(line number, code)]`` of the page's python blocks."""
    text = path.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in _BLOCK.finditer(text)]


def test_every_area_has_a_page():
    assert EXPECTED <= {p.name for p in PAGES}


# pages whose examples need an optional extra: page -> the modules it imports
NEEDS = {"onnx.md": ("onnx", "onnxruntime")}  # pip install 'gluonjax[onnx]' (make test does)


def _missing(page):
    import importlib.util

    def absent(name):  # tests/onnx on sys.path is a namespace package without code
        spec = importlib.util.find_spec(name)
        return spec is None or spec.origin in (None, "namespace")

    return [m for m in NEEDS.get(page.name, ()) if absent(m)]


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_page_runs(page, tmp_path):
    missing = _missing(page)
    if missing:
        pytest.skip(f"{page.name} needs {missing} (pip install 'gluonjax[onnx]')")
    blocks = python_blocks(page)
    assert len(blocks) >= 3, f"{page.name} should show runnable examples"
    (tmp_path / "blocks.json").write_text(json.dumps(blocks))
    (tmp_path / "runner.py").write_text(RUNNER)
    env = dict(os.environ, MPLBACKEND="Agg")
    res = subprocess.run(
        [sys.executable, "runner.py", "blocks.json", f"docs/{page.name}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=280,
        env=env,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-6000:]


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_relative_links_exist(page):
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
        assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def test_readme_links_every_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in PAGES:
        assert f"(docs/{page.name})" in readme, f"README does not link docs/{page.name}"
