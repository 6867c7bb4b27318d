"""Symbol attributes, ``debug_str`` and children, with MXNet 1.9.1's semantics.

Attributes: op nodes keep the attributes the user gave (``node.attrs``), every
node keeps ``__key__`` metadata and AttrScope attributes (``node.extra``).
MXNet stores the keys ``ctx_group``, ``lr_mult``, ``wd_mult``,
``force_mirroring`` and ``mirror_stage`` as ``__key__`` and lists them under
both spellings; ``attr`` and ``list_attr`` look at the first output's node.
"""

from __future__ import annotations

import warnings

from .._ops.graph import Node, topo
from ..base import AttrError, MXNetError
from ._json import HIDDEN_KEYS, to_dict

__all__ = [
    "node_attrs",
    "attr",
    "list_attr",
    "attr_dict",
    "set_attr",
    "debug_str",
    "get_children",
    "SymbolIndexError",
    "SymbolValueError",
    "SymbolAttributeError",
]


class SymbolIndexError(MXNetError, IndexError):
    """An output index out of range."""


class SymbolAttributeError(MXNetError, AttributeError):
    """An attribute a declarative symbol does not have (``shape``, ``dtype``)."""


class SymbolValueError(MXNetError, ValueError):
    """A bad value for a Symbol method (unknown output name, non-string attribute)."""


def node_attrs(node):
    """{key: string} of one node as MXNet lists it (hidden keys under both names)."""
    out = dict(node.str_attrs()) if node.op is not None else {}
    for k, v in node.extra.items():
        out[k] = str(v)
        if k.startswith("__") and k.endswith("__") and k[2:-2] in HIDDEN_KEYS:
            out[k[2:-2]] = str(v)
    return out


def attr(sym, key):
    """The string attribute ``key`` of the first output's node, or None."""
    if not isinstance(key, str):
        raise SymbolValueError(f"attribute key must be a string, got {type(key).__name__}")
    node = sym._outputs[0][0]
    if key in HIDDEN_KEYS:
        key = f"__{key}__"
    if key in node.extra:
        return str(node.extra[key])
    if node.op is not None and key in node.attrs:
        return node.str_attrs()[key]
    return None


def list_attr(sym, recursive=False):
    """Attributes of the first output's node."""
    if recursive:
        warnings.warn(
            "Symbol.list_attr with recursive=True has been deprecated; use attr_dict instead",
            DeprecationWarning,
            stacklevel=3,
        )
    return node_attrs(sym._outputs[0][0])


def attr_dict(sym):
    """{node name: attributes} for every node of the graph that has attributes."""
    out = {}
    for node in topo(sym._outputs):
        d = node_attrs(node)
        if d:
            out[node.name] = d
    return out


def set_attr(sym, kwargs):
    """``sym._set_attr(**kwargs)``: string attributes on the first output's node.

    Keys that are attributes of the node's op change the op's attribute (as in
    MXNet, which re-parses them); ``__key__`` and hidden keys are metadata;
    other keys are only allowed on variables.
    """
    node = sym._outputs[0][0]
    for k, v in kwargs.items():
        if not isinstance(v, str):
            raise SymbolValueError(f"Set Attr only accepts string values; {k}={v!r}")
    meta, op_attrs = {}, {}
    for k, v in kwargs.items():
        key = f"__{k}__" if k in HIDDEN_KEYS else k
        if node.op is not None and key in node.op.attrs and not key.startswith("_"):
            op_attrs[key] = v
        elif node.op is None or (key.startswith("__") and key.endswith("__")):
            meta[key] = v
        else:
            raise AttrError(
                f"{node.op.name} node {node.name!r} has no attribute {k!r}; it takes "
                f"{[a for a in node.op.attrs if not a.startswith('_')]} (or __key__ metadata)"
            )
    if op_attrs:
        merged = {**node.attrs, **op_attrs}
        node.static_key, node.dyn = node.op.parse_attrs(merged)
        node.attrs = merged
        node.num_outputs = node.op.n_outputs(node.attr_dict())
    node.extra.update(meta)


def get_children(sym):
    """The inputs of the output nodes as one group, or None when there are none."""
    from .symbol import Symbol

    entries, seen = [], set()
    for node, _ in sym._outputs:
        if id(node) not in seen:
            seen.add(id(node))
            entries.extend(node.inputs)
    return Symbol(entries) if entries else None


def gen_atomic(sym):
    """The op of ``sym``'s node on new variables named after its inputs (``data``,
    ``weight``...), as MXNet's ``_gen_atomic_symbol``; every output of the node is an
    output of the result."""
    from .symbol import Symbol

    nodes = {id(n): n for n, _ in sym._outputs}
    if len(nodes) != 1:
        raise SymbolValueError(
            f"_gen_atomic_symbol needs the outputs of one node, {sym!r} has {len(nodes)}"
        )
    node = sym._outputs[0][0]
    if node.op is None:
        raise SymbolValueError(f"_gen_atomic_symbol: {sym!r} is a variable, not an op")
    names = node.op.input_names(node.attr_dict(), len(node.inputs))
    inputs = [(Node(None, n), 0) for n in names]
    atom = Node(node.op, node.name, node.attrs, inputs, node.static_key, node.dyn, node.extra)
    return Symbol([(atom, i) for i in range(atom.visible())])


def debug_str(sym):
    """MXNet's text listing of the graph (outputs, variables, ops, inputs, attributes)."""
    if len(sym._outputs) == 1 and sym._outputs[0][0].op is None:
        return f"Variable:{sym._outputs[0][0].name}\n"
    doc = to_dict(sym)
    nodes = doc["nodes"]
    lines = ["Symbol Outputs:"]
    for k, (nid, idx, _) in enumerate(doc["heads"]):
        lines.append(f"\toutput[{k}]={nodes[nid]['name']}({idx})")
    for node in nodes:
        if node["op"] == "null":
            lines.append(f"Variable:{node['name']}")
            continue
        lines += ["-" * 20, f"Op:{node['op']}, Name={node['name']}", "Inputs:"]
        for k, (nid, idx, ver) in enumerate(node["inputs"]):
            src = nodes[nid]
            tail = f" version={ver}" if src["op"] == "null" else ""
            lines.append(f"\targ[{k}]={src['name']}({idx}){tail}")
        if node.get("attrs"):
            lines.append("Attrs:")
            lines += [f"\t{k}={v}" for k, v in node["attrs"].items()]
    return "\n".join(lines) + "\n"
