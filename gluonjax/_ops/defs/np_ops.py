"""MXNet's NumPy-interface operators (``mx.np``, ``mx.npx``): one registry entry each.

Every entry is a registry op with MXNet 1.9.1's operator name (``_npi_add``, ``_np_sum``,
...) whose one implementation is the ``jax.numpy`` function of the same meaning, so an
``np`` call is eager op by op, recorded for autograd, traced under ``hybridize()`` and
exported like any ``nd`` op. Attributes are NumPy's keyword arguments (kind ``literal``:
numbers, tuples, ``None``, dtype names), with NumPy's names and defaults.

``NP_FUNCS`` maps each public ``mx.np`` name to its op; ``NP_BINARY`` the binary ufuncs to
their scalar forms. ``gluonjax.numpy`` generates its functions from these tables.
"""

from __future__ import annotations

import ast
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..attrs import dtype_of
from ..registry import Attr, register
from .getitem import build_index

__all__ = ["NP_FUNCS", "NP_BINARY", "np_dtype"]

NP_FUNCS: dict = {}  # public name (np.X, np.linalg.X) -> op name
NP_BINARY: dict = {}  # public name -> (op, scalar op, reversed scalar op)


def np_dtype(dt):
    """A NumPy dtype request as jax holds it (``None`` stays ``None``)."""
    if dt is None:
        return None
    return jax.dtypes.canonicalize_dtype(dtype_of(dt))


def _index_dtype():
    """NumPy's index type: int64 (int32 while jax's 64-bit types are off)."""
    return jax.dtypes.canonicalize_dtype(np.int64)


def _attrs(spec):
    out = {}
    for part in spec.split():
        name, _, default = part.partition("=")
        out[name] = Attr("literal?", ast.literal_eval(default) if default else None)
    return out


def _fix_dtype(kw):
    if kw.get("dtype") is not None:
        kw["dtype"] = np_dtype(kw["dtype"])
    return kw


def _def(public, op_name, fn, inputs=("a",), attrs="", **kw):
    """Register ``fn(*arrays, **attrs)`` as ``op_name``, public as ``mx.np.<public>``."""

    def impl(*arrays, **attrs_):
        return fn(*arrays, **_fix_dtype(attrs_))

    impl.__name__ = op_name
    register(
        op_name,
        inputs=inputs,
        attrs=_attrs(attrs),
        doc=kw.pop("doc", f"NumPy's ``{public}`` (``jax.numpy``), MXNet op ``{op_name}``."),
        **kw,
    )(impl)
    for p in public.split():
        NP_FUNCS[p] = op_name


# ----------------------------------------------------------------------------- unary ufuncs
_UNARY = (
    "negative reciprocal absolute:abs fabs sign rint ceil floor trunc fix square sqrt cbrt exp "
    "log log10 log2 log1p expm1 logical_not sin cos tan arcsin arccos arctan degrees radians "
    "rad2deg deg2rad sinh cosh tanh arcsinh arccosh arctanh isnan isinf isposinf isneginf "
    "isfinite bitwise_not:invert"
)


def _float32_for_ints(fn):
    """MXNet's rule for integer (and bool) inputs of a function with a float result: it is
    float32, the default dtype (jax would say float64 while its 64-bit types are on)."""

    def f(*xs):
        arrays = [x for x in xs if hasattr(x, "dtype") and not getattr(x, "weak_type", False)]
        if arrays and not any(jnp.issubdtype(x.dtype, jnp.inexact) for x in arrays):
            if jnp.issubdtype(jax.eval_shape(fn, *xs).dtype, jnp.inexact):
                xs = [
                    x.astype(jnp.float32)
                    if hasattr(x, "dtype") and not jnp.issubdtype(x.dtype, jnp.inexact)
                    else x
                    for x in xs
                ]
        return fn(*xs)

    f.__name__ = getattr(fn, "__name__", "f")
    return f


for _u in _UNARY.split():
    _name, _, _alias = _u.partition(":")
    _fn = _float32_for_ints(jnp.trunc if _name == "fix" else getattr(jnp, _name))
    if _name == "reciprocal":
        _fn = lambda x: jnp.reciprocal(
            x
            if jnp.issubdtype(x.dtype, jnp.inexact)
            # noqa: E731
            else x.astype(jnp.float32)
        )
    _def(
        f"{_name} {_alias}".strip(),
        f"_npi_{_name}",
        _fn,
        inputs=("x",),
        bucket="map"
        if _name
        not in (
            "isnan",
            "isinf",
            "isposinf",
            "isneginf",
            "isfinite",
            "logical_not",
            "bitwise_not",
            "sign",
            "fix",
            "rint",
            "reciprocal",
            "cbrt",
        )
        else None,
    )


# ----------------------------------------------------------------------------- binary ufuncs
def _true_divide(a, b):
    return jnp.true_divide(a, b)


