"""Element-wise operators: unary math, binary (elemwise_/broadcast_) and scalar forms."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy import special as jsp

from ..precise import expm1 as _expm1
from ..registry import Attr, register
from . import _special, _subgrad

_SCALAR = {"scalar": Attr("number", 1.0, static=False)}


def _same(x, like):
    """Cast a boolean/comparison result back to ``like``'s dtype (MXNet returns 1.0/0.0)."""
    return x.astype(like.dtype)


def _fix(x):
    return jnp.trunc(x)


def _power(a, b):
    """MXNet's ``**``. Integer powers are exact for exponents >= 0 (MXNet computes them in
    float32 and rounds large results: 3**19 gives 1162261504; gluonjax gives the integer,
    wrapping on overflow where MXNet gives the type's minimum). A negative exponent gives
    what MXNet's float result truncates to: 0 for |a| > 1, a**b for a = +-1, and the type's
    minimum for 0 (C's conversion of inf)."""
    if not (jnp.issubdtype(a.dtype, jnp.integer) and jnp.issubdtype(b.dtype, jnp.integer)):
        return jnp.power(a, b)
    dtype = jnp.result_type(a, b)
    a, b = jnp.broadcast_arrays(a.astype(dtype), b.astype(dtype))
    if not jnp.issubdtype(dtype, jnp.signedinteger):
        return jnp.power(a, b)
    zero = jnp.zeros((), dtype)
    whole = jnp.power(a, jnp.maximum(b, zero))
    odd = (b % 2) != 0
    inverse = jnp.where(
        a == 1,
        jnp.ones((), dtype),
        jnp.where(
            a == -1,
            jnp.where(odd, -jnp.ones((), dtype), jnp.ones((), dtype)),
            jnp.where(a == 0, jnp.asarray(jnp.iinfo(dtype).min, dtype), zero),
        ),
    )
    return jnp.where(b < 0, inverse, whole)


def _divide(a, b):
    """MXNet's ``/``: true division for floats, C division (toward zero) for integers.

    A divisor broadcast over the dividend (``x / 2.5``, ``x / row``) goes through an
    optimization barrier: XLA otherwise rewrites ``a / broadcast(b)`` into
    ``a * broadcast(1 / b)``, which is off by one ulp in about 40% of the elements
    and only for some shapes (not for a single element). MXNet divides; so do we, the
    same way for every shape (what lets an eager op run on a size class unchanged).
    """
    if jnp.issubdtype(a.dtype, jnp.integer) and jnp.issubdtype(b.dtype, jnp.integer):
        dtype = jnp.result_type(a, b)
        a, b = jnp.broadcast_arrays(a.astype(dtype), b.astype(dtype))
        return jax.lax.div(a, b)
    shape = jnp.broadcast_shapes(jnp.shape(a), jnp.shape(b))
    if jnp.shape(b) != shape:
        dtype = jnp.result_type(a, b)
        b = jax.lax.optimization_barrier(jnp.broadcast_to(jnp.asarray(b, dtype), shape))
    return jnp.divide(a, b)


def _rint(x):
    """Nearest integer; a tie goes down (MXNet: rint(1.5) = 1, rint(-0.5) = -1)."""
    lo, hi = jnp.floor(x), jnp.ceil(x)
    return jnp.where(x - lo <= hi - x, lo, hi)


UNARY = {
    "relu": _subgrad.relu,
    "sigmoid": jax.nn.sigmoid,
    "tanh": jnp.tanh,
    "exp": jnp.exp,
    "expm1": _expm1,
    "log": jnp.log,
    "log1p": jnp.log1p,
    "log2": jnp.log2,
    "log10": jnp.log10,
    "sqrt": jnp.sqrt,
    "rsqrt": jax.lax.rsqrt,
    "cbrt": jnp.cbrt,
    "rcbrt": lambda x: 1.0 / jnp.cbrt(x),
    "square": jnp.square,
    "abs": _subgrad.abs_,
    "sign": jnp.sign,
    "negative": jnp.negative,
    "reciprocal": jnp.reciprocal,
    "sin": jnp.sin,
    "cos": jnp.cos,
    "tan": jnp.tan,
    "arcsin": jnp.arcsin,
    "arccos": jnp.arccos,
    "arctan": jnp.arctan,
    "sinh": jnp.sinh,
    "cosh": jnp.cosh,
    "arcsinh": jnp.arcsinh,
    "arccosh": jnp.arccosh,
    "arctanh": jnp.arctanh,
    "degrees": jnp.degrees,
    "radians": jnp.radians,
    "floor": jnp.floor,
    "ceil": jnp.ceil,
    "round": lambda x: jnp.where(x >= 0, jnp.floor(x + 0.5), jnp.ceil(x - 0.5)),
    "rint": _rint,
    "trunc": jnp.trunc,
    "fix": _fix,
    "softsign": lambda x: x / (1 + jnp.abs(x)),
    "erf": jsp.erf,
    "erfinv": jsp.erfinv,
    "gamma": _special.gamma,
    "gammaln": _special.gammaln,
    "logical_not": lambda x: _same(jnp.logical_not(x), x),
    "zeros_like": jnp.zeros_like,
    "ones_like": jnp.ones_like,
    "BlockGrad": jax.lax.stop_gradient,
    "_copy": lambda x: x,
}
_UNARY_ALIASES = {
    "BlockGrad": ("stop_gradient",),
    "_copy": ("identity",),
}


