"""Shape manipulation: Reshape, transpose, expand_dims, squeeze, Concat, stack,
SliceChannel (split), tile, repeat, reverse (flip), SwapAxis, reshape_like,
depth_to_space, space_to_depth, shape_array, size_array.

Canonical names are MXNet's registered names (``Reshape``, ``SliceChannel``,
``reverse``, ``SwapAxis``), so symbol JSON matches MXNet; the lower-case
forms are aliases.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from ...base import ShapeError
from ..registry import Attr, register


def _axis(a, ndim, what="axis"):
    if not -ndim <= a < ndim:
        raise ValueError(f"{what} {a} is out of range for a {ndim}-d input")
    return a % ndim


def infer_reshape(dshape, codes, reverse=False):
    """The output shape of MXNet's ``Reshape`` for input ``dshape``.

    Codes: ``0`` copies an input dim, ``-1`` infers one dim, ``-2`` copies all
    remaining dims, ``-3`` merges two consecutive dims, ``-4 a b`` splits one dim
    into ``a*b`` (one of them may be -1). ``reverse`` applies the codes right to
    left.
    """
    dshape, codes = tuple(dshape), tuple(codes)
    if reverse:
        dshape, codes = dshape[::-1], codes[::-1]
    nd = len(dshape)
    out, src, inf, i = [], 0, -1, 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            if src >= nd:
                raise ValueError(f"code 0 at position {i} has no input dim to copy")
            out.append(dshape[src])
            src += 1
        elif c == -1:
            if inf >= 0:
                raise ValueError("only one dim can be inferred (-1)")
            inf = len(out)
            out.append(1)
            src += 1
        elif c == -2:
            out.extend(dshape[src:])
            src = nd
        elif c == -3:
            if src + 1 >= nd:
                raise ValueError(f"code -3 at position {i} needs two input dims to merge")
            out.append(dshape[src] * dshape[src + 1])
            src += 2
        elif c == -4:
            if i + 2 >= len(codes) or src >= nd:
                raise ValueError("code -4 must be followed by two dims and split an input dim")
            d0, d1, d2 = dshape[src], codes[i + 1], codes[i + 2]
            src += 1
            i += 2
            if d1 == -1 and d2 == -1:
                raise ValueError("the two dims after -4 cannot both be -1")
            if d1 == -1:
                d1 = d0 // d2 if d2 else 0
            elif d2 == -1:
                d2 = d0 // d1 if d1 else 0
            if d1 * d2 != d0:
                raise ValueError(f"-4 split dims {d1}, {d2} do not multiply to {d0}")
            out.extend((d1, d2))
        elif c > 0:
            out.append(c)
            src += 1
        else:
            raise ValueError(f"invalid shape code {c}")
        i += 1
    size = math.prod(dshape)
    if inf >= 0:
        known = math.prod(d for j, d in enumerate(out) if j != inf)
        if known == 0 or size % known:
            raise ValueError(f"cannot infer the -1 dim of {tuple(codes)} for input {dshape}")
        out[inf] = size // known
    if math.prod(out) != size:
        raise ValueError(f"cannot reshape input of shape {dshape} (size {size}) into {tuple(out)}")
    return tuple(out[::-1]) if reverse else tuple(out)


@register(
    "Reshape",
    attrs={
        "shape": Attr("shape", ()),
        "reverse": Attr("bool", False),
        "target_shape": Attr("shape", ()),
        "keep_highest": Attr("bool", False),
    },
    aliases=("reshape",),
)
def reshape(data, *, shape, reverse, target_shape, keep_highest):
    """Reshape with MXNet's special codes 0, -1, -2, -3, -4 (see ``infer_reshape``).

    ``target_shape``/``keep_highest`` are MXNet's deprecated form (a 0 there is inferred).
    """
    if not shape and target_shape:  # legacy form: a 0 entry is inferred
        shape = tuple(-1 if d == 0 else d for d in target_shape)
        if keep_highest:
            shape = (data.shape[0],) + shape
        reverse = False
    if not shape and data.size != 1:
        raise ValueError("Reshape needs a target shape")
    return data.reshape(infer_reshape(data.shape, shape, reverse) if shape else ())


@register("transpose", attrs={"axes": Attr("shape", ())})
def transpose(data, *, axes):
    """Permute the axes (default: reverse them)."""
    if not axes:
        return jnp.transpose(data)
    if len(axes) != data.ndim:
        raise ValueError(f"axes {axes} do not match a {data.ndim}-d input")
    perm = tuple(_axis(a, data.ndim, "axes entry") for a in axes)
    if sorted(perm) != list(range(data.ndim)):
        raise ValueError(f"axes {axes} is not a permutation")
    return jnp.transpose(data, perm)


@register("expand_dims", attrs={"axis": Attr("int")})
def expand_dims(data, *, axis):
    """Insert a size-1 axis at ``axis`` (in ``[-ndim-1, ndim]``)."""
    return jnp.expand_dims(data, _axis(axis, data.ndim + 1))


@register("squeeze", attrs={"axis": Attr("axis", None)})
def squeeze(data, *, axis):
    """Remove size-1 axes (all of them, or those in ``axis``); never returns 0-d."""
    if axis is None:
        axes = tuple(i for i, d in enumerate(data.shape) if d == 1)
    else:
        axes = tuple(_axis(a, data.ndim) for a in ((axis,) if isinstance(axis, int) else axis))
        for a in axes:
            if data.shape[a] != 1:
                raise ValueError(f"cannot squeeze axis {a} of size {data.shape[a]}")
    out = jnp.squeeze(data, axes)
    return out.reshape(1) if out.ndim == 0 else out


def _check_same(args, skip, what):
    first = args[0].shape
    for a in args[1:]:
        if a.ndim != len(first) or any(
            x != y for i, (x, y) in enumerate(zip(a.shape, first, strict=False)) if i != skip
        ):
            raise ValueError(f"{what}: incompatible input shapes {[x.shape for x in args]}")


@register(
    "Concat",
    variadic=True,
    attrs={"num_args": Attr("int"), "dim": Attr("int", 1)},
    aliases=("concat",),
)
def concat(*args, num_args, dim):
    """Join the inputs along the existing axis ``dim``."""
    if num_args != len(args):
        raise ValueError(f"num_args={num_args} but {len(args)} inputs were given")
    d = _axis(dim, args[0].ndim, "dim")
    _check_same(args, d, "Concat")
    return jnp.concatenate(args, axis=d)


@register("stack", variadic=True, attrs={"axis": Attr("int", 0), "num_args": Attr("int")})
def stack(*args, axis, num_args):
    """Join the (same-shape) inputs along a new axis ``axis``."""
    if num_args != len(args):
        raise ValueError(f"num_args={num_args} but {len(args)} inputs were given")
    _check_same(args, -1, "stack")
    return jnp.stack(args, axis=_axis(axis, args[0].ndim + 1))


@register(
    "SliceChannel",
    attrs={
        "num_outputs": Attr("int"),
        "axis": Attr("int", 1),
        "squeeze_axis": Attr("bool", False),
    },
    num_outputs=lambda a: a["num_outputs"],
    aliases=("split",),
)
def split(data, *, num_outputs, axis, squeeze_axis):
    """Split into ``num_outputs`` equal parts along ``axis`` (a list of arrays).

    ``squeeze_axis`` removes the axis (it must then have size ``num_outputs``).
    """
    ax = _axis(axis, data.ndim)
    if num_outputs <= 0 or data.shape[ax] % num_outputs:
        raise ValueError(
            f"cannot split axis {axis} of size {data.shape[ax]} into {num_outputs} equal parts"
        )
    parts = jnp.split(data, num_outputs, axis=ax)
    if squeeze_axis:
        if data.shape[ax] != num_outputs:
            raise ValueError("squeeze_axis needs the axis size to equal num_outputs")
        parts = [jnp.squeeze(p, ax) for p in parts]
    return tuple(parts) if num_outputs > 1 else parts[0]


def _tile_check(attrs, arrays):
    """Without np_shape, MXNet reads 0 dims as unknown: a 0 in ``reps`` or a zero-size
    input leaves tile's output shape unknown, and MXNet raises (eager calls)."""
    from ...util import is_np_shape

    reps = attrs["reps"]
    dshape = tuple(getattr(arrays[0], "shape", ()))
    if reps and not is_np_shape() and (0 in reps or 0 in dshape):
        raise ShapeError(
            f"tile: reps {tuple(reps)} on an input of shape {dshape} give a zero-size "
            "output, which needs np_shape (MXNet reads 0 dims as unknown); call it inside "
            "`with mx.np_shape(True):` or give positive reps"
        )


