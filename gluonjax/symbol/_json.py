"""MXNet symbol JSON: ``Symbol.tojson``/``save`` and ``sym.load``/``load_json``.

The writer produces MXNet 1.9.1's schema (``nodes``, ``arg_nodes``,
``node_row_ptr``, ``heads``, ``attrs.mxnet_version``); the reader also accepts
older variants (``param``/``attr`` instead of ``attrs``, two-element input
entries, ``backward_source_id``, no ``node_row_ptr``). Loading only parses
data: every op is looked up in the registry (or built by a ``NODE_LOADERS``
hook), nothing from the file is executed, and any malformed content raises
:class:`~gluonjax.base.FileFormatError` naming the node and the problem.
"""

from __future__ import annotations

import json
import os

from .._io.atomic import read_bytes
from .._ops import jaxops
from .._ops import registry as _reg
from .._ops.graph import topo
from ..base import FileFormatError, MXNetError

__all__ = ["tojson", "save", "load", "load_json", "fromjson", "NODE_LOADERS", "MXNET_VERSION"]

MXNET_VERSION = 10901

#: op-name prefix -> ``fn(op_name, attrs: dict of str) -> Op`` for nodes whose op is
#: not a registry op (e.g. ``"jax."`` for exported JAX primitives). The returned
#: Op's ``parse_attrs`` then parses the node's attributes like a registry op's.
NODE_LOADERS: dict = {jaxops.PREFIX: jaxops.load_op}  # op-name prefix -> builder of its Op

#: Keys MXNet stores as ``__key__`` and also lists under the plain ``key``.
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")

# MXNet's integer type flags, as written in a variable's ``__dtype__``.
DTYPE_CODES = {
    0: "float32",
    1: "float64",
    2: "float16",
    3: "uint8",
    4: "int32",
    5: "int8",
    6: "int64",
    7: "bool",
    8: "int16",
    9: "uint16",
    10: "uint32",
    11: "uint64",
    12: "bfloat16",
}
_CODE_OF = {v: k for k, v in DTYPE_CODES.items()}


def dtype_code(dtype):
    """MXNet's type flag (as a string) for a dtype: ``'float32'`` -> ``'0'``."""
    name = _reg.dtype_of(dtype).name
    if name not in _CODE_OF:
        raise MXNetError(f"dtype {name} has no MXNet type flag")
    return str(_CODE_OF[name])


def dtype_from_attr(text):
    """A numpy dtype from a ``__dtype__`` attribute (an MXNet type flag or a name)."""
    text = str(text).strip()
    if text.lstrip("-").isdigit():
        code = int(text)
        if code not in DTYPE_CODES:
            raise MXNetError(f"unknown MXNet dtype flag {text!r}")
        return _reg.dtype_of(DTYPE_CODES[code])
    return _reg.dtype_of(text)


# Ops whose MXNet version (the MKLDNN build on PyPI) has more hidden outputs
# (masks, workspaces, statistics) than the registry op; only ``node_row_ptr``
# depends on it.
_MX_NUM_OUTPUTS = {
    "Dropout": lambda a: 2,
    "LRN": lambda a: 2,
    "InstanceNorm": lambda a: 3,
    "LayerNorm": lambda a: 3,
    "Pooling": lambda a: 2 if a.get("pool_type") == "max" else 1,
}


# ----------------------------------------------------------------------------- writing
def node_json_attrs(node):
    """The ``attrs`` dict MXNet writes for a node (strings, sorted)."""
    d = dict(node.str_attrs()) if node.op is not None else {}
    d.update({k: str(v) for k, v in node.extra.items()})
    return dict(sorted(d.items()))


