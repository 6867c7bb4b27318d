"""Shape values known at import time.

Exporters such as PyTorch's compute shapes in the graph: ``Shape -> Gather -> Unsqueeze ->
Concat -> Reshape / ConstantOfShape / Expand``. Such integer arithmetic on constants is
computed here, while the graph is read (``fold``: one rule per ONNX op in ``RULES``). An
axis whose size is only known when the graph runs (a symbolic batch axis) is a :class:`Dim`
naming the tensor and the axis it measures; the values holding one are kept in
``Graph.dims`` (numpy object arrays), and the importers that take a shape build their
symbols from them (``filled``, ``reshape_target``, ``expand``): the imported graph then
follows the input's size as ONNX Runtime does.
"""

from __future__ import annotations

import numpy as np

from ... import symbol as S

__all__ = ["Dim", "fold", "filled", "reshape_target", "expand"]


class Dim:
    """Axis ``axis`` of tensor ``tensor``, whose size is known when the graph runs."""

    __slots__ = ("tensor", "axis")

    def __init__(self, tensor, axis):
        self.tensor, self.axis = tensor, axis

    def __eq__(self, other):
        return isinstance(other, Dim) and (other.tensor, other.axis) == (self.tensor, self.axis)

    def __hash__(self):
        return hash((self.tensor, self.axis))

    def __repr__(self):
        return f"{self.tensor}.shape[{self.axis}]"


#: ONNX op type -> ``fn(g, node, values) -> array or list of arrays, or None``
RULES: dict = {}


def rule(*names, partial=False):
    """Register ``fn`` for ``names``; ``partial``: also called when an input is unknown
    (None)."""

    def deco(fn):
        fn.partial = partial
        for n in names:
            RULES[n] = fn
        return fn

    return deco


def _has_dim(v):
    return v.dtype == object and any(isinstance(e, Dim) for e in v.flat)


def _known(g, name):
    if name in g.consts:
        return g.consts[name]
    return g.dims.get(name)


def fold(g, node):
    """Compute ``node`` at import time where its inputs are known integers (or shapes).

    Returns True when every output became a constant (no symbol is needed), False when
    the importer must build the node (outputs holding a :class:`Dim` are recorded in
    ``g.dims`` for the shape-taking importers all the same)."""
    fn = RULES.get(node.op_type)
    if fn is None:
        return False
    values = []
    if node.op_type != "Shape":  # Shape reads only its input's shape
        for name in node.input:
            v = _known(g, name) if name else None
            if name and v is not None and v.dtype.kind not in "biuO":
                return False
            if name and v is None and not fn.partial:
                return False
            values.append(v)
    out = fn(g, node, values)
    if out is None:
        return False
    outs = out if isinstance(out, list) else [out]
    folded = True
    for name, v in zip(node.output, outs):
        v = np.asarray(v)
        if _has_dim(v):
            g.dims[name] = v
            folded = False
        else:
            g.consts[name] = v.astype(np.int64) if v.dtype == object else v
    return folded


def _axes(g, node, values, key="axes"):
    if len(values) > 1 and values[1] is not None:
        return [int(a) for a in values[1]]
    return [int(a) for a in g.attrs(node).get(key, [])]


@rule("Shape")
def _shape(g, node, _):
    name = node.input[0]
    dims = g.partial.get(name)
    known = _known(g, name)
    if known is not None:
        dims = known.shape
    if dims is None:
        return None
    a = g.attrs(node)
    rank = len(dims)
    lo, hi = int(a.get("start", 0)), int(a.get("end", rank))
    out = [d if d is not None else Dim(name, i) for i, d in enumerate(dims)][lo:hi]
    return np.array(out, dtype=object if any(d is None for d in dims) else np.int64)


@rule("Size")
def _size(g, node, _):
    dims = g.partial.get(node.input[0])
    if dims is None or any(d is None for d in dims):
        return None
    return np.array(int(np.prod(dims)), np.int64)


@rule("Gather", partial=True)
def _gather(g, node, values):
    data, idx = values
    if idx is None or idx.dtype == object:
        return None
    if data is None:  # axes of Shape(t), t of unknown rank: the size of t's axis idx
        source = g.shape_of.get(node.input[0])
        if source is None or idx.size == 0 or idx.min() < 0:
            return None
        return np.array([Dim(source, int(i)) for i in idx.flat], object).reshape(idx.shape)
    return np.take(data, idx.astype(np.int64), axis=int(g.attrs(node).get("axis", 0)))


@rule("Unsqueeze")
def _unsqueeze(g, node, values):
    out = values[0]
    rank = out.ndim + len(_axes(g, node, values))
    for ax in sorted(a % rank for a in _axes(g, node, values)):
        out = np.expand_dims(out, ax)
    return out


@rule("Squeeze")
def _squeeze(g, node, values):
    axes = _axes(g, node, values)
    return np.squeeze(values[0], axis=tuple(axes) if axes else None)


@rule("Concat")
def _concat(g, node, values):
    dtype = object if any(v.dtype == object for v in values) else None
    values = [v.astype(dtype) if dtype else v for v in values]
    return np.concatenate(values, axis=int(g.attrs(node)["axis"]))


@rule("Slice")
def _slice(g, node, values):
    data = values[0]
    starts, ends = values[1], values[2]
    axes = values[3] if len(values) > 3 and values[3] is not None else range(len(starts))
    steps = values[4] if len(values) > 4 and values[4] is not None else [1] * len(starts)
    index = [slice(None)] * data.ndim
    for b, e, ax, st in zip(starts, ends, axes, steps):
        index[int(ax) % data.ndim] = slice(int(b), int(e), int(st))
    return data[tuple(index)]


