"""Write notebooks/*.ipynb from their sources in tools/notebooks/*.py.

Each source is a Python file in the "percent" format: ``# %%`` starts a code cell,
``# %% [markdown]`` a markdown cell whose lines are comments (``# `` is removed).
A first line ``# ruff: ...`` is left out. The notebooks are written without
outputs, so that they review as plain text diffs; ``tests/test_notebooks.py``
executes them and checks that they match their sources::

    .venv/bin/python tools/make_notebooks.py          # rewrite all notebooks
    .venv/bin/python tools/make_notebooks.py --check  # exit 1 if one is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "tools" / "notebooks"
OUT = ROOT / "notebooks"
KERNEL = {"display_name": "Python 3", "language": "python", "name": "python3"}


def parse_cells(text):
    """``[(kind, source)]`` with kind ``'code'`` or ``'markdown'``."""
    lines = text.splitlines()
    if lines and lines[0].startswith("# ruff:"):
        lines = lines[1:]
    cells, kind, body = [], None, []

    def flush():
        if kind is not None:
            while body and not body[-1].strip():
                body.pop()
            while body and not body[0].strip():
                body.pop(0)
            cells.append((kind, "\n".join(body)))

    for line in lines:
        if line.startswith("# %%"):
            flush()
            kind, body = ("markdown" if "[markdown]" in line else "code"), []
        elif kind == "markdown":
            body.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
        elif kind == "code":
            body.append(line)
    flush()
    return cells


def build(source):
    """The notebook (a ``nbformat.NotebookNode``) for one source file, without outputs."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": dict(KERNEL), "language_info": {"name": "python"}}
    for i, (kind, text) in enumerate(parse_cells(Path(source).read_text(encoding="utf-8"))):
        make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        cell = make(text)
        cell["id"] = f"{Path(source).stem[:2]}-{i:03d}"  # stable ids: clean diffs
        nb.cells.append(cell)
    nbformat.validate(nb)
    return nb


def render(source):
    return nbformat.writes(build(source)) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    check = "--check" in argv
    stale = []
    for source in sorted(SOURCES.glob("[0-9][0-9]_*.py")):
        target = OUT / (source.stem + ".ipynb")
        text = render(source)
        if check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                stale.append(target.name)
        else:
            OUT.mkdir(exist_ok=True)
            target.write_text(text, encoding="utf-8")
            print("wrote", target.relative_to(ROOT))
    if stale:
        print("out of date (run tools/make_notebooks.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