def _magnitude_bits(x):
    """The bits of ``x`` without its sign bit: nonzero exactly when ``x`` is, denormals
    included (XLA:CPU flushes denormals to zero in arithmetic and comparisons)."""
    ints = {2: jnp.uint16, 4: jnp.uint32, 8: jnp.uint64}[x.dtype.itemsize]
    return lax.bitcast_convert_type(x, ints) & ints((1 << (8 * x.dtype.itemsize - 1)) - 1)


def _remainder(a, b):
    """NumPy's ``remainder`` (sign of the divisor). For floats the sign test reads the bits,
    so a denormal remainder is moved into the divisor's range as NumPy does (jax's
    comparison sees it as zero under flush-to-zero: ``remainder(-1e-45, 1)`` gave -1e-45)."""
    r = jnp.fmod(a, b)
    if not jnp.issubdtype(r.dtype, jnp.floating):
        return jnp.remainder(a, b)
    a, b = jnp.asarray(a).astype(r.dtype), jnp.asarray(b).astype(r.dtype)
    nonzero = _magnitude_bits(r) != 0
    flip = nonzero & (jnp.signbit(r) != jnp.signbit(b))
    out = jnp.where(flip, r + b, jnp.where(nonzero, r, jnp.copysign(jnp.zeros_like(r), b)))
    # a denormal dividend reads as zero in fmod; NumPy's a + b is b when the signs differ
    # (integer tests only: LLVM folds a float ``a == 0`` against the bit test)
    mag = _magnitude_bits(a)
    smallest_normal = mag.dtype.type(1 << jnp.finfo(a.dtype).nmant)
    tiny = (mag != 0) & (mag < smallest_normal) & (jnp.signbit(a) != jnp.signbit(b))
    return jnp.where(tiny, b, out)


_BINARY = {
    "add": jnp.add,
    "subtract": jnp.subtract,
    "multiply": jnp.multiply,
    "true_divide": _true_divide,
    "mod": _remainder,
    "power": jnp.power,
    "maximum": jnp.maximum,
    "minimum": jnp.minimum,
    "fmax": jnp.fmax,
    "fmin": jnp.fmin,
    "fmod": jnp.fmod,
    "hypot": jnp.hypot,
    "arctan2": jnp.arctan2,
    "copysign": jnp.copysign,
    "ldexp": lambda a, b: jnp.ldexp(a, b.astype(jnp.int32)),
    "lcm": jnp.lcm,
    "gcd": jnp.gcd,
    "bitwise_and": jnp.bitwise_and,
    "bitwise_or": jnp.bitwise_or,
    "bitwise_xor": jnp.bitwise_xor,
    "logical_and": jnp.logical_and,
    "logical_or": jnp.logical_or,
    "logical_xor": jnp.logical_xor,
    "equal": jnp.equal,
    "not_equal": jnp.not_equal,
    "greater": jnp.greater,
    "less": jnp.less,
    "greater_equal": jnp.greater_equal,
    "less_equal": jnp.less_equal,
}
_BINARY_ALIASES = {"true_divide": "divide", "mod": "remainder"}


def _scalar_fn(fn, reverse):
    fn = _float32_for_ints(fn)
    if reverse:
        return lambda a, scalar: fn(scalar, a)
    return lambda a, scalar: fn(a, scalar)


for _name, _fn in _BINARY.items():
    _public = f"{_name} {_BINARY_ALIASES.get(_name, '')}".strip()
    _int_vjp = _name not in ("mod", "fmod")  # MXNet: integer mod has zero gradients
    _def(_public, f"_npi_{_name}", _float32_for_ints(_fn), inputs=("lhs", "rhs"), int_vjp=_int_vjp)
    for _rev in (False, True):
        _op = f"_npi_r{_name}_scalar" if _rev else f"_npi_{_name}_scalar"
        register(
            _op,
            inputs=("data",),
            attrs={"scalar": Attr("number", static=False)},
            int_vjp=_int_vjp,
            doc=f"``{_name}`` with a Python scalar {'on the left' if _rev else 'on the right'}.",
        )(_scalar_fn(_fn, _rev))
    for _p in _public.split():
        NP_BINARY[_p] = (f"_npi_{_name}", f"_npi_{_name}_scalar", f"_npi_r{_name}_scalar")


# ----------------------------------------------------------------------------- reductions
def _reduce(fn):
    def f(a, axis=None, dtype=None, keepdims=False, **kw):
        return fn(a, axis=axis, dtype=dtype, keepdims=keepdims, **kw)

    return f


def _acc(dt):
    """The accumulation type of a float reduction: MXNet sums float16 in float32."""
    return jnp.float32 if dt in (jnp.float16, jnp.bfloat16) else dt


