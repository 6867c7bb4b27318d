"""Small contrib math ops: the straight-through estimators ``round_ste``/``sign_ste``,
``quadratic``, ``gradientmultiplier``, ``allclose``, ``khatri_rao`` and the
value-dependent ``boolean_mask``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...base import HostOnlyError
from ..registry import Attr, register
from .elemwise import UNARY


def _straight_through(fn):
    """``fn`` forward; its gradient passes the head gradient through unchanged."""

    @jax.custom_jvp
    def ste(x):
        return fn(x)

    @ste.defjvp
    def _jvp(primals, tangents):
        return ste(primals[0]), tangents[0]

    return ste


_ROUND_STE = _straight_through(UNARY["round"])
_SIGN_STE = _straight_through(UNARY["sign"])


@register("_contrib_round_ste")
def round_ste(data):
    """``round(x)`` (halves away from zero, as ``round``) whose gradient is 1 everywhere
    (a straight-through estimator, for quantized training).

    Examples
    --------
    >>> import gluonjax as mx
    >>> mx.nd.contrib.round_ste(mx.nd.array([-1.5, 1.5, 2.7])).asnumpy().tolist()
    [-2.0, 2.0, 3.0]
    """
    return _ROUND_STE(data)


@register("_contrib_sign_ste")
def sign_ste(data):
    """``sign(x)`` whose gradient is 1 everywhere (a straight-through estimator).

    Examples
    --------
    >>> import gluonjax as mx
    >>> mx.nd.contrib.sign_ste(mx.nd.array([-2., 0., 3.])).asnumpy().tolist()
    [-1.0, 0.0, 1.0]
    """
    return _SIGN_STE(data)


@register(
    "_contrib_quadratic",
    attrs={"a": Attr("float", 0.0), "b": Attr("float", 0.0), "c": Attr("float", 0.0)},
)
def quadratic(data, *, a, b, c):
    """``a * x**2 + b * x + c`` element-wise, in ``data``'s dtype.

    Examples
    --------
    >>> import gluonjax as mx
    >>> mx.nd.contrib.quadratic(mx.nd.array([1., 2.]), a=1, b=2, c=3).asnumpy().tolist()
    [6.0, 11.0]
    """
    dt = data.dtype
    return jnp.asarray(a, dt) * data * data + jnp.asarray(b, dt) * data + jnp.asarray(c, dt)


def _scaled_gradient(data, scalar):
    @jax.custom_vjp
    def ident(x):
        return x

    def fwd(x):
        return x, None

    def bwd(_, g):
        return (g * jnp.asarray(scalar, g.dtype),)

    ident.defvjp(fwd, bwd)
    return ident(data)


@register(
    "_contrib_gradientmultiplier",
    attrs={"scalar": Attr("float", 1.0), "is_int": Attr("bool", True)},
)
def gradientmultiplier(data, *, scalar, is_int):
    """The identity forward; backward multiplies the head gradient by ``scalar``
    (``-1`` makes a gradient-reversal layer).

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.array([1., 2.]); x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = mx.nd.contrib.gradientmultiplier(x, scalar=-0.5)
    >>> y.backward(); x.grad.asnumpy().tolist()
    [-0.5, -0.5]
    """
    return _scaled_gradient(data, scalar)


@register(
    "_contrib_allclose",
    inputs=("a", "b"),
    attrs={
        "rtol": Attr("float", 1e-05),
        "atol": Attr("float", 1e-08),
        "equal_nan": Attr("bool", True),
    },
)
def allclose(a, b, *, rtol, atol, equal_nan):
    """1 (uint8, shape ``()``) when every ``|a - b| <= atol + rtol * |b|`` (NaNs equal
    when ``equal_nan``), else 0.

    Examples
    --------
    >>> import gluonjax as mx
    >>> int(mx.nd.contrib.allclose(mx.nd.array([1., 2.]), mx.nd.array([1., 2.000001])).asscalar())
    1
    """
    if a.shape != b.shape:
        raise ValueError(f"allclose needs inputs of one shape, got {a.shape} and {b.shape}")
    dt = jnp.result_type(a.dtype, b.dtype)
    a, b = a.astype(dt), b.astype(dt)
    nan_a, nan_b = jnp.isnan(a), jnp.isnan(b)
    tol = jnp.asarray(atol, dt) + jnp.asarray(rtol, dt) * jnp.abs(b)
    close = (a == b) | (jnp.abs(a - b) <= tol)
    either = nan_a | nan_b
    ok = jnp.where(either, (nan_a == nan_b) & equal_nan, close)
    return jax.lax.stop_gradient(jnp.all(ok).astype(jnp.uint8))


@register("khatri_rao", variadic=True, attrs={"num_args": Attr("int", 0)})
def khatri_rao(*args, num_args):
    """Column-wise Kronecker product of matrices ``(M_i, N)``: shape ``(prod M_i, N)``,
    row ``(i_1, ..., i_k)`` (the first matrix's index varies slowest) is the product of
    the rows ``A_j[i_j]``.

    Examples
    --------
    >>> import gluonjax as mx
    >>> a = mx.nd.array([[1., 2.], [3., 4.]]); b = mx.nd.array([[1., 10.]])
    >>> mx.nd.khatri_rao(a, b).asnumpy().tolist()
    [[1.0, 20.0], [3.0, 40.0]]
    """
    if not args:
        raise ValueError("khatri_rao needs at least one input matrix")
    cols = args[0].shape[-1] if args[0].ndim else None
    for i, m in enumerate(args):
        if m.ndim != 2 or m.shape[1] != cols:
            shapes = [tuple(x.shape) for x in args]
            raise ValueError(
                f"khatri_rao needs 2-d matrices with one number of columns, got {shapes} "
                f"(input {i})"
            )
    out = args[0]
    for m in args[1:]:
        out = (out[:, None, :] * m[None, :, :]).reshape(-1, cols)
    return out


def _mask_count(attrs, arrays):
    """The number of selected rows (an eager call reads the mask's values)."""
    return {"_count": int(np.count_nonzero(np.asarray(arrays[1])))}


@register(
    "_contrib_boolean_mask",
    inputs=("data", "index"),
    attrs={"axis": Attr("int", 0), "_count": Attr("int?", None)},
    eager_attrs=_mask_count,
)
def boolean_mask(data, index, *, axis, _count):
    """The slices of ``data`` along ``axis`` where ``index`` (1-d) is non-zero. The
    output's shape depends on ``index``'s values, so it runs eagerly only: a hybridized
    block calling it runs op by op. The gradient scatters back into the kept slices.

    Examples
    --------
    >>> import gluonjax as mx
    >>> data = mx.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    >>> mx.nd.contrib.boolean_mask(data, mx.nd.array([0, 1, 0])).asnumpy().tolist()
    [[4.0, 5.0, 6.0]]
    """
    if _count is None:
        raise HostOnlyError(
            "contrib.boolean_mask: its output's shape depends on the mask's values, so it "
            "cannot run inside a compiled (hybridized or bound symbol) graph; call "
            "mx.nd.contrib.boolean_mask eagerly (a hybridized block calling it runs op by "
            "op), or use a fixed-shape alternative such as where(mask, data, 0)"
        )
    nd = data.ndim
    if not -nd <= axis < nd:
        raise ValueError(f"boolean_mask: axis {axis} is out of range for data {data.shape}")
    axis %= nd
    if index.ndim != 1 or index.shape[0] != data.shape[axis]:
        raise ValueError(
            f"boolean_mask: index must be 1-d with one entry per slice of data along axis "
            f"{axis}, got index {index.shape} for data {data.shape}"
        )
    (pos,) = jnp.nonzero(jax.lax.stop_gradient(index), size=_count)
    return jnp.take(data, pos, axis=axis)