def _keep_ints(fn):
    """Rounding functions leave integer arrays unchanged (exact, as in MXNet)."""

    def impl(x):
        return x if jnp.issubdtype(x.dtype, jnp.integer) else fn(x)

    return impl


for _name in ("floor", "ceil", "round", "rint", "trunc", "fix"):
    UNARY[_name] = _keep_ints(UNARY[_name])

for _name, _fn in UNARY.items():
    register(
        _name,
        aliases=_UNARY_ALIASES.get(_name, ()),
        doc=f"Element-wise {_name}.",
        head_free=_name == "BlockGrad",
        bucket="map",
    )(_fn)


BINARY = {
    "add": jnp.add,
    "sub": jnp.subtract,
    "mul": jnp.multiply,
    "div": _divide,
    "mod": jnp.mod,
    "power": _power,
    "maximum": _subgrad.maximum,
    "minimum": _subgrad.minimum,
    "hypot": _subgrad.hypot,
    "equal": lambda a, b: _same(a == b, a),
    "not_equal": lambda a, b: _same(a != b, a),
    "greater": lambda a, b: _same(a > b, a),
    "greater_equal": lambda a, b: _same(a >= b, a),
    "lesser": lambda a, b: _same(a < b, a),
    "lesser_equal": lambda a, b: _same(a <= b, a),
    "logical_and": lambda a, b: _same(jnp.logical_and(a, b), a),
    "logical_or": lambda a, b: _same(jnp.logical_or(a, b), a),
    "logical_xor": lambda a, b: _same(jnp.logical_xor(a, b), a),
}

for _name, _fn in BINARY.items():
    _aliases = ("broadcast_plus",) if _name == "add" else ()
    _aliases += ("broadcast_minus",) if _name == "sub" else ()
    register(
        f"broadcast_{_name}",
        inputs=("lhs", "rhs"),
        aliases=_aliases,
        doc=f"Element-wise {_name} of lhs and rhs with NumPy broadcasting.",
        bucket="broadcast",
        int_vjp=_name != "mod",  # MXNet: integer mod has zero gradients
    )(_fn)

_ELEMWISE_ALIASES = {
    "add": ("_plus", "_add"),
    "sub": ("_minus", "_sub"),
    "mul": ("_mul",),
    "div": ("_div",),
}


def _checked(fn, name):
    def impl(lhs, rhs):
        if lhs.shape != rhs.shape:
            raise ValueError(
                f"elemwise_{name} needs equal shapes, got {lhs.shape} and {rhs.shape}; "
                f"use broadcast_{name} to broadcast"
            )
        return fn(lhs, rhs)

    return impl


for _name in ("add", "sub", "mul", "div"):
    register(
        f"elemwise_{_name}",
        inputs=("lhs", "rhs"),
        aliases=_ELEMWISE_ALIASES[_name],
        doc=f"Element-wise {_name} of two arrays of the same shape.",
        bucket="map",
    )(_checked(BINARY[_name], _name))
for _name in ("power", "maximum", "minimum", "mod", "hypot"):
    register(
        f"_{_name}",
        inputs=("lhs", "rhs"),
        doc=f"Element-wise {_name} of two arrays of the same shape.",
        bucket="map",
        int_vjp=_name != "mod",  # MXNet: integer mod has zero gradients
    )(_checked(BINARY[_name], _name))
for _name in ("equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal"):
    register(
        f"_{_name}",
        inputs=("lhs", "rhs"),
        doc=f"1 where lhs {_name} rhs else 0 (same shapes).",
        bucket="map",
    )(BINARY[_name])