def _sum(a, axis=None, dtype=None, keepdims=False, initial=None):
    if dtype is None and a.dtype == jnp.bool_:
        dtype = _index_dtype()
    if jnp.issubdtype(a.dtype, jnp.inexact):
        out = jnp.sum(a.astype(_acc(a.dtype)), axis=axis, keepdims=keepdims)
        out = out.astype(dtype or a.dtype)
    else:
        out = jnp.sum(a, axis=axis, dtype=dtype, keepdims=keepdims)
    return out if initial is None else out + initial


def _mean(a, axis=None, dtype=None, keepdims=False):
    if dtype is not None and not jnp.issubdtype(a.dtype, jnp.inexact):
        dt = np.dtype(dtype)
        if not np.issubdtype(dt, np.inexact):  # NumPy and MXNet: the sum wraps in ``dtype``
            axes = range(a.ndim) if axis is None else np.atleast_1d(axis).tolist()
            count = math.prod(a.shape[i] for i in axes)
            total = jnp.sum(a.astype(dt), axis=axis, keepdims=keepdims, dtype=dt)
            return (total / max(count, 1)).astype(dt)
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        a = a.astype(jnp.float32)
    out = jnp.mean(a.astype(_acc(a.dtype)), axis=axis, keepdims=keepdims)
    return out.astype(dtype or a.dtype)


def _minmax(fn):
    def f(a, axis=None, keepdims=False, initial=None):
        if a.size == 0 and initial is None:
            raise ValueError("zero-size array to reduction operation which has no identity")
        return fn(a, axis=axis, keepdims=keepdims, initial=initial)

    return f


_def("sum", "_np_sum", _sum, attrs="axis dtype keepdims=False initial")
_def(
    "prod",
    "_np_prod",
    lambda a, axis=None, dtype=None, keepdims=False, initial=None: jnp.prod(
        a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial
    ),
    attrs="axis dtype keepdims=False initial",
)
_def("mean", "_npi_mean", _mean, attrs="axis dtype keepdims=False")
_def("max amax", "_np_max", _minmax(jnp.max), attrs="axis keepdims=False initial")
_def("min amin", "_np_min", _minmax(jnp.min), attrs="axis keepdims=False initial")
_def(
    "all",
    "_np_all",
    lambda a, axis=None, keepdims=False: jnp.all(a, axis, keepdims=keepdims),
    attrs="axis keepdims=False",
)
_def(
    "any",
    "_np_any",
    lambda a, axis=None, keepdims=False: jnp.any(a, axis, keepdims=keepdims),
    attrs="axis keepdims=False",
)
for _n, _f in (("std", jnp.std), ("var", jnp.var)):
    _def(
        _n,
        f"_npi_{_n}",
        lambda a, axis=None, dtype=None, ddof=0, keepdims=False, _f=_f: _f(
            a if jnp.issubdtype(a.dtype, jnp.inexact) else a.astype(jnp.float32),
            axis=axis,
            dtype=dtype,
            ddof=ddof,
            keepdims=keepdims,
        ),
        attrs="axis dtype ddof=0 keepdims=False",
    )


def _arg(fn):
    def f(a, axis=None, keepdims=False):
        if a.ndim == 0:  # MXNet: the index of a 0-d array's only element
            if axis not in (None, 0, -1):
                raise ValueError(f"axis {axis} is out of bounds for a 0-d array")
            return jnp.zeros((), _index_dtype())
        return fn(a, axis=axis, keepdims=keepdims).astype(_index_dtype())

    return f


_def("argmax", "_npi_argmax", _arg(jnp.argmax), attrs="axis keepdims=False")
_def("argmin", "_npi_argmin", _arg(jnp.argmin), attrs="axis keepdims=False")
_def(
    "nansum",
    "_np_nansum",
    lambda a, axis=None, dtype=None, keepdims=False: jnp.nansum(
        a, axis=axis, dtype=dtype, keepdims=keepdims
    ),
    attrs="axis dtype keepdims=False",
)
_def(
    "nanprod",
    "_np_nanprod",
    lambda a, axis=None, dtype=None, keepdims=False: jnp.nanprod(
        a, axis=axis, dtype=dtype, keepdims=keepdims
    ),
    attrs="axis dtype keepdims=False",
)
NP_FUNCS["cumsum"] = "_np_cumsum"  # the nd op (ndmisc): one registry entry
_def(
    "cumprod",
    "_np_cumprod",
    lambda a, axis=None, dtype=None: jnp.cumprod(a, axis=axis, dtype=dtype),
    attrs="axis dtype",
)


def _average(a, weights=None, axis=None, returned=False):
    if weights is None:
        avg = jnp.mean(a if jnp.issubdtype(a.dtype, jnp.inexact) else a.astype(jnp.float32), axis)
        n = jnp.asarray(
            a.size
            if axis is None
            else np.prod([a.shape[i] for i in (axis if isinstance(axis, tuple) else (axis,))]),
            avg.dtype,
        )
        return (avg, jnp.broadcast_to(n, avg.shape)) if returned else avg
    out = jnp.average(a, axis=axis, weights=weights, returned=returned)
    return tuple(out) if returned else out


