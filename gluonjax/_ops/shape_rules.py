"""Partial shape rules: what MXNet's shape functions infer from incomplete shapes.

Symbol shape inference (:mod:`gluonjax.symbol._infer_graph`) computes output shapes
forward with ``jax.eval_shape`` of each op's implementation. That needs every input
shape. MXNet also fills in unknown dimensions from the other side of an op: from
its output back to its inputs (``a + b`` with ``a=(0, 10)``, ``b=(12, 0)`` gives
both ``(12, 10)``), which is what these rules add.

A rule is ``rule(attrs, names, ins, outs) -> (ins, outs)`` over partial shapes:
``None`` is an unknown shape, ``-1`` an unknown dimension. It returns what it can
infer (the caller merges that with what is known and reports conflicts), and may
raise :class:`ShapeConflict`. A rule marked ``replaces_forward`` also decides the
outputs alone (``where`` needs a fully known condition, as in MXNet).
"""

from __future__ import annotations

import math

from .defs.elemwise import SCALAR, UNARY

__all__ = ["ShapeConflict", "merge", "is_known", "rule_for", "is_creation", "attr_shape"]


class ShapeConflict(ValueError):
    """Two shapes that cannot describe the same array."""


def is_known(shape):
    """Whether ``shape`` is fully known (a tuple without -1)."""
    return shape is not None and all(d >= 0 for d in shape)


def merge(a, b):
    """The shape that both ``a`` and ``b`` describe (unknowns filled from the other)."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b):
        raise ShapeConflict(f"{tuple(a)} vs {tuple(b)} (different number of dimensions)")
    out = []
    for x, y in zip(a, b, strict=True):
        if x < 0:
            out.append(y)
        elif y < 0 or x == y:
            out.append(x)
        else:
            raise ShapeConflict(f"{tuple(a)} vs {tuple(b)}")
    return tuple(out)


def _merge_all(shapes):
    out = None
    for s in shapes:
        out = merge(out, s)
    return out


def same_shape(in_names=None, outputs=(0,)):
    """Rule: the named inputs (all when None) and the given outputs have one shape."""

    def rule(attrs, names, ins, outs):
        idx = [k for k, n in enumerate(names) if in_names is None or n in in_names]
        common = _merge_all([ins[k] for k in idx] + [outs[i] for i in outputs if i < len(outs)])
        ins, outs = list(ins), list(outs)
        for k in idx:
            ins[k] = common
        for i in outputs:
            if i < len(outs):
                outs[i] = common
        return ins, outs

    return rule


def _fully_connected(attrs, names, ins, outs):
    data, out = ins[0], outs[0]
    if out is None or data is None:
        return ins, outs
    data = list(data)
    if attrs["flatten"]:
        data[0] = out[0]
    elif len(out) == len(data):
        data[:-1] = out[:-1]
    return [tuple(data), *ins[1:]], outs


def _spatial_axes(layout, ndim):
    if layout and layout.index("C") == len(layout) - 1:
        return 0, list(range(1, ndim - 1))
    return 0, list(range(2, ndim))


def _convolution(attrs, names, ins, outs):
    """MXNet's back-calculation: the batch size always, a spatial size where stride is 1."""
    data, out = ins[0], outs[0]
    if data is None or out is None or len(data) != len(out):
        return ins, outs
    data = list(data)
    batch, spatial = _spatial_axes(attrs.get("layout"), len(data))
    data[batch] = out[batch]
    kernel = attrs["kernel"]
    stride = attrs["stride"] or (1,) * len(kernel)
    dilate = attrs["dilate"] or (1,) * len(kernel)
    pad = attrs["pad"] or (0,) * len(kernel)
    for i, ax in enumerate(spatial[: len(kernel)]):
        if out[ax] >= 0 and stride[i] == 1:
            data[ax] = out[ax] + dilate[i] * (kernel[i] - 1) - 2 * pad[i]
    return [tuple(data), *ins[1:]], outs


def _axis(axis, ndim):
    return axis + ndim if axis < 0 else axis


def _slice_channel(attrs, names, ins, outs):
    """Every output has one shape; the data is an output with the axis put back."""
    n, squeeze = attrs["num_outputs"], attrs["squeeze_axis"]
    data = ins[0]
    piece = _merge_all(outs)
    if data is not None:
        ax = _axis(attrs["axis"], len(data))
        fwd = list(data)
        if squeeze:
            del fwd[ax]
        else:
            fwd[ax] = data[ax] // n if data[ax] >= 0 else -1
        piece = merge(piece, tuple(fwd))
    if piece is not None:
        ndim = len(piece) + (1 if squeeze else 0)
        ax = _axis(attrs["axis"], ndim)
        back = list(piece)
        if squeeze:
            back.insert(ax, n)
        else:
            back[ax] = piece[ax] * n if piece[ax] >= 0 else -1
        data = merge(data, tuple(back))
    return [data], [piece] * len(outs)