def _scalar_op(fn, reverse=False):
    def impl(data, scalar):
        s = jnp.asarray(scalar, dtype=data.dtype)
        return fn(s, data) if reverse else fn(data, s)

    return impl


SCALAR = {
    "_plus_scalar": (jnp.add, False),
    "_minus_scalar": (jnp.subtract, False),
    "_rminus_scalar": (jnp.subtract, True),
    "_mul_scalar": (jnp.multiply, False),
    "_div_scalar": (_divide, False),
    "_rdiv_scalar": (_divide, True),
    "_mod_scalar": (jnp.mod, False),
    "_rmod_scalar": (jnp.mod, True),
    "_power_scalar": (_power, False),
    "_rpower_scalar": (_power, True),
    "_maximum_scalar": (_subgrad.maximum, False),
    "_minimum_scalar": (_subgrad.minimum, False),
    "_hypot_scalar": (_subgrad.hypot, False),
    "_equal_scalar": (BINARY["equal"], False),
    "_not_equal_scalar": (BINARY["not_equal"], False),
    "_greater_scalar": (BINARY["greater"], False),
    "_greater_equal_scalar": (BINARY["greater_equal"], False),
    "_lesser_scalar": (BINARY["lesser"], False),
    "_lesser_equal_scalar": (BINARY["lesser_equal"], False),
    "_logical_and_scalar": (BINARY["logical_and"], False),
    "_logical_or_scalar": (BINARY["logical_or"], False),
    "_logical_xor_scalar": (BINARY["logical_xor"], False),
}
for _name, (_fn, _rev) in SCALAR.items():
    register(
        _name,
        attrs=_SCALAR,
        bucket="map",
        int_vjp=_fn is not jnp.mod,  # MXNet: integer mod has zero gradients
        doc=f"{_name[1:-7]} of data and a scalar" + (" (scalar on the left)." if _rev else "."),
    )(_scalar_op(_fn, _rev))


@register(
    "clip",
    attrs={"a_min": Attr("float", static=False), "a_max": Attr("float", static=False)},
    bucket="map",
)
def clip(data, a_min, a_max):
    """Clip values into [a_min, a_max]; the gradient passes where a_min <= x <= a_max."""
    return _subgrad.clip(data, jnp.asarray(a_min, data.dtype), jnp.asarray(a_max, data.dtype))


@register("add_n", variadic=True, attrs={"num_args": Attr("int", 0)}, aliases=("ElementWiseSum",))
def add_n(*args, num_args=0):
    """Sum of all inputs (same shapes)."""
    out = args[0]
    for a in args[1:]:
        out = out + a
    return out


@register("where", inputs=("condition", "x", "y"), bucket="map")
def where(condition, x, y):
    """``x`` where condition is non-zero, else ``y``; a 1-D condition selects rows."""
    if condition.ndim == 1 and x.ndim > 1:
        condition = condition.reshape((-1,) + (1,) * (x.ndim - 1))
    return jnp.where(condition != 0, x, y)


@register("smooth_l1", attrs={"scalar": Attr("float", 1.0)}, bucket="map")
def smooth_l1(data, scalar):
    """Smooth L1: 0.5*(s*x)^2 if |x| < 1/s^2 else |x| - 0.5/s^2."""
    s2 = scalar * scalar
    ax = jnp.abs(data)
    return jnp.where(ax < 1.0 / s2, 0.5 * s2 * data * data, ax - 0.5 / s2)


def _make_loss_impl(grad_scale, valid_thresh, normalization):
    @jax.custom_vjp
    def f(data):
        return data

    def fwd(data):
        return data, data

    def bwd(data, ct):
        g = jnp.full_like(data, grad_scale)
        if normalization == "batch":
            g = g / data.shape[0]
        elif normalization == "valid":
            g = g / jnp.maximum(jnp.sum(data > valid_thresh), 1).astype(data.dtype)
        return (g,)

    f.defvjp(fwd, bwd)
    return f


@register(
    "MakeLoss",
    attrs={
        "grad_scale": Attr("float", 1.0),
        "valid_thresh": Attr("float", 0.0),
        "normalization": Attr("str", "null", choices=("null", "batch", "valid")),
    },
    aliases=("make_loss",),
    head_free=True,
)
def make_loss(data, grad_scale, valid_thresh, normalization):
    """Identity whose gradient is ``grad_scale`` (ignoring the head gradient), divided by
    the batch size (``normalization='batch'``) or the count of elements above
    ``valid_thresh`` (``'valid'``): a terminal loss, as MXNet's MakeLoss."""
    return _make_loss_impl(grad_scale, valid_thresh, normalization)(data)