register(
    "_npi_average",
    inputs=("a", "weights"),
    attrs=_attrs("axis returned=False"),
    num_outputs=lambda at: 2 if at["returned"] else 1,
    doc="NumPy's ``average`` with weights.",
)(lambda a, w, axis=None, returned=False: _average(a, w, axis, returned))
register(
    "_npi_average_unweighted",
    inputs=("a",),
    attrs=_attrs("axis returned=False"),
    num_outputs=lambda at: 2 if at["returned"] else 1,
    doc="NumPy's ``average`` without weights.",
)(lambda a, axis=None, returned=False: _average(a, None, axis, returned))


# ----------------------------------------------------------------------------- shapes
def _reshape(a, newshape=None, order="C", reverse=False):
    return jnp.reshape(a, newshape, order=order)


_def("reshape", "_np_reshape", _reshape, attrs="newshape order='C' reverse=False")
_def("transpose", "_np_transpose", lambda a, axes=None: jnp.transpose(a, axes), attrs="axes")
_def(
    "swapaxes",
    "_npi_swapaxes",
    lambda a, axis1=0, axis2=0: jnp.swapaxes(a, axis1, axis2),
    attrs="axis1=0 axis2=0",
)
_def(
    "moveaxis",
    "_np_moveaxis",
    lambda a, source=0, destination=0: jnp.moveaxis(a, source, destination),
    attrs="source=0 destination=0",
)
_def("expand_dims", "_npi_expand_dims", lambda a, axis=0: jnp.expand_dims(a, axis), attrs="axis=0")
_def(
    "squeeze",
    "_np_squeeze",
    lambda a, axis=None: a if a.ndim == 0 else jnp.squeeze(a, axis),
    attrs="axis",
)
_def("ravel", "_npi_ravel", lambda a, order="C": jnp.ravel(a, order), attrs="order='C'")


def _broadcast_to(a, shape=()):
    """NumPy's ``broadcast_to``; MXNet's ``-2`` in ``shape`` copies the input's axis there
    (the axes aligned from the right)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if -2 in shape:
        off = len(shape) - a.ndim
        if off < 0 or any(s == -2 for s in shape[:off]):
            raise ValueError(
                f"broadcast_to: -2 in shape {shape} must stand where the input of shape "
                f"{a.shape} has an axis (aligned from the right)"
            )
        shape = tuple(a.shape[i - off] if s == -2 else s for i, s in enumerate(shape))
    return jnp.broadcast_to(a, shape)


_def("broadcast_to", "_npi_broadcast_to", _broadcast_to, attrs="shape=()")
_def("tile", "_npi_tile", lambda a, reps=(): jnp.tile(a, reps), attrs="reps=()")
_def(
    "repeat",
    "_np_repeat",
    lambda a, repeats=1, axis=None: jnp.repeat(a, repeats, axis),
    attrs="repeats=1 axis",
)
_def("flip", "_npi_flip", lambda a, axis=None: jnp.flip(a, axis), attrs="axis")
_def("flipud", "_npi_flipud", jnp.flipud)
_def("fliplr", "_npi_fliplr", jnp.fliplr)
_def(
    "roll", "_np_roll", lambda a, shift=0, axis=None: jnp.roll(a, shift, axis), attrs="shift=0 axis"
)
_def(
    "rot90", "_npi_rot90", lambda a, k=1, axes=(0, 1): jnp.rot90(a, k, axes), attrs="k=1 axes=(0,1)"
)
_def("diag", "_np_diag", lambda a, k=0: jnp.diag(a, k), attrs="k=0")
_def("diagflat", "_np_diagflat", lambda a, k=0: jnp.diagflat(a, k), attrs="k=0")
_def(
    "diagonal",
    "_np_diagonal",
    lambda a, offset=0, axis1=0, axis2=1: jnp.diagonal(a, offset, axis1, axis2),
    attrs="offset=0 axis1=0 axis2=1",
)
_def(
    "trace",
    "_np_trace",
    lambda a, offset=0, axis1=0, axis2=1, dtype=None: jnp.trace(a, offset, axis1, axis2, dtype),
    attrs="offset=0 axis1=0 axis2=1 dtype",
)


def _tri(fn):
    def f(a, k=0):
        if a.ndim == 1:  # NumPy: a 1-d input is broadcast to a square first
            a = jnp.broadcast_to(a, (a.shape[0], a.shape[0]))
        return fn(a, k)

    return f


_def("tril", "_npi_tril", _tri(jnp.tril), attrs="k=0")
_def("triu", "_npi_triu", _tri(jnp.triu), attrs="k=0")
_def("resize", "_np_resize", lambda a, new_shape=(): jnp.resize(a, new_shape), attrs="new_shape=()")
_def("copy", "_np_copy", lambda a: jnp.array(a, copy=True))


def _pad(a, pad_width=(), mode="constant", constant_values=0, reflect_type="even"):
    if mode == "constant":
        return jnp.pad(a, pad_width, mode, constant_values=constant_values)
    if mode in ("reflect", "symmetric"):
        return jnp.pad(a, pad_width, mode, reflect_type=reflect_type)
    return jnp.pad(a, pad_width, mode)


_def(
    "pad",
    "_npi_pad",
    _pad,
    attrs="pad_width=() mode='constant' constant_values=0 reflect_type='even'",
)


# ----------------------------------------------------------------------------- joining
def _variadic(public, op_name, fn, attrs=""):
    _def(
        public,
        op_name,
        lambda *arrays, num_args=None, **kw: fn(list(arrays), **kw),
        inputs=(),
        attrs=f"num_args {attrs}",
        variadic=True,
    )


_variadic(
    "concatenate",
    "_npi_concatenate",
    lambda xs, axis=0: (
        jnp.concatenate(xs, axis=axis)
        if axis is not None
        else jnp.concatenate([x.ravel() for x in xs])
    ),
    "axis=0",
)
_variadic("stack", "_npi_stack", lambda xs, axis=0: jnp.stack(xs, axis), "axis=0")
_variadic("vstack row_stack", "_npi_vstack", jnp.vstack)
_variadic("hstack", "_npi_hstack", jnp.hstack)
_variadic("dstack", "_npi_dstack", jnp.dstack)
_variadic("column_stack", "_npi_column_stack", jnp.column_stack)
_variadic(
    "einsum",
    "_npi_einsum",
    lambda xs, subscripts="", optimize=False: jnp.einsum(subscripts, *xs),
    "subscripts='' optimize=False",
)


def _n_split(at):
    s = at["indices_or_sections"]
    return s if isinstance(s, int) else len(s) + 1


def _split(strict):
    """NumPy's ``split`` (``strict``: equal sections) / ``array_split``: boundaries are
    clamped to the axis, so indices past its end give empty pieces, as NumPy's do."""

    def f(a, indices_or_sections=1, axis=0):
        n = a.shape[axis]
        s = indices_or_sections
        if isinstance(s, int):
            if s <= 0:
                raise ValueError("number sections must be larger than 0")
            if strict and n % s:
                raise ValueError("array split does not result in an equal division")
            q, r = divmod(n, s)
            bounds = [0]
            for z in [q + 1] * r + [q] * (s - r):
                bounds.append(bounds[-1] + z)
        else:
            bounds = [0] + [min(max(i if i >= 0 else i + n, 0), n) for i in s] + [n]
        return tuple(
            jax.lax.slice_in_dim(a, lo, max(lo, hi), axis=axis)
            for lo, hi in zip(bounds[:-1], bounds[1:])
        )

    return f


