"""Reading MXNet symbol JSON into a graph of Nodes (used by ``_json.load_json``).

Validates everything: node/field types, input and head entries (which must
point to earlier nodes and existing outputs), op names (registry names and
aliases, or a ``NODE_LOADERS`` hook) and attribute values (the op's own
parsers). Problems raise :class:`~gluonjax.base.FileFormatError` naming the
node index and name.
"""

from __future__ import annotations

import ast
import difflib
import json

from .._ops import registry as _reg
from .._ops.graph import Node
from ..base import FileFormatError, MXNetError
from ._json import HIDDEN_KEYS, NODE_LOADERS, dtype_from_attr

__all__ = ["from_dict"]


def _fail(msg, i=None, raw=None):
    if i is not None:
        name = raw.get("name") if isinstance(raw, dict) else None
        where = f"node {i}" + (f" ({name!r})" if isinstance(name, str) else "")
        msg = f"{where}: {msg}"
    return FileFormatError(f"invalid symbol JSON: {msg}")


def _no_dupes(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _fail(f"duplicate key {k!r} in object {{{', '.join(repr(p[0]) for p in pairs)}}}")
        out[k] = v
    return out


def _bad_constant(text):
    raise _fail(f"non-standard JSON constant {text}")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _str_dict(value, what, i, raw):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(f"'{what}' must be an object, got {type(value).__name__}", i, raw)
    for k, v in value.items():
        if not isinstance(v, str):
            raise _fail(f"attribute {k!r} must be a string, got {json.dumps(v)}", i, raw)
    return dict(value)


def _node_attrs(raw, i):
    """All string attributes of a raw node, legacy keys folded in."""
    attrs = {}
    attrs.update(_str_dict(raw.get("param"), "param", i, raw))
    attrs.update(_str_dict(raw.get("attrs"), "attrs", i, raw))
    for k, v in _str_dict(raw.get("attr"), "attr", i, raw).items():
        attrs[f"__{k}__" if k in HIDDEN_KEYS else k] = v
    return {f"__{k}__" if k in HIDDEN_KEYS else k: v for k, v in attrs.items()}


def _entry(value, i, raw, what, n_nodes, nodes):
    if (
        not isinstance(value, list)
        or len(value) not in (2, 3)
        or not all(_is_int(x) for x in value)
    ):
        raise _fail(
            f"{what} must be [node_id, output_index(, version)], got {json.dumps(value)}", i, raw
        )
    src, idx = value[0], value[1]
    if src < 0 or src >= n_nodes:
        raise _fail(
            f"{what} refers to node {src}, which does not exist (the file has {n_nodes} nodes)",
            i,
            raw,
        )
    if src >= len(nodes):
        raise _fail(
            f"{what} refers to node {src}, which comes after it: inputs must "
            f"come first (a cycle or a misordered file)",
            i,
            raw,
        )
    node = nodes[src]
    if not 0 <= idx < node.num_outputs:
        raise _fail(
            f"{what} asks for output {idx} of node {src} ({node.name!r}), which "
            f"has {node.num_outputs} output(s)",
            i,
            raw,
        )
    return node, idx


def _lookup_op(opname, attrs, i, raw):
    for prefix, loader in NODE_LOADERS.items():
        if opname.startswith(prefix):
            try:
                return loader(opname, dict(attrs))
            except MXNetError as err:
                raise _fail(f"cannot rebuild op {opname!r}: {err}", i, raw) from None
            except (KeyError, ValueError, TypeError) as err:
                raise _fail(f"cannot rebuild op {opname!r}: {err}", i, raw) from None
    try:
        return _reg.get(opname)
    except MXNetError:
        close = difflib.get_close_matches(opname, _reg.list_ops(), n=3)
        hint = f"; close registry names: {close}" if close else ""
        raise _fail(f"unknown operator {opname!r}{hint}", i, raw) from None


def _op_node(raw, i, opname, attrs, inputs, subgraphs=None):
    op = _lookup_op(opname, attrs, i, raw)
    op_attrs = {k: v for k, v in attrs.items() if k in op.attrs and not k.startswith("_")}
    parsed = dict(op_attrs)
    if ("_subgraphs" in op.attrs) != bool(subgraphs):
        raise _fail(
            f"operator {op.name} "
            + ("needs its subgraphs" if subgraphs is None else "takes no subgraphs"),
            i,
            raw,
        )
    if subgraphs:
        from ._subgraph import Subgraph

        parsed["_subgraphs"] = tuple(Subgraph(g) for g in subgraphs)
    extra = {k: v for k, v in attrs.items() if k not in op_attrs}
    keep = _PASSTHROUGH.get("*_scalar" if op.name.endswith("_scalar") else op.name, ())
    bad = [k for k in extra if not (k.startswith("__") and k.endswith("__")) and k not in keep]
    if bad:
        raise _fail(
            f"operator {op.name} has no attribute(s) {bad}; it takes "
            f"{[a for a in op.attrs if not a.startswith('_')]}",
            i,
            raw,
        )
    try:
        static_key, dyn = op.parse_attrs(parsed)
    except MXNetError as err:
        raise _fail(f"bad attribute value: {err}", i, raw) from None
    names = op.input_names(op.attr_dict(static_key, dyn), len(inputs) if op.variadic else None)
    if len(names) != len(inputs):
        raise _fail(
            f"operator {op.name} with these attributes takes {len(names)} input(s) "
            f"{list(names)}, the node has {len(inputs)}",
            i,
            raw,
        )
    try:
        return Node(op, raw["name"], op_attrs, inputs, static_key, dyn, extra)
    except MXNetError as err:
        raise _fail(str(err), i, raw) from None


# MXNet attributes that do not change what the registry op computes on float
# data; they are kept (and written back) as node metadata.
_PASSTHROUGH = {
    "*_scalar": ("is_int",),
    "MakeLoss": ("grad_scale", "valid_thresh", "normalization"),
}

_NODE_KEYS = {
    "op",
    "name",
    "attrs",
    "attr",
    "param",
    "inputs",
    "backward_source_id",
    "control_deps",
    "subgraphs",
}


def from_dict(graph):
    """A Symbol from a parsed MXNet JSON graph (see module docstring)."""
    from .symbol import Symbol

    if not isinstance(graph, dict):
        raise _fail(f"the top level must be an object, got {type(graph).__name__}")
    for key in ("nodes", "heads"):
        if key not in graph:
            raise _fail(f"missing top-level field '{key}'")
    raw_nodes, heads = graph["nodes"], graph["heads"]
    if not isinstance(raw_nodes, list) or not raw_nodes:
        raise _fail("'nodes' must be a non-empty list")
    if not isinstance(heads, list) or not heads:
        raise _fail("'heads' must be a non-empty list")
    nodes = []
    for i, raw in enumerate(raw_nodes):
        if not isinstance(raw, dict):
            raise _fail(f"node {i} must be an object, got {type(raw).__name__}")
        unknown = [k for k in raw if k not in _NODE_KEYS]
        if unknown:
            raise _fail(f"unknown field(s) {unknown}", i, raw)
        for key in ("op", "name"):
            if key not in raw:
                raise _fail(f"missing field '{key}'", i, raw)
            if not isinstance(raw[key], str):
                raise _fail(f"'{key}' must be a string, got {json.dumps(raw[key])}", i, raw)
        if raw["name"] == "" and raw["op"] == "null":
            raise _fail("a variable needs a non-empty name", i, raw)
        bsid = raw.get("backward_source_id", -1)
        if not _is_int(bsid) or bsid != -1:
            raise _fail(f"backward nodes (backward_source_id={bsid!r}) are not supported", i, raw)
        if raw.get("control_deps"):
            raise _fail("control_deps are not supported", i, raw)
        subgraphs = raw.get("subgraphs") or None
        if subgraphs is not None:
            if not isinstance(subgraphs, list) or not all(isinstance(g, dict) for g in subgraphs):
                raise _fail("'subgraphs' must be a list of graph objects", i, raw)
            try:
                subgraphs = [from_dict(g) for g in subgraphs]
            except FileFormatError as err:
                raise _fail(f"in a subgraph: {err}", i, raw) from None
        attrs = _node_attrs(raw, i)
        raw_inputs = raw.get("inputs", [] if raw["op"] == "null" else None)
        if not isinstance(raw_inputs, list):
            raise _fail(
                "'inputs' must be a list" if raw_inputs is not None else "missing field 'inputs'",
                i,
                raw,
            )
        inputs = [
            _entry(e, i, raw, f"input {k}", len(raw_nodes), nodes) for k, e in enumerate(raw_inputs)
        ]
        if raw["op"] == "null":
            if inputs:
                raise _fail("a variable ('null' op) cannot have inputs", i, raw)
            if "__dtype__" in attrs:
                try:
                    dtype_from_attr(attrs["__dtype__"])
                except MXNetError as err:
                    raise _fail(f"bad __dtype__: {err}", i, raw) from None
            nodes.append(Node(None, raw["name"], extra=attrs))
        else:
            nodes.append(_op_node(raw, i, raw["op"], attrs, inputs, subgraphs))
    arg_nodes = graph.get("arg_nodes", [])
    if not isinstance(arg_nodes, list) or not all(_is_int(a) for a in arg_nodes):
        raise _fail("'arg_nodes' must be a list of node ids")
    for a in arg_nodes:
        if not 0 <= a < len(nodes) or nodes[a].op is not None:
            raise _fail(f"arg_nodes entry {a} is not a variable node")
    row_ptr = graph.get("node_row_ptr")
    if row_ptr is not None and (
        not isinstance(row_ptr, list) or not all(_is_int(r) for r in row_ptr)
    ):
        raise _fail("'node_row_ptr' must be a list of integers")
    attrs = graph.get("attrs", {})
    if not isinstance(attrs, dict):
        raise _fail("top-level 'attrs' must be an object")
    _numpy_shape_attrs(nodes, attrs)
    outs = []
    for k, h in enumerate(heads):
        node, idx = _entry(h, None, None, f"head {k}", len(nodes), nodes)
        if node.op is not None and idx >= node.visible():
            raise _fail(f"head {k} asks for hidden output {idx} of node {node.name!r}")
        outs.append((node, idx))
    return Symbol(outs)


def _numpy_shape_attrs(nodes, graph_attrs):
    """Under ``np_shape``, a file written without it (MXNet < 1.6, or with the switch
    off) marks unknown dimensions of variable ``__shape__`` with 0: rewrite them as -1
    (and an empty shape, unknown there, as no shape), as MXNet does on load."""
    from ..util import is_np_shape

    flag = graph_attrs.get("is_np_shape")
    if not is_np_shape() or (isinstance(flag, list) and len(flag) == 2 and flag[1] not in (0, "0")):
        return
    for node in nodes:
        text = node.extra.get("__shape__") if node.op is None else None
        if text is None:
            continue
        try:
            shape = tuple(int(d) for d in ast.literal_eval(text))
        except (ValueError, SyntaxError, TypeError):
            continue
        if not shape:
            del node.extra["__shape__"]
        else:
            node.extra["__shape__"] = str(tuple(-1 if d == 0 else d for d in shape))