@register("tile", attrs={"reps": Attr("shape")}, check=_tile_check)
def tile(data, *, reps):
    """Repeat the whole array ``reps`` times along each axis (numpy.tile); ``reps``
    must be non-negative (0 only under np_shape)."""
    if any(r < 0 for r in reps):
        raise ValueError(f"reps {tuple(reps)} must be non-negative")
    return jnp.tile(data, reps)


@register("repeat", attrs={"repeats": Attr("int"), "axis": Attr("int?", None)})
def repeat(data, *, repeats, axis):
    """Repeat each element ``repeats`` times along ``axis`` (None: flattened)."""
    if repeats < 0:
        raise ValueError(f"repeats must be non-negative, got {repeats}")
    if axis is None:
        return jnp.repeat(data.reshape(-1), repeats)
    return jnp.repeat(data, repeats, axis=_axis(axis, data.ndim))


@register("reverse", attrs={"axis": Attr("shape")}, aliases=("flip",))
def reverse(data, *, axis):
    """Reverse the order of elements along the given axes."""
    return jnp.flip(data, tuple(_axis(a, data.ndim) for a in axis))


@register("SwapAxis", attrs={"dim1": Attr("int", 0), "dim2": Attr("int", 0)}, aliases=("swapaxes",))
def swapaxes(data, *, dim1, dim2):
    """Interchange axes ``dim1`` and ``dim2``."""
    return jnp.swapaxes(data, _axis(dim1, data.ndim, "dim1"), _axis(dim2, data.ndim, "dim2"))