for _n, _strict in (("split", True), ("array_split", False)):
    register(
        f"_npi_{_n}",
        inputs=("a",),
        attrs=_attrs("indices_or_sections=1 axis=0"),
        num_outputs=_n_split,
        doc=f"NumPy's ``{_n}``.",
    )(_split(_strict))
    NP_FUNCS[_n] = f"_npi_{_n}"


# ----------------------------------------------------------------------------- products
def _np_dot_infer(attrs, shapes):
    """``b``'s contracted axis from ``a``'s (Gluon's deferred ``x.dot(w)`` in NumPy mode)."""
    a, b = shapes["a"], shapes.get("b")
    if b is None or not a:
        return {}
    return {"b": (a[-1],) if len(b) == 1 else tuple(b[:-2]) + (a[-1], b[-1])}


_def("dot", "_np_dot", jnp.dot, inputs=("a", "b"), infer_args=_np_dot_infer)
_def("vdot", "_np_vdot", jnp.vdot, inputs=("a", "b"))
_def("inner", "_np_inner", jnp.inner, inputs=("a", "b"))
_def("outer", "_np_outer", jnp.outer, inputs=("a", "b"))
_def("matmul", "_npi_matmul", jnp.matmul, inputs=("a", "b"))
_def("kron", "_npi_kron", jnp.kron, inputs=("a", "b"))
_def(
    "cross",
    "_npi_cross",
    lambda a, b, axisa=-1, axisb=-1, axisc=-1, axis=None: jnp.cross(
        a, b, axisa, axisb, axisc, axis
    ),
    inputs=("a", "b"),
    attrs="axisa=-1 axisb=-1 axisc=-1 axis",
)
_def(
    "tensordot",
    "_npi_tensordot",
    lambda a, b, axes=2: jnp.tensordot(a, b, axes),
    inputs=("a", "b"),
    attrs="axes=2",
)


# ----------------------------------------------------------------------------- misc
def _round(a, decimals=0):
    if decimals < 0 and not jnp.issubdtype(a.dtype, jnp.inexact):  # NumPy's integer rounding
        f = 10 ** (-decimals)
        return (jnp.round(a.astype(jnp.float32) / f) * f).astype(a.dtype)
    return jnp.round(a, decimals)