def to_dict(sym, top=True):
    """The MXNet JSON graph of ``sym`` as a Python dict (``top``: with the graph
    attributes; a control-flow node's subgraphs have none)."""
    nodes = topo(sym._outputs)
    index = {id(n): i for i, n in enumerate(nodes)}
    version = {}
    out_nodes, row_ptr, arg_nodes = [], [0], []
    for i, node in enumerate(nodes):
        entry = {"op": "null" if node.op is None else node.op.name, "name": node.name}
        attrs = node_json_attrs(node)
        if attrs:
            entry["attrs"] = attrs
        mutated = set()
        aux_names = () if node.op is None else node.op.aux_names(node.attr_dict())
        if aux_names:
            names = node.op.input_names(node.attr_dict(), len(node.inputs))
            mutated = {k for k, nm in enumerate(names) if nm in aux_names}
        inputs = []
        for k, (src, idx) in enumerate(node.inputs):
            ver = 0
            if src.op is None:
                if k in mutated:
                    version[id(src)] = version.get(id(src), 0) + 1
                ver = version.get(id(src), 0)
            inputs.append([index[id(src)], idx, ver])
        entry["inputs"] = inputs
        if node.op is not None and "_subgraphs" in node.op.attrs:
            graphs = node.attr_dict()["_subgraphs"]
            entry["subgraphs"] = [to_dict(g.symbol, top=False) for g in graphs]
        out_nodes.append(entry)
        if node.op is None:
            arg_nodes.append(i)
        n_out = node.num_outputs
        if node.op is not None:
            rule = _MX_NUM_OUTPUTS.get(node.op.name)
            n_out = max(n_out, rule(node.attr_dict()) if rule else 0)
        row_ptr.append(row_ptr[-1] + n_out)
    out = {
        "nodes": out_nodes,
        "arg_nodes": arg_nodes,
        "node_row_ptr": row_ptr,
        "heads": [[index[id(n)], idx, 0] for n, idx in sym._outputs],
    }
    if top:
        out["attrs"] = _graph_attrs()
    return out


def _graph_attrs():
    from ..util import is_np_shape

    attrs = {"mxnet_version": ["int", MXNET_VERSION]}
    if is_np_shape():
        attrs["is_np_shape"] = ["int", 1]
    return attrs


def tojson(sym):
    """MXNet 1.9.1 JSON text of ``sym`` (loadable by ``mx.sym.load_json`` of either)."""
    return json.dumps(to_dict(sym), indent=2)


def save(sym, fname):
    """Write ``sym.tojson()`` to ``fname`` atomically."""
    from .._io.atomic import atomic_write

    if not isinstance(fname, (str, os.PathLike)):
        raise MXNetError(f"save: fname must be a path, got {type(fname).__name__}")
    atomic_write(fname, tojson(sym).encode("utf-8"))


# ----------------------------------------------------------------------------- reading
def from_dict(graph):
    """A Symbol from a parsed MXNet JSON graph (see :mod:`._json_read`)."""
    from ._json_read import from_dict as _from_dict

    return _from_dict(graph)


def load_json(json_str):
    """A Symbol from MXNet JSON text (``mx.sym.load_json``)."""
    from ._json_read import _fail

    if isinstance(json_str, (bytes, bytearray)):
        try:
            json_str = json_str.decode("utf-8")
        except UnicodeDecodeError as err:
            raise _fail(f"not UTF-8 text ({err})") from None
    if not isinstance(json_str, str):
        raise MXNetError(f"load_json expects a string, got {type(json_str).__name__}")
    from ._json_read import _bad_constant, _fail, _no_dupes

    try:
        graph = json.loads(json_str, object_pairs_hook=_no_dupes, parse_constant=_bad_constant)
    except json.JSONDecodeError as err:
        raise _fail(f"not valid JSON ({err})") from None
    except RecursionError:
        raise _fail("nesting too deep") from None
    return from_dict(graph)


fromjson = load_json


def load(fname):
    """A Symbol from an MXNet ``-symbol.json`` file (``mx.sym.load``)."""
    if not isinstance(fname, (str, os.PathLike)):
        raise MXNetError(f"load: fname must be a path, got {type(fname).__name__}")
    data = read_bytes(fname, "reading symbol file")
    try:
        return load_json(data)
    except FileFormatError as err:
        raise FileFormatError(f"{os.fspath(fname)}: {err}") from None