@rule("Identity")
def _identity(g, node, values):
    return values[0]


@rule("Cast")
def _cast(g, node, values):
    from onnx import helper

    if values[0].dtype == object:  # a shape stays a shape
        return values[0]
    return values[0].astype(helper.tensor_dtype_to_np_dtype(g.attrs(node)["to"]))


def _int_div(a, b):  # ONNX's integer Div truncates
    return np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))


_ARITH = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": _int_div}


@rule(*_ARITH)
def _arith(g, node, values):
    if any(v.dtype == object for v in values):
        return None  # arithmetic on a size known only at run time: the importer's symbols
    return _ARITH[node.op_type](values[0], values[1]).astype(values[0].dtype)


@rule("Reshape")
def _reshape(g, node, values):
    data, shape = values
    if shape.dtype == object:
        return None
    if not g.attrs(node).get("allowzero", 0):  # 0 copies the data's axis
        shape = [d if d != 0 else data.shape[i] for i, d in enumerate(shape.tolist())]
    return data.reshape(shape)


@rule("ConstantOfShape")
def _constant_of_shape(g, node, values):
    from onnx import numpy_helper

    attr = next((x for x in node.attribute if x.name == "value"), None)
    if attr is None or values[0].dtype == object:
        return None  # float zeros, or a size known at run time: the importer's symbol
    fill = numpy_helper.to_array(attr.t).reshape(-1)
    if fill.dtype.kind not in "biu":
        return None
    return np.full(tuple(int(d) for d in values[0]), fill[0], fill.dtype)


def _equal(a, b):
    if isinstance(a, Dim) or isinstance(b, Dim):
        if a == b:
            return True
        other = b if isinstance(a, Dim) else a
        if isinstance(other, Dim) or other >= 0:
            raise _Unknown  # a size known only at run time against a possible size
        return False
    return a == b


class _Unknown(Exception):
    pass


@rule("Equal")
def _equal_rule(g, node, values):
    a, b = np.broadcast_arrays(*values)
    try:
        return np.array([_equal(x, y) for x, y in zip(a.flat, b.flat)], bool).reshape(a.shape)
    except _Unknown:
        return None


@rule("Where")
def _where(g, node, values):
    cond, x, y = values
    if cond.dtype != bool:
        return None
    out = np.where(cond, x, y)
    return out


# -- building symbols from shapes


def _entries(g, name, what):
    value = _known(g, name)
    if value is None:
        raise g.fail(
            f"{what} ('{name}') must be a constant, or computed from tensors' shapes "
            "(Shape, Gather, Slice, Concat, Unsqueeze...)"
        )
    if value.ndim != 1:
        raise g.fail(f"{what} ('{name}') of rank {value.ndim} (a 1-D shape)")
    return [e if isinstance(e, Dim) else int(e) for e in value.tolist()]


def _follow(g, x, dims, out_name):
    """Broadcast ``x``'s axes that are a :class:`Dim` in ``dims`` to those sizes."""
    run_time = [(i, d) for i, d in enumerate(dims) if isinstance(d, Dim)]
    for k, (i, d) in enumerate(run_time):
        name = out_name if k == len(run_time) - 1 else None
        x = S.broadcast_like(x, g.sym(d.tensor), lhs_axes=(i,), rhs_axes=(d.axis,), name=name)
    return x


def filled(g, name, value, dtype, out_name):
    """A tensor of the shape in ``name`` (constant or computed) filled with ``value``."""
    dims = _entries(g, name, "the shape")
    static = tuple(1 if isinstance(d, Dim) else d for d in dims)
    if static == tuple(dims):
        return S.full(shape=static, val=value, dtype=dtype, name=out_name)
    return _follow(g, S.full(shape=static, val=value, dtype=dtype), dims, out_name)


def reshape_target(g, data_name, name):
    """MXNet's reshape codes for the ONNX shape in ``name``: a run-time size becomes 0
    (the data's axis of the same place) or the one -1."""
    dims = _entries(g, name, "the target shape")
    out = []
    for i, d in enumerate(dims):
        if isinstance(d, Dim) and d.tensor == data_name and d.axis == i:
            out.append(0)
        else:
            out.append(d)
    free = [i for i, d in enumerate(out) if isinstance(d, Dim)]
    if free and (len(free) > 1 or -1 in out):
        raise g.fail(
            f"target shape {dims}: sizes known only when the graph runs must be the data's "
            "own axes at the same place, or one of them stands for -1"
        )
    return tuple(-1 if isinstance(d, Dim) else d for d in out)


def expand(g, x, rank, name, out_name):
    """ONNX's Expand of ``x`` (of rank ``rank``) to the shape in ``name``."""
    dims = _entries(g, name, "the shape")
    dims = [1] * (rank - len(dims)) + dims  # ONNX broadcasts from the last axis
    if len(dims) > rank:
        x = S.reshape(x, shape=(1,) * (len(dims) - rank) + (-2,))
    # ONNX's 1 keeps the input's axis, as MXNet's 0; sizes known at run time follow
    keep = tuple(0 if isinstance(d, Dim) or d == 1 else d for d in dims)
    if not any(isinstance(d, Dim) for d in dims):
        return S.broadcast_to(x, shape=keep, name=out_name)
    return _follow(g, S.broadcast_to(x, shape=keep), dims, out_name)