def _clip(a, a_min=None, a_max=None):
    if jnp.issubdtype(a.dtype, jnp.integer):  # a bound beyond the type's range clips nothing
        info = jnp.iinfo(a.dtype)
        if isinstance(a_min, (int, float)) and a_min < info.min:
            a_min = None
        if isinstance(a_max, (int, float)) and a_max > info.max:
            a_max = None
    return jnp.clip(a, a_min, a_max)


_def("clip", "_npi_clip", _clip, attrs="a_min a_max")
_def(
    "around round round_",
    "_npi_around",
    lambda a, decimals=0: _round(a, decimals),
    attrs="decimals=0",
)
_def(
    "nan_to_num",
    "_npi_nan_to_num",
    lambda a, copy=True, nan=0.0, posinf=None, neginf=None: jnp.nan_to_num(
        a, copy, nan, posinf, neginf
    ),
    attrs="copy=True nan=0.0 posinf neginf",
)
_def("where", "_npi_where", jnp.where, inputs=("condition", "x", "y"))
_def(
    "take",
    "_npi_take",
    lambda a, indices, axis=None, mode="raise": jnp.take(
        a, indices.astype(jnp.int32), axis, mode="wrap" if mode == "wrap" else "clip"
    ),
    inputs=("a", "indices"),
    attrs="axis mode='raise'",
)
_def(
    "sort",
    "_npi_sort",
    lambda a, axis=-1, kind=None, order=None: jnp.sort(a, axis),
    attrs="axis=-1 kind order",
)
_def(
    "argsort",
    "_npi_argsort",
    lambda a, axis=-1, kind=None, order=None, dtype=None: jnp.argsort(
        a.reshape(1) if a.ndim == 0 else a, axis
    ).astype(dtype or _index_dtype()),
    attrs="axis=-1 kind order dtype",
)
_def("diff", "_npi_diff", lambda a, n=1, axis=-1: jnp.diff(a, n, axis), attrs="n=1 axis=-1")
_def("ediff1d", "_npi_ediff1d", lambda a: jnp.diff(a.ravel()))
_def("polyval", "_npi_polyval", lambda p, x: jnp.polyval(p, x), inputs=("p", "x"))
_def(
    "searchsorted",
    "_npi_searchsorted",
    lambda a, v, side="left": jnp.searchsorted(a, v, side).astype(jnp.int32),
    inputs=("a", "v"),
    attrs="side='left'",
)
_def(
    "interp",
    "_npi_interp",
    lambda x, xp, fp, left=None, right=None: jnp.interp(x, xp, fp, left, right),
    inputs=("x", "xp", "fp"),
    attrs="left right",
)
_def(
    "percentile",
    "_npi_percentile",
    lambda a, q, axis=None, interpolation="linear", keepdims=False: jnp.percentile(
        a, q, axis, method=interpolation, keepdims=keepdims
    ),
    inputs=("a", "q"),
    attrs="axis interpolation='linear' keepdims=False",
)
_def(
    "quantile",
    "_npi_quantile",
    lambda a, q, axis=None, interpolation="linear", keepdims=False: jnp.quantile(
        a, q, axis, method=interpolation, keepdims=keepdims
    ),
    inputs=("a", "q"),
    attrs="axis interpolation='linear' keepdims=False",
)
_def(
    "median",
    "_npi_median",
    lambda a, axis=None, keepdims=False: jnp.median(a, axis, keepdims=keepdims),
    attrs="axis keepdims=False",
)
_def(
    "cov",
    "_npi_cov",
    lambda m, rowvar=True, bias=False, ddof=None: jnp.cov(m, rowvar=rowvar, bias=bias, ddof=ddof),
    inputs=("m",),
    attrs="rowvar=True bias=False ddof",
)
_def(
    "corrcoef",
    "_npi_corrcoef",
    lambda x, rowvar=True: jnp.corrcoef(x, rowvar=rowvar),
    inputs=("x",),
    attrs="rowvar=True",
)


# ----------------------------------------------------------------------------- indexing
@register("_npi_getitem", variadic=True, attrs={"key": Attr("literal?", ())})
def np_getitem(data, *index, key):
    """``data[key]`` with NumPy's semantics (an integer index removes its axis)."""
    from ..bounds import check_key

    check_key(key, data.shape, "ndarray[...]")
    return data[build_index(key, index)]


@register("_npi_setitem", variadic=True, attrs={"key": Attr("literal?", ())})
def np_setitem(data, value, *index, key):
    """A copy of ``data`` with ``data[key] = value`` (NumPy's broadcasting and casting)."""
    from ..bounds import check_key

    check_key(key, data.shape, "ndarray[...] = value")
    idx = build_index(key, index)
    value = jnp.asarray(value).astype(data.dtype)
    extra = value.ndim - jax.eval_shape(lambda d: d[idx], data).ndim
    if extra > 0 and all(d == 1 for d in value.shape[:extra]):  # NumPy drops leading ones
        value = value.reshape(value.shape[extra:])
    return data.at[idx].set(value)


