"""Rewrite the supported-op table of docs/onnx.md from mx.onnx's converter table.

Run ``python tools/make_onnx_doc_table.py`` after adding a converter;
tests/onnx/test_doc_table.py fails while the page and the table differ.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BEGIN, END = "<!-- onnx-ops:begin -->", "<!-- onnx-ops:end -->"


def main():
    from gluonjax.onnx._table import support_table

    page = ROOT / "docs" / "onnx.md"
    text = page.read_text(encoding="utf-8")
    new = re.sub(
        re.escape(BEGIN) + r".*?" + re.escape(END),
        lambda _: f"{BEGIN}\n{support_table()}\n{END}",
        text,
        flags=re.S,
    )
    page.write_text(new, encoding="utf-8")
    print("docs/onnx.md: table", "updated" if new != text else "unchanged")


if __name__ == "__main__":
    main()
