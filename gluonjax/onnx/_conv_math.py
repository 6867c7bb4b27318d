"""Converters of the elementwise, scalar and reduction ops."""

from __future__ import annotations

import numpy as np

from ._table import converter

_UNARY = {
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "abs": "Abs",
    "negative": "Neg",
    "reciprocal": "Reciprocal",
    "sin": "Sin",
    "cos": "Cos",
    "tan": "Tan",
    "arcsin": "Asin",
    "arccos": "Acos",
    "arctan": "Atan",
    "sinh": "Sinh",
    "cosh": "Cosh",
    "arcsinh": "Asinh",
    "arccosh": "Acosh",
    "arctanh": "Atanh",
    "erf": "Erf",
    "sign": "Sign",
}
_ROUNDING = {"floor": "Floor", "ceil": "Ceil"}

_BINARY = {
    "add": "Add",
    "sub": "Sub",
    "mul": "Mul",
    "div": "Div",
    "power": "Pow",
    "maximum": "Max",
    "minimum": "Min",
}
_COMPARE = {
    "equal": ("Equal", False),
    "not_equal": ("Equal", True),
    "greater": ("Greater", False),
    "greater_equal": ("Less", True),
    "lesser": ("Less", False),
    "lesser_equal": ("Greater", True),
}


@converter(*_UNARY)
def unary(cx, node):
    cx.add(_UNARY[node.op.name], node.inputs[:1], node.outputs)


@converter(*_ROUNDING, "round", "trunc", "fix")
def rounding(cx, node):
    x, name = node.inputs[0], node.op.name
    if np.issubdtype(np.dtype(node.in_dtypes[0]), np.integer):  # exact on integers
        cx.add("Identity", [x], node.outputs)
    elif name in _ROUNDING:
        cx.add(_ROUNDING[name], [x], node.outputs)
    elif name == "round":  # half away from zero (ONNX's Round goes to even)
        mag = cx.add(
            "Floor", [cx.add("Add", [cx.add("Abs", [x]), cx.const(0.5, node.in_dtypes[0])])]
        )
        cx.add("Mul", [cx.add("Sign", [x]), mag], node.outputs)
    else:  # trunc / fix: toward zero
        cx.add("Mul", [cx.add("Sign", [x]), cx.add("Floor", [cx.add("Abs", [x])])], node.outputs)


@converter("square")
def square(cx, node):
    cx.add("Mul", [node.inputs[0], node.inputs[0]], node.outputs)


@converter("rsqrt")
def rsqrt(cx, node):
    cx.add("Reciprocal", [cx.add("Sqrt", node.inputs[:1])], node.outputs)


@converter("log1p")
def log1p(cx, node):
    one = cx.const(1, node.in_dtypes[0])
    cx.add("Log", [cx.add("Add", [node.inputs[0], one])], node.outputs)


@converter("expm1")
def expm1(cx, node):
    one = cx.const(1, node.in_dtypes[0])
    cx.add("Sub", [cx.add("Exp", node.inputs[:1]), one], node.outputs)


def _binary_names():
    names = []
    for base in _BINARY:
        names.append(f"broadcast_{base}")
    names += [
        "elemwise_add",
        "elemwise_sub",
        "elemwise_mul",
        "elemwise_div",
        "_power",
        "_maximum",
        "_minimum",
    ]
    return names


@converter(*_binary_names())
def binary(cx, node):
    base = node.op.name.replace("broadcast_", "").replace("elemwise_", "").lstrip("_")
    cx.add(_BINARY[base], _in_out_dtype(cx, node, node.inputs[:2]), node.outputs)


def _in_out_dtype(cx, node, inputs):
    """The inputs cast to the output's type where it differs (an integer division that
    gives floats): ONNX's arithmetic keeps its inputs' type."""
    from ._conv_nn import cast

    out = node.out_dtypes[0]
    return [
        x if t is None or out is None or np.dtype(t) == np.dtype(out) else cast(cx, x, out)
        for x, t in zip(inputs, node.in_dtypes)
    ]


