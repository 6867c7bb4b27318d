"""The conversion context: what a converter sees of its node and how it emits ONNX nodes."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._errors import ONNXExportError, ONNXUnsupportedOpError

__all__ = ["Context", "Node", "INT64_MAX"]

INT64_MAX = np.iinfo(np.int64).max


@dataclass
class Node:
    """One symbol node as a converter sees it.

    ``inputs`` and ``outputs`` are ONNX tensor names; ``attrs`` the registry op's
    parsed attributes (defaults filled in); shapes and dtypes come from the graph's
    shape and type inference (a dynamic axis is 0).
    """

    name: str
    op: object  # the registry Op
    op_name: str  # the name in the graph (maybe an alias)
    attrs: dict
    inputs: list
    outputs: list
    in_shapes: list = field(default_factory=list)
    in_dtypes: list = field(default_factory=list)
    out_shapes: list = field(default_factory=list)
    out_dtypes: list = field(default_factory=list)


class Context:
    """Collects the ONNX nodes and initializers of one export at one opset."""

    def __init__(self, onnx, opset, params):
        self.onnx = onnx
        self.helper = onnx.helper
        self.opset = opset
        self.params = params  # name -> numpy array (the graph's initializers)
        self.values = {}  # tensor name -> numpy value, for every constant tensor
        self.nodes = []
        self.initializers = {}
        self._count = 0
        self.node = None  # the node being converted (for error messages)

    # -- naming
    def fresh(self, hint):
        self._count += 1
        base = self.node.name if self.node is not None else "gluonjax"
        return f"{base}__{hint}{self._count}"

    # -- emission
    def add(self, op_type, inputs, outputs=None, n_out=1, **attrs):
        """Emit ``op_type(inputs)``; returns its output name (or names when ``n_out > 1``)."""
        if outputs is None:
            outputs = [self.fresh(op_type.lower()) for _ in range(n_out)]
        elif isinstance(outputs, str):
            outputs = [outputs]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(
            self.helper.make_node(
                op_type, list(inputs), list(outputs), name=self.fresh(op_type.lower()), **attrs
            )
        )
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def const(self, value, dtype=None, hint="const"):
        """An initializer holding ``value`` (a numpy array or scalar); returns its name."""
        arr = np.asarray(value, dtype=dtype)
        name = self.fresh(hint)
        self.initializers[name] = arr
        return name

    def ints(self, values, hint="ints"):
        return self.const(np.asarray(list(values), dtype=np.int64), hint=hint)

    def fill_like(self, x, value, dtype, out=None):
        """A tensor of ``x``'s shape filled with ``value`` of ``dtype``."""
        from ._export import onnx_dtype

        tensor = self.helper.make_tensor("value", onnx_dtype(self.onnx, dtype), [1], [value])
        return self.add("ConstantOfShape", [self.add("Shape", [x])], out, value=tensor)

    def param(self, name):
        """The numpy value of a constant tensor (a parameter or a folded node), or None."""
        return self.values.get(name)

    # -- opset-dependent forms
    def reduce(self, op_type, x, axes, keepdims, out=None):
        """``Reduce*`` over ``axes`` (None: all); axes are an input from opset 13
        (ReduceSum) or 18 (the others)."""
        as_input = self.opset >= (13 if op_type == "ReduceSum" else 18)
        keep = int(bool(keepdims))
        if axes is None:
            return self.add(op_type, [x], out, keepdims=keep)
        axes = [int(a) for a in axes]
        if as_input:
            return self.add(op_type, [x, self.ints(axes, "axes")], out, keepdims=keep)
        return self.add(op_type, [x], out, axes=axes, keepdims=keep)

    def unsqueeze(self, x, axes, out=None):
        if self.opset >= 13:
            return self.add("Unsqueeze", [x, self.ints(axes, "axes")], out)
        return self.add("Unsqueeze", [x], out, axes=list(axes))

    def squeeze(self, x, axes, out=None):
        if axes is None:
            return self.add("Squeeze", [x], out)
        if self.opset >= 13:
            return self.add("Squeeze", [x, self.ints(axes, "axes")], out)
        return self.add("Squeeze", [x], out, axes=list(axes))

    def split(self, x, sizes, axis, outputs):
        """Split ``x`` along ``axis`` into pieces of ``sizes``."""
        if self.opset >= 13:
            return self.add("Split", [x, self.ints(sizes, "split")], outputs, axis=axis)
        return self.add("Split", [x], outputs, axis=axis, split=list(sizes))

    # -- errors
    def unsupported(self, why):
        node = self.node
        return ONNXUnsupportedOpError(
            f"node '{node.name}' (op {node.op_name}) cannot be exported to ONNX opset "
            f"{self.opset}: {why}"
        )

    def fail(self, why):
        node = self.node
        return ONNXExportError(f"node '{node.name}' (op {node.op_name}), opset {self.opset}: {why}")