# ----------------------------------------------------------------------------- linalg
def _norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    if isinstance(ord, str) and ord in ("inf", "-inf"):  # MXNet accepts these strings
        ord = float(ord)  # noqa: A001
    return jnp.linalg.norm(x, ord, axis, keepdims)


_def("linalg.norm", "_npi_norm", _norm, inputs=("x",), attrs="ord axis keepdims=False")
for _n in ("cholesky", "inv", "det", "eigvals", "matrix_rank"):
    _def(f"linalg.{_n}", f"_npi_{_n}", getattr(jnp.linalg, _n), inputs=("A",))
_def(
    "linalg.pinv",
    "_npi_pinv_scalar_rcond",
    lambda a, rcond=1e-15, hermitian=False: jnp.linalg.pinv(a, rtol=rcond, hermitian=hermitian),
    inputs=("A",),
    attrs="rcond=1e-15 hermitian=False",
)


@register(
    "_npi_pinv",
    inputs=("A", "rcond"),
    attrs=_attrs("hermitian=False"),
    doc="NumPy's ``linalg.pinv`` with an array ``rcond`` (broadcast over the stack).",
)
def _pinv_array_rcond(a, rcond, hermitian=False):
    # NumPy's steps (jax's pinv takes its tolerance as a static argument, not a traced one);
    # a Hermitian matrix's SVD is its eigendecomposition, so ``hermitian`` changes nothing
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    cutoff = jnp.asarray(rcond, s.dtype)[..., None] * jnp.max(s, axis=-1, keepdims=True)
    s_inv = jnp.where(s > cutoff, 1.0 / jnp.where(s > cutoff, s, 1.0), 0.0)
    return jnp.swapaxes(vh, -1, -2) @ (s_inv[..., None] * jnp.swapaxes(u, -1, -2))


# NumPy reads one triangle only (jax would symmetrize the input first)
_def(
    "linalg.eigvalsh",
    "_npi_eigvalsh",
    lambda a, UPLO="L": jnp.linalg.eigh(a, UPLO, symmetrize_input=False)[0],
    inputs=("A",),
    attrs="UPLO='L'",
)
_def(
    "linalg.tensorinv",
    "_npi_tensorinv",
    lambda a, ind=2: jnp.linalg.tensorinv(a, ind),
    attrs="ind=2",
)


def _solve(a, b):
    """MXNet's (NumPy 1.x's) ``solve``: ``b`` with one axis fewer than ``a`` is a stack of
    vectors (jax and NumPy 2 read it as one matrix)."""
    if b.ndim == a.ndim - 1 and b.ndim > 1:
        return jnp.linalg.solve(a, b[..., None])[..., 0]
    return jnp.linalg.solve(a, b)


def _tensorsolve(a, b, axes=None):
    """NumPy's ``tensorsolve`` step by step (its shapes where jax differs: ``a.ndim ==
    b.ndim`` gives ``a.shape[-0:]``, all of ``a``'s shape; a 0-d ``a`` solves 1x1)."""
    if axes is not None:
        order = list(range(a.ndim))
        for k in axes:
            order.remove(k % a.ndim)
            order.append(k % a.ndim)
        a = a.transpose(order)
    shape = a.shape[-(a.ndim - b.ndim) :]
    n = math.prod(shape)
    if a.size != n * n or b.size != n:
        raise ValueError(
            f"tensorsolve: a of shape {a.shape} is not square over b of shape {b.shape}"
        )
    return jnp.linalg.solve(a.reshape(n, n), b.reshape(n)).reshape(shape)


_def("linalg.solve", "_npi_solve", _solve, inputs=("A", "B"))
_def(
    "linalg.tensorsolve",
    "_npi_tensorsolve",
    _tensorsolve,
    inputs=("a", "b"),
    attrs="axes",
)


def _svd(a):
    """MXNet's ``linalg.svd``: ``(ut, l, v)`` with ``a = ut @ diag(l) @ v`` (reduced)."""
    return tuple(jnp.linalg.svd(a, full_matrices=False))


for _n, _k in (("slogdet", 2), ("eigh", 2), ("eig", 2), ("qr", 2), ("svd", 3)):
    register(
        f"_npi_{_n}",
        inputs=("A",),
        attrs=_attrs("UPLO='L'" if _n == "eigh" else ""),
        num_outputs=_k,
        doc=f"NumPy's ``linalg.{_n}``.",
    )(
        (lambda a, UPLO="L": tuple(jnp.linalg.eigh(a, UPLO, symmetrize_input=False)))
        if _n == "eigh"
        else (_svd if _n == "svd" else (lambda a, _f=getattr(jnp.linalg, _n): tuple(_f(a))))
    )
    NP_FUNCS[f"linalg.{_n}"] = f"_npi_{_n}"