def _span(begin, end, ndim):
    b = 0 if begin is None else (begin % ndim if ndim else 0)
    e = ndim if end is None else (end % ndim if end < 0 else end)
    if not (0 <= b <= e <= ndim):
        raise ValueError(f"invalid axis range [{begin}, {end}) for a {ndim}-d shape")
    return b, e


@register(
    "reshape_like",
    inputs=("lhs", "rhs"),
    attrs={k: Attr("int?", None) for k in ("lhs_begin", "lhs_end", "rhs_begin", "rhs_end")},
)
def reshape_like(lhs, rhs, *, lhs_begin, lhs_end, rhs_begin, rhs_end):
    """Reshape ``lhs`` so that dims [lhs_begin, lhs_end) become rhs's [rhs_begin, rhs_end)."""
    lb, le = _span(lhs_begin, lhs_end, lhs.ndim)
    rb, re = _span(rhs_begin, rhs_end, rhs.ndim)
    shape = lhs.shape[:lb] + rhs.shape[rb:re] + lhs.shape[le:]
    if math.prod(shape) != lhs.size:
        raise ValueError(f"cannot reshape {lhs.shape} into {shape}")
    return lhs.reshape(shape)


@register("shape_array")
def shape_array(data):
    """The shape as a 1-D int64 array (as MXNet)."""
    return jnp.asarray(data.shape, jnp.int64).reshape(-1)


@register("size_array")
def size_array(data):
    """The number of elements as a (1,) int64 array (as MXNet)."""
    return jnp.asarray([data.size], jnp.int64)


def _check4(data, block_size):
    if data.ndim != 4:
        raise ValueError(f"expects 4-d NCHW input, got shape {data.shape}")
    if block_size <= 0:
        raise ValueError(f"block_size must be positive, got {block_size}")
    if 0 in data.shape:
        raise ValueError(f"every dimension of the input must be non-zero, got {data.shape}")


@register("depth_to_space", attrs={"block_size": Attr("int")})
def depth_to_space(data, *, block_size):
    """Move depth blocks into space (NCHW, DCR order): (N, C*b*b, H, W) -> (N, C, H*b, W*b)."""
    _check4(data, block_size)
    n, c, h, w = data.shape
    b = block_size
    if c % (b * b):
        raise ValueError(f"channels {c} are not a multiple of block_size^2 = {b * b}")
    x = data.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return x.reshape(n, c // (b * b), h * b, w * b)


@register("space_to_depth", attrs={"block_size": Attr("int")})
def space_to_depth(data, *, block_size):
    """Inverse of depth_to_space: (N, C, H*b, W*b) -> (N, C*b*b, H, W)."""
    _check4(data, block_size)
    n, c, h, w = data.shape
    b = block_size
    if h % b or w % b:
        raise ValueError(f"height {h} and width {w} must be multiples of block_size {b}")
    x = data.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return x.reshape(n, c * b * b, h // b, w // b)
