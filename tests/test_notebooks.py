"""notebooks/*.ipynb run top to bottom without an error, with the project's interpreter.

Each notebook executes in a temporary folder through nbclient, in a kernel
started from ``sys.executable`` (a kernelspec written to a temporary
JUPYTER_PATH, so no user-level or system kernel is picked up by mistake).
The committed notebooks carry no outputs and match their sources in
tools/notebooks/ (``tools/make_notebooks.py``).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTED = [
    "01_imperative_symbolic_hybrid.ipynb",
    "02_symbol_api.ipynb",
    "03_train_and_deploy.ipynb",
    "04_numpy_interface.ipynb",
]
TIMEOUT = 280  # seconds per cell; each notebook takes 5-30 s on 2 cores (not marked slow)

nbformat = pytest.importorskip("nbformat", reason="pip install -e '.[test]' (nbformat)")
nbclient = pytest.importorskip("nbclient", reason="pip install -e '.[test]' (nbclient)")
if importlib.util.find_spec("ipykernel") is None:
    pytest.skip("pip install -e '.[test]' (ipykernel)", allow_module_level=True)

sys.path.insert(0, str(ROOT / "tools"))
import make_notebooks  # noqa: E402


@pytest.fixture
def kernel_name(tmp_path, monkeypatch):
    """A kernelspec for this very interpreter, found first through JUPYTER_PATH."""
    spec = tmp_path / "jupyter" / "kernels" / "gluonjax-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "gluonjax test",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))  # connection files
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))  # no user startup scripts
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    return "gluonjax-test"


def test_the_notebooks_exist():
    assert [p.name for p in NOTEBOOKS] == EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_without_outputs_and_up_to_date(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, "commit without outputs"
    source = ROOT / "tools" / "notebooks" / (path.stem + ".py")
    assert path.read_text(encoding="utf-8") == make_notebooks.render(source), (
        "notebook differs from its source: run tools/make_notebooks.py"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, kernel_name):
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=TIMEOUT,
        kernel_name=kernel_name,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    t0 = time.perf_counter()
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as err:
        pytest.fail(f"{path.name}: a cell failed\n{str(err)[-4000:]}")
    took = time.perf_counter() - t0
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors
    texts = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "Traceback" not in texts
    if path.name == "03_train_and_deploy.ipynb":
        plot_cells = [c for c in nb.cells if c.cell_type == "code" and "ax1.plot(" in c.source]
        assert len(plot_cells) == 1
        assert any("image/png" in o.get("data", {}) for o in plot_cells[0].outputs), (
            "the loss/accuracy plot cell produced no image/png output"
        )
    print(f"{path.name}: {took:.1f}s")