# ----------------------------------------------------------------------------- random
def _sampler(draw):
    def impl(key, *params, size=None, dtype=None):
        dt = dtype or jnp.float32
        shape = (
            tuple(size) if size is not None else jnp.broadcast_shapes(*(p.shape for p in params))
        )
        ps = [jnp.asarray(p, dt) for p in params]
        return draw(key, shape, dt, *ps)

    return impl


def _gamma(key, shape, dt, k, theta):
    return jax.random.gamma(key, jnp.broadcast_to(k, shape), shape, dt) * theta


def _beta(key, s, dt, a, b):
    return jax.random.beta(key, jnp.broadcast_to(a, s), jnp.broadcast_to(b, s), s, dt)


_SAMPLERS = {
    "uniform": (
        ("low", "high"),
        lambda key, s, dt, lo, hi: lo + (hi - lo) * jax.random.uniform(key, s, dt),
    ),
    "normal": (
        ("loc", "scale"),
        lambda key, s, dt, mu, sd: mu + sd * jax.random.normal(key, s, dt),
    ),
    "lognormal": (
        ("mean", "sigma"),
        lambda key, s, dt, mu, sd: jnp.exp(mu + sd * jax.random.normal(key, s, dt)),
    ),
    "logistic": (
        ("loc", "scale"),
        lambda key, s, dt, mu, sc: mu + sc * jax.random.logistic(key, s, dt),
    ),
    "gumbel": (
        ("loc", "scale"),
        lambda key, s, dt, mu, sc: mu + sc * jax.random.gumbel(key, s, dt),
    ),
    "laplace": (
        ("loc", "scale"),
        lambda key, s, dt, mu, sc: mu + sc * jax.random.laplace(key, s, dt),
    ),
    "exponential": (("scale",), lambda key, s, dt, sc: sc * jax.random.exponential(key, s, dt)),
    "rayleigh": (
        ("scale",),
        lambda key, s, dt, sc: sc * jnp.sqrt(-2.0 * jnp.log1p(-jax.random.uniform(key, s, dt))),
    ),
    "weibull": (
        ("a",),
        lambda key, s, dt, a: (-jnp.log1p(-jax.random.uniform(key, s, dt))) ** (1.0 / a),
    ),
    "pareto": (("a",), lambda key, s, dt, a: jnp.exp(jax.random.exponential(key, s, dt) / a) - 1.0),
    "power": (
        ("a",),
        lambda key, s, dt, a: (1.0 - jnp.exp(-jax.random.exponential(key, s, dt))) ** (1.0 / a),
    ),
    "gamma": (("shape", "scale"), _gamma),
    "beta": (
        ("a", "b"),
        _beta,
    ),
    "chisquare": (
        ("df",),
        lambda key, s, dt, df: 2.0 * jax.random.gamma(key, jnp.broadcast_to(df / 2.0, s), s, dt),
    ),
}
for _n, (_params, _draw) in _SAMPLERS.items():
    _rname = "_npi_powerd" if _n == "power" else f"_npi_{_n}"  # MXNet's names
    register(
        _rname,
        inputs=_params,
        attrs=_attrs("size dtype"),
        random=True,
        doc=f"NumPy's ``random.{_n}`` (parameters broadcast; ``size`` the output shape).",
    )(lambda key, *ps, _draw=_draw, **kw: _sampler(_draw)(key, *ps, **_fix_dtype(kw)))
    NP_FUNCS[f"random.{_n}"] = _rname


@register(
    "_npi_random_randint",
    inputs=(),
    attrs=_attrs("low=0 high=1 size=() dtype='int32'"),
    random=True,
    doc="NumPy's ``random.randint``.",
)
def _randint(key, low=0, high=1, size=(), dtype="int32"):
    return jax.random.randint(key, tuple(size or ()), low, high, np_dtype(dtype))


@register(
    "_npi_choice",
    inputs=("a", "p"),
    attrs=_attrs("size replace=True"),
    random=True,
    doc="NumPy's ``random.choice`` from the 1-d array ``a`` with probabilities ``p`` (traced "
    "calls; eager ones draw on the host, as MXNet's CPU).",
)
def _choice(key, a, p, size=None, replace=True):
    shape = () if size is None else tuple(size)
    return jax.random.choice(key, a, shape, bool(replace), p / jnp.sum(p))


@register(
    "_npi_bernoulli",
    inputs=("prob",),
    attrs=_attrs("size dtype"),
    random=True,
    doc="``npx.random.bernoulli`` with probabilities ``prob``.",
)
def _bernoulli(key, prob, size=None, dtype=None):
    shape = tuple(size) if size is not None else prob.shape
    return jax.random.bernoulli(key, jnp.broadcast_to(prob, shape), shape).astype(
        np_dtype(dtype) or jnp.float32
    )
