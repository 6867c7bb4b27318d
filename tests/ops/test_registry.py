"""The op registry: one definition per op feeds nd and sym; every op is tested."""

import re
from pathlib import Path

import pytest

import gluonjax as mx
from gluonjax._ops import registry

TESTS = Path(__file__).resolve().parents[1]


def _canonical_ops():
    return sorted({op.name for _, op in registry.items()})


def test_nd_and_sym_expose_the_same_registry():
    for name in registry.list_ops():
        assert callable(getattr(mx.nd, name)), name
        assert callable(getattr(mx.sym, name)), name


def test_every_op_is_exercised_by_a_test():
    text = "\n".join(p.read_text() for p in TESTS.rglob("*.py"))
    text += "".join(p.read_text() for p in sorted((TESTS / "fixtures").glob("ops*/cases.json")))
    missing = []
    for op in _canonical_ops():
        names = [op] + [a for a, o in registry.items() if o.name == op]
        # table-driven tests name an op by its stem: "equal" for broadcast_equal,
        # "exponential" for _random_exponential / _sample_exponential / ..._like
        stems = {re.sub(r"^(broadcast_|_random_|_sample_|random_|sample_|_)", "", n) for n in names}
        stems = {re.sub(r"_like$", "", st) for st in stems}
        # namespaced ops are called through their namespace: nd.image.crop, nd.contrib.X
        stems |= {re.sub(r"^_(contrib|image|linalg|np|npi)_", "", n) for n in names}
        # mx.np's binary ufuncs take a Python scalar through _npi_<f>_scalar / _npi_r<f>_scalar
        stems |= {
            re.sub(r"_scalar$", "", re.sub(r"^_npi_r?", "", n))
            for n in names
            if n.startswith("_npi_") and n.endswith("_scalar")
        }
        found = any(re.search(rf"\b{re.escape(n)}\b", text) for n in names) or any(
            f'"{st}"' in text or f".{st}(" in text for st in stems
        )
        if not found:
            missing.append(op)
    assert not missing, f"ops without any test: {missing}"


def test_every_op_has_a_docstring():
    undocumented = [n for n in _canonical_ops() if not registry.get(n).doc.strip()]
    assert not undocumented, undocumented


def test_unknown_op_suggests_names():
    with pytest.raises(mx.base.OpError, match="Did you mean"):
        registry.get("FullyConected")


def test_registering_twice_is_an_error():
    with pytest.raises(mx.base.OpError, match="registered twice"):
        registry.register("relu")(lambda x: x)


def test_attribute_string_forms():
    op = registry.get("Convolution")
    a, _ = op.parse_attrs(
        {"kernel": "(3, 3)", "num_filter": "8", "no_bias": "True", "stride": "[2, 2]"}
    )
    b, _ = op.parse_attrs({"kernel": (3, 3), "num_filter": 8, "no_bias": True, "stride": (2, 2)})
    assert a == b
    with pytest.raises(mx.base.AttrError, match="kernel"):
        op.parse_attrs({"kernel": "(3, x)", "num_filter": 8})
    assert registry.attr_to_str((3, 3)) == "(3, 3)"
    assert registry.attr_to_str(True) == "True"
