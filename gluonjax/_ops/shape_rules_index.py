"""Partial shape rules of transpose, slice and slice_axis (see :mod:`.shape_rules`).

MXNet's slice shape functions leave an output dimension unknown wherever the input's
is unknown, whatever ``begin``/``end`` say (``slice(data=(0, 20), begin=(None, 3),
end=(5, 10))`` is ``(0, 7)``), so slice and slice_axis decide their outputs alone
(``replaces_forward``) instead of being probed. transpose maps dimensions both ways
(``transpose(ones((0, 0))) + ones((2, 3))`` gives the first ``(3, 2)``).
"""

from __future__ import annotations

from .shape_rules import ShapeConflict as _Conflict

__all__ = ["RULES", "REPLACES"]


def _perm(axes, ndim):
    if not axes:
        return tuple(range(ndim - 1, -1, -1))
    if len(axes) != ndim:
        raise _Conflict(f"transpose: axes {tuple(axes)} do not match a {ndim}-d input")
    perm = tuple(a + ndim if a < 0 else a for a in axes)
    if sorted(perm) != list(range(ndim)):
        raise _Conflict(f"transpose: axes {tuple(axes)} is not a permutation")
    return perm


def _transpose(attrs, names, ins, outs):
    """``out[i] = data[axes[i]]`` in both directions."""
    data, out = ins[0], outs[0]
    ref = data if data is not None else out
    if ref is None:
        return ins, outs
    perm = _perm(attrs["axes"], len(ref))
    new_out = tuple(data[p] for p in perm) if data is not None else None
    new_data = None
    if out is not None and len(out) == len(perm):
        back = [-1] * len(perm)
        for i, p in enumerate(perm):
            back[p] = out[i]
        new_data = tuple(back)
    return [new_data], [new_out]


def _slice_len(n, b, e, s, what):
    if s == 0:
        raise _Conflict(f"{what}: step cannot be 0")
    return len(range(*slice(b, e, s).indices(n)))


def _slice(attrs, names, ins, outs):
    """Python slice rules on each known dimension; unknown ones stay unknown."""
    data = ins[0]
    if data is None:
        return ins, outs
    begin, end, step = attrs["begin"], attrs["end"], attrs["step"]
    if len(begin) != len(end) or (step and len(step) != len(begin)):
        raise _Conflict(f"slice: begin {begin}, end {end} and step {step} differ in length")
    if len(begin) > len(data):
        raise _Conflict(f"slice: {len(begin)} slice entries for a {len(data)}-d input")
    steps = step or (None,) * len(begin)
    out = list(data)
    for k, (b, e, s) in enumerate(zip(begin, end, steps, strict=True)):
        out[k] = -1 if data[k] < 0 else _slice_len(data[k], b, e, s, "slice")
    return ins, [tuple(out)]


def _slice_axis(attrs, names, ins, outs):
    """``end - begin`` on the axis once its size is known (MXNet's checks)."""
    data = ins[0]
    if data is None:
        return ins, outs
    ndim, axis = len(data), attrs["axis"]
    if not -ndim <= axis < ndim:
        raise _Conflict(f"slice_axis: axis {axis} is out of range for a {ndim}-d input")
    ax = axis % ndim
    out = list(data)
    n = data[ax]
    if n >= 0:
        b, e = attrs["begin"], attrs["end"]
        b = b + n if b < 0 else b
        e = n if e is None else (e + n if e < 0 else e)
        if not 0 <= b < e <= n:
            raise _Conflict(
                f"slice_axis: invalid begin={attrs['begin']}, end={attrs['end']} for axis "
                f"{axis} of size {n}"
            )
        out[ax] = e - b
    return ins, [tuple(out)]


RULES = {"transpose": _transpose, "slice": _slice, "slice_axis": _slice_axis}
REPLACES = frozenset(("slice", "slice_axis"))
