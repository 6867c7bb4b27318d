"""Fuzzing the loaders: mutated MXNet ``.params`` files and symbol JSON.

Inputs are real MXNet 1.9.1 exports (``tests/fixtures/zoo/squeezenet11-*``). Bit
flips, truncations, inserted / deleted bytes, oversized count and length fields,
and structure / value mutations of the JSON go to ``nd.load``,
``SymbolBlock.imports``, ``Block.load_parameters`` and ``sym.load_json``: the only
exceptions allowed are ``gluonjax.base.MXNetError`` subclasses, and a failed
``load_parameters`` leaves the block's parameters as they were.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gluonjax as mx
from gluonjax.base import MXNetError

ZOO = Path(__file__).resolve().parents[1] / "fixtures" / "zoo"
PARAMS = (ZOO / "squeezenet11-0000.params").read_bytes()
GRAPH_TEXT = (ZOO / "squeezenet11-symbol.json").read_text()
GRAPH = json.loads(GRAPH_TEXT)
FUZZ = dict(
    derandomize=True,
    database=None,
    deadline=5000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _field_offsets(raw):
    """Offsets and widths of the count / length / ndim / dim fields, walking the format here."""
    out, pos = [(16, 8)], 24  # list magic, reserved, then the array count
    (count,) = struct.unpack_from("<Q", raw, 16)
    for _ in range(count):
        pos += 8  # array magic, storage type
        out.append((pos, 4))
        (ndim,) = struct.unpack_from("<I", raw, pos)
        pos += 4
        size = 1
        for _ in range(ndim):
            out.append((pos, 8))
            size *= struct.unpack_from("<q", raw, pos)[0]
            pos += 8
        pos += 8  # context
        out.append((pos, 4))  # dtype flag
        pos += 4 + 4 * size  # float32 data
    out.append((pos, 8))  # name count
    pos += 8
    for _ in range(count):
        out.append((pos, 8))
        (length,) = struct.unpack_from("<Q", raw, pos)
        pos += 8 + length
    assert pos == len(raw)
    return out


FIELDS = _field_offsets(PARAMS)
HUGE = [2**64 - 1, 2**63 - 1, 2**63, 2**32 - 1, 2**31, 2**31 - 1, 1 << 40, 1 << 20, 65, 0]


def _mutation(n):
    return st.one_of(
        st.tuples(st.just("flip"), st.integers(0, 8 * n - 1)),
        st.tuples(st.just("truncate"), st.integers(0, n - 1)),
        st.tuples(st.just("insert"), st.integers(0, n), st.binary(min_size=1, max_size=24)),
        st.tuples(st.just("delete"), st.integers(0, n - 1), st.integers(1, 24)),
        st.tuples(st.just("field"), st.sampled_from(FIELDS), st.sampled_from(HUGE)),
    )


def _apply(raw, muts):
    buf = bytearray(raw)
    for m in muts:
        kind = m[0]
        if kind == "flip" and m[1] < 8 * len(buf):
            buf[m[1] // 8] ^= 1 << (m[1] % 8)
        elif kind == "truncate":
            del buf[m[1] :]
        elif kind == "insert":
            buf[m[1] : m[1]] = m[2]
        elif kind == "delete":
            del buf[m[1] : m[1] + m[2]]
        elif kind == "field":
            (pos, width), value = m[1], m[2]
            if pos + width <= len(buf):
                buf[pos : pos + width] = (value % (1 << (8 * width))).to_bytes(width, "little")
    return bytes(buf)


MUTATED_PARAMS = st.lists(_mutation(len(PARAMS)), min_size=1, max_size=4).map(
    lambda muts: _apply(PARAMS, muts)
)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def test_mutations_hit_the_fields():
    # sanity of the walker: the first array is conv0's weight (8, 3, 3, 3)
    assert FIELDS[1:7] == [(32, 4), (36, 8), (44, 8), (52, 8), (60, 8), (76, 4)]
    assert struct.unpack_from("<4q", PARAMS, 36) == (8, 3, 3, 3)


@settings(max_examples=1500, **FUZZ)
@given(data=MUTATED_PARAMS)
def test_nd_load_mutated(data, workdir):
    f = workdir / "nd.params"
    f.write_bytes(data)
    try:
        out = mx.nd.load(str(f))
    except MXNetError:
        return
    assert isinstance(out, (dict, list))


@settings(max_examples=300, **FUZZ)
@given(data=MUTATED_PARAMS)
def test_load_parameters_mutated_is_atomic(data, workdir):
    net = _target()
    before = {k: p.data().asnumpy().copy() for k, p in net.collect_params().items()}
    f = workdir / "block.params"
    f.write_bytes(data)
    try:
        net.load_parameters(str(f))
        return
    except MXNetError:
        pass
    for k, p in net.collect_params().items():
        np.testing.assert_array_equal(p.data().asnumpy(), before[k], err_msg=k)


@settings(max_examples=200, **FUZZ)
@given(data=MUTATED_PARAMS)
def test_imports_mutated_params(data, workdir):
    f = workdir / "imports.params"
    f.write_bytes(data)
    try:
        mx.gluon.SymbolBlock.imports(str(ZOO / "squeezenet11-symbol.json"), ["data"], str(f))
    except MXNetError:
        pass


_TARGET = []


def _target():
    """The squeezenet graph with its real parameters, restored for every example."""
    if not _TARGET:
        _TARGET.append(
            mx.gluon.SymbolBlock.imports(
                str(ZOO / "squeezenet11-symbol.json"),
                ["data"],
                str(ZOO / "squeezenet11-0000.params"),
            )
        )
        _TARGET.append(
            {k: p.data().asnumpy().copy() for k, p in _TARGET[0].collect_params().items()}
        )
    net, values = _TARGET
    for k, p in net.collect_params().items():
        p.set_data(values[k])
    return net


# ----------------------------------------------------------------------------- JSON
def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


PATHS = [p for p in _paths(GRAPH) if p]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([-1, 0, 1, 2, 10**9]),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(
        [
            "null",
            "Convolution",
            "Concat",
            "BatchNorm",
            "(3, 3)",
            "(-1,)",
            "[]",
            "True",
            "relu",
            "1e400",
            "nan",
            "-7",
            "float16",
            "__proto__",
        ]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=6), kids, max_size=3)
    ),
    max_leaves=8,
)


def _mutate_doc(doc, path, action, value):
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    key = path[-1]
    if action == "delete":
        del parent[key]
    elif action == "replace":
        parent[key] = value
    elif action == "duplicate" and isinstance(parent, list):
        parent.insert(key, json.loads(json.dumps(parent[key])))
    elif action == "self_input" and isinstance(parent, list) and isinstance(parent[key], list):
        parent[key] = [key, 0, 0]  # an input that points at its own node (or later)


@st.composite
def mutated_json(draw):
    doc = json.loads(GRAPH_TEXT)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["delete", "replace", "replace", "duplicate", "self_input"]))
        _mutate_doc(doc, path, action, draw(VALUES))
    return json.dumps(doc)


@settings(max_examples=1200, **FUZZ)
@given(text=mutated_json())
def test_load_json_mutated_structure(text):
    try:
        sym = mx.sym.load_json(text)
    except MXNetError:
        return
    sym.list_arguments()
    sym.list_outputs()


@settings(max_examples=600, **FUZZ)
@given(muts=st.lists(_mutation(len(GRAPH_TEXT)), min_size=1, max_size=3))
def test_load_json_mutated_bytes(muts):
    data = _apply(GRAPH_TEXT.encode(), [m for m in muts if m[0] != "field"])
    try:
        mx.sym.load_json(data)
    except MXNetError:
        pass


@pytest.mark.parametrize(
    "doc",
    [
        [],
        1,
        "x",
        None,
        {},
        {"nodes": None},
        {"nodes": [], "heads": []},
        {
            "nodes": [{"op": "null", "name": "a", "inputs": []}],
            "heads": [[5, 0, 0]],
            "arg_nodes": [0],
        },
        {
            "nodes": [{"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}],
            "heads": [[0, 0, 0]],
            "arg_nodes": [],
        },
    ],
)
def test_load_json_bad_documents(doc):
    with pytest.raises(MXNetError):
        mx.sym.load_json(json.dumps(doc))
