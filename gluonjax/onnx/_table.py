"""The one converter table: registry op name -> ONNX converter.

Every converter is keyed by the name of an op of the op registry
(``gluonjax/_ops/``); aliases (``_plus``, ``flatten``, ``sum_axis``...) are resolved
through the registry, so one converter serves an op under all its names.
"""

from __future__ import annotations

from .._ops import registry as _reg
from ._errors import ONNXExportError

__all__ = [
    "CONVERTERS",
    "IGNORED_INPUTS",
    "converter",
    "lookup",
    "MIN_OPSET",
    "MXNET_OPSETS",
    "operator_support",
]

#: registry op name -> ``fn(cx, node)`` emitting the node's ONNX nodes
CONVERTERS: dict = {}

#: registry op name -> positions of inputs the inference graph drops (loss labels)
IGNORED_INPUTS: dict = {}

#: the oldest opset the converters write (MXNet 1.9.1's exporter has opsets 12 and 13)
MIN_OPSET = 12
MXNET_OPSETS = (12, 13)


def converter(*names):
    """Register ``fn`` as the converter of the registry ops ``names`` (canonical names)."""

    def deco(fn):
        for name in names:
            op = _reg.get(name)
            if op.name != name:
                raise ONNXExportError(
                    f"converter for {name!r}: key it by the registry name {op.name!r}"
                )
            if name in CONVERTERS:
                raise ONNXExportError(f"two ONNX converters for {name!r}")
            CONVERTERS[name] = fn
        return fn

    return deco


def lookup(op_name):
    """``(registry op, converter)`` for an op name or alias; ``(op, None)`` if none."""
    _load()
    op = _reg.get(op_name)
    return op, CONVERTERS.get(op.name)


def _load():
    from . import (  # noqa: F401
        _conv_contrib,
        _conv_detect,
        _conv_math,
        _conv_more,
        _conv_nn,
        _conv_rnn,
        _conv_shape,
        _conv_sort,
    )


def newest_opset():
    """The newest opset the installed onnx package knows."""
    from ._errors import require_onnx

    return require_onnx().defs.onnx_opset_version()


def check_opset(opset):
    """``opset`` as an int, or an :class:`ONNXExportError` naming the supported range."""
    newest = newest_opset()
    if opset is None:
        return newest
    try:
        value = int(opset)
    except (TypeError, ValueError):
        value = None
    if value is None or not MIN_OPSET <= value <= newest:
        raise ONNXExportError(
            f"ONNX opset {opset!r} is not supported: gluonjax writes opsets {MIN_OPSET} to "
            f"{newest} (the newest the installed onnx {_onnx_version()} knows)"
        )
    return value


def _onnx_version():
    from ._errors import require_onnx

    return require_onnx().__version__


def operator_support(opset_version=None):
    """The sorted MXNet op names (registry names and their aliases) that export."""
    _load()
    if opset_version is not None:
        check_opset(opset_version)
    names = set()
    for name, op in _reg.items():
        if op.name in CONVERTERS:
            names.add(name)
    return sorted(names)


def support_table():
    """The markdown table of docs/onnx.md: each registry op that exports and its aliases."""
    _load()
    aliases = {}
    for name, op in _reg.items():
        if op.name in CONVERTERS and name != op.name:
            aliases.setdefault(op.name, []).append(name)
    rows = ["| MXNet op | also called |", "| --- | --- |"]
    for name in sorted(CONVERTERS, key=lambda n: (n.lstrip("_").lower(), n)):
        alias = ", ".join(f"`{a}`" for a in sorted(aliases.get(name, ())))
        rows.append(f"| `{name}` | {alias} |")
    return "\n".join(rows)