def _concat(attrs, names, ins, outs):
    """MXNet's ConcatShape: all dims but the concat axis are shared; the output's axis
    is the sum once every input's is known."""
    shapes = [s for s in ins if s is not None]
    ref = shapes[0] if shapes else outs[0]
    if ref is None:
        return ins, outs
    ax = _axis(attrs["dim"], len(ref))
    common = None
    for s in [*ins, outs[0]]:
        if s is not None:
            masked = list(s)
            masked[ax] = -1
            common = merge(common, tuple(masked))
    new_ins = []
    for s in ins:
        full = list(common)
        if s is not None and len(s) == len(full):
            full[ax] = s[ax]
        new_ins.append(tuple(full))
    out = list(common)
    if all(s[ax] >= 0 for s in new_ins):
        out[ax] = sum(s[ax] for s in new_ins)
    return new_ins, [tuple(out)]


def _where(attrs, names, ins, outs):
    """MXNet's WhereOpShape: nothing is inferred until the condition is fully known."""
    cond, x, y = ins
    if not is_known(cond):
        return ins, outs
    t = _merge_all([x, y, outs[0]])
    if t is None:
        return ins, outs
    if len(cond) == len(t):
        t = merge(t, cond)
        return [t, t, t], [t]
    if len(cond) == 1 and t[0] >= 0 and cond[0] != t[0]:
        raise ShapeConflict(f"condition {cond} does not match the first dimension of {t}")
    return [cond, t, t], [t]


def _regression(attrs, names, ins, outs):
    common = _merge_all([ins[0], outs[0]])
    label = ins[1]
    if common is not None and label is not None and len(label) == len(common):
        common = merge(common, label)
        label = common
    return [common, label], [common]


_SAME_ALL = (
    *UNARY,
    *SCALAR,
    "elemwise_add",
    "elemwise_sub",
    "elemwise_mul",
    "elemwise_div",
    "_power",
    "_maximum",
    "_minimum",
    "_mod",
    "_hypot",
    "_equal",
    "_not_equal",
    "_greater",
    "_greater_equal",
    "_lesser",
    "_lesser_equal",
    "_logical_and",
    "_logical_or",
    "_logical_xor",
    "_grad_add",
    "add_n",
    "clip",
    "smooth_l1",
    "MakeLoss",
    "Cast",
    "amp_cast",
    "Activation",
    "L2Normalization",
    "LRN",
)
_SAME_DATA = (
    "LeakyReLU",
    "softmax",
    "log_softmax",
    "softmin",
    "SoftmaxActivation",
    "BatchNorm",
    "_contrib_BatchNormWithReLU",
    "_contrib_SyncBatchNorm",
    "LayerNorm",
    "InstanceNorm",
    "GroupNorm",
    "SoftmaxOutput",
    "SVMOutput",
)

_RULES: dict = {}


def _reshape(attrs, names, ins, outs):
    """MXNet's reverse reshape inference: one unknown input dimension is the output's
    size over the known input dimensions."""
    data, out = ins[0] if ins else None, outs[0] if outs else None
    if data is None or not is_known(out) or is_known(data):
        return ins, outs
    unknown = [k for k, d in enumerate(data) if d < 0]
    if len(unknown) != 1:
        return ins, outs
    known = math.prod(d for d in data if d >= 0)
    size = math.prod(out)
    if known == 0 or size % known:
        raise ShapeConflict(f"Reshape: output {tuple(out)} does not fit input {tuple(data)}")
    filled = list(data)
    filled[unknown[0]] = size // known
    return [tuple(filled), *ins[1:]], outs


_REPLACES = {"where"}


def _build():
    for n in _SAME_ALL:
        _RULES[n] = same_shape()
    _RULES["Dropout"] = same_shape(None, outputs=(0, 1))
    for n in _SAME_DATA:
        _RULES[n] = same_shape(("data",))
    for n in ("LinearRegressionOutput", "MAERegressionOutput", "LogisticRegressionOutput"):
        _RULES[n] = _regression
    _RULES.update(
        FullyConnected=_fully_connected,
        Convolution=_convolution,
        SliceChannel=_slice_channel,
        Concat=_concat,
        where=_where,
        Reshape=_reshape,
    )
    from .shape_rules_index import REPLACES, RULES  # transpose, slice, slice_axis

    _RULES.update(RULES)
    _REPLACES.update(REPLACES)


def attr_shape(shape):
    """A ``shape`` attribute as a partial shape: unknown dims are 0 (-1 under np_shape)."""
    from ..util import is_np_shape

    if shape is None:
        return None
    unknown = (lambda d: d < 0) if is_np_shape() else (lambda d: d <= 0)
    return tuple(-1 if unknown(d) else int(d) for d in shape)


def is_creation(op):
    """Whether ``op`` makes an array from its ``shape`` attribute alone (``_zeros``,
    ``_random_uniform``...): such a node may leave dimensions to shape inference."""
    return not callable(op.inputs) and not op.inputs and "shape" in op.attrs


def _creation(attrs, names, ins, outs):
    """MXNet's InitShape: the output is the ``shape`` attribute, whose unknown dims
    (0, or -1 under np_shape) come from the consumers of the output."""
    return ins, [attr_shape(attrs["shape"])]


def rule_for(op):
    """``(rule or None, replaces_forward)`` for registry op ``op``."""
    if not _RULES:
        _build()
    if is_creation(op):
        return _creation, True
    return _RULES.get(op.name), op.name in _REPLACES