def _compare(cx, lhs, rhs, base, dtype, out):
    op_type, negate = _COMPARE[base]
    res = cx.add(op_type, [lhs, rhs])
    if negate:
        res = cx.add("Not", [res])
    from ._conv_nn import cast

    cast(cx, res, dtype, out)


@converter(*[f"broadcast_{b}" for b in _COMPARE], *[f"_{b}" for b in _COMPARE])
def compare(cx, node):
    base = node.op.name.replace("broadcast_", "").lstrip("_")
    _compare(cx, node.inputs[0], node.inputs[1], base, node.in_dtypes[0], node.outputs[0])


_SCALAR = {
    "_plus_scalar": ("Add", False),
    "_minus_scalar": ("Sub", False),
    "_rminus_scalar": ("Sub", True),
    "_mul_scalar": ("Mul", False),
    "_div_scalar": ("Div", False),
    "_rdiv_scalar": ("Div", True),
    "_power_scalar": ("Pow", False),
    "_rpower_scalar": ("Pow", True),
    "_maximum_scalar": ("Max", False),
    "_minimum_scalar": ("Min", False),
}


@converter(*_SCALAR, *[f"_{b}_scalar" for b in _COMPARE])
def scalar(cx, node):
    dtype = node.in_dtypes[0]
    s = cx.const(node.attrs["scalar"], dtype, hint="scalar")
    name = node.op.name
    if name in _SCALAR:
        op_type, reverse = _SCALAR[name]
        x = _in_out_dtype(cx, node, node.inputs[:1])[0]
        if node.out_dtypes[0] is not None and np.dtype(node.out_dtypes[0]) != np.dtype(dtype):
            s = cx.const(node.attrs["scalar"], node.out_dtypes[0], hint="scalar")
        args = [s, x] if reverse else [x, s]
        cx.add(op_type, args, node.outputs)
    else:
        _compare(cx, node.inputs[0], s, name[1 : -len("_scalar")], dtype, node.outputs[0])


@converter("add_n")
def add_n(cx, node):
    cx.add("Sum", node.inputs, node.outputs)


@converter("clip")
def clip(cx, node):
    dtype = node.in_dtypes[0]
    lo = cx.const(node.attrs["a_min"], dtype, hint="min")
    hi = cx.const(node.attrs["a_max"], dtype, hint="max")
    cx.add("Clip", [node.inputs[0], lo, hi], node.outputs)


@converter("Cast")
def cast_op(cx, node):
    from ._conv_nn import cast

    cast(cx, node.inputs[0], node.attrs["dtype"], node.outputs[0])


_REDUCE = {
    "sum": "ReduceSum",
    "mean": "ReduceMean",
    "max": "ReduceMax",
    "min": "ReduceMin",
    "prod": "ReduceProd",
}


@converter(*_REDUCE)
def reduce(cx, node):
    a = node.attrs
    rank = len(node.in_shapes[0])
    axis = a["axis"]
    if isinstance(axis, int):
        axis = (axis,)
    if axis is not None and len(axis) == 0:
        axis = None
    if a["exclude"]:
        keep = {ax % rank for ax in (axis or ())}
        axis = [i for i in range(rank) if i not in keep]
        if not axis:
            cx.add("Identity", node.inputs[:1], node.outputs)
            return
    elif axis is not None:
        axis = [ax % rank for ax in axis]
    op_type = _REDUCE[node.op.name]
    out_rank = len(node.out_shapes[0])
    if out_rank and axis is None and not a["keepdims"]:  # MXNet's total is of shape (1,)
        total = cx.reduce(op_type, node.inputs[0], None, False)
        cx.add("Reshape", [total, cx.ints([1], "shape")], node.outputs)
        return
    cx.reduce(op_type, node.inputs[0], axis, a["keepdims"], node.outputs)
