"""docs/onnx.md's supported-op table is the converter table (it cannot drift)."""

from __future__ import annotations

import re
from pathlib import Path

import gluonjax as mx
from gluonjax.onnx._table import support_table

PAGE = Path(__file__).resolve().parents[2] / "docs" / "onnx.md"


def _section():
    text = PAGE.read_text(encoding="utf-8")
    m = re.search(r"<!-- onnx-ops:begin -->\n(.*?)\n<!-- onnx-ops:end -->", text, re.S)
    assert m, "docs/onnx.md lost its onnx-ops markers"
    return m.group(1)


def test_doc_table_is_generated_from_the_converters():
    assert _section() == support_table(), "run: python tools/make_onnx_doc_table.py"


def test_doc_table_lists_exactly_the_supported_ops():
    names = set(re.findall(r"`([^`]+)`", _section()))
    assert names == set(mx.onnx.get_operator_support())


def test_converters_are_keyed_by_registry_names():
    from gluonjax._ops import registry
    from gluonjax.onnx._table import CONVERTERS

    for name in CONVERTERS:
        assert registry.get(name).name == name
    # an alias resolves through the registry to its op's converter
    assert {"_plus", "_add", "elemwise_add"} <= set(mx.onnx.get_operator_support())
