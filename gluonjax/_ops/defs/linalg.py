"""``nd.linalg`` / ``sym.linalg``: MXNet's batched linear algebra (``_linalg_*`` ops).

Every op works on the trailing two axes and batches over the leading ones (``gemm``
and ``gemm2`` take the row axis from ``axis``). As in MXNet, the triangular ops read
only the triangle ``lower`` names, ``potrf``/``potri`` take or give Cholesky factors,
and ``syevd`` returns eigenvectors as *rows* with a deterministic sign (the entry of
largest magnitude is positive), eigenvalues ascending.

Examples
--------
>>> import gluonjax as mx
>>> A = mx.nd.array([[4.0, 2.0], [2.0, 3.0]])
>>> L = mx.nd.linalg.potrf(A)
>>> mx.nd.linalg.gemm2(L, L, transpose_b=True).asnumpy().tolist()
[[4.0, 2.0], [2.0, 3.0]]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...base import OpError
from ..bounds import is_concrete
from ..registry import Attr, register


def _mat(x, what="A", square=False):
    if x.ndim < 2:
        raise ValueError(f"{what} must have at least 2 dimensions, got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{what} must hold square matrices, got shape {x.shape}")
    return x


def _t(x):
    return jnp.swapaxes(x, -1, -2)


def _batch_out(x):
    """MXNet gives a reduction of one matrix the shape (1,) (no 0-d arrays in 1.x)."""
    return x.reshape(1) if x.ndim == 0 else x


def _rows_axis(x, axis):
    """Move the row axis ``axis`` to -2 (MXNet's ``axis`` of gemm)."""
    ax = axis % x.ndim
    if ax == x.ndim - 1:
        raise ValueError("axis must not be the last axis (the column axis)")
    return jnp.moveaxis(x, ax, -2)


def _restore_axis(x, axis, ndim):
    ax = axis % ndim
    return jnp.moveaxis(x, -2, ax)


def _matmul(a, b):
    return jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST)


_MM = {
    "transpose_a": Attr("bool", False),
    "transpose_b": Attr("bool", False),
    "alpha": Attr("float", 1.0, static=False),
    "axis": Attr("int", -2),
}


@register(
    "_linalg_gemm",
    inputs=("A", "B", "C"),
    attrs=dict(_MM, beta=Attr("float", 1.0, static=False)),
    aliases=("linalg_gemm",),
)
def gemm(A, B, C, *, transpose_a, transpose_b, alpha, axis, beta):
    """``alpha * op(A) @ op(B) + beta * C`` (``op`` transposes when asked)."""
    nd = A.ndim
    a, b, c = (_rows_axis(_mat(x, n), axis) for x, n in ((A, "A"), (B, "B"), (C, "C")))
    a = _t(a) if transpose_a else a
    b = _t(b) if transpose_b else b
    out = alpha * _matmul(a, b) + beta * c
    return _restore_axis(out.astype(A.dtype), axis, nd)


@register("_linalg_gemm2", inputs=("A", "B"), attrs=_MM, aliases=("linalg_gemm2",))
def gemm2(A, B, *, transpose_a, transpose_b, alpha, axis):
    """``alpha * op(A) @ op(B)``."""
    nd = A.ndim
    a, b = _rows_axis(_mat(A, "A"), axis), _rows_axis(_mat(B, "B"), axis)
    a = _t(a) if transpose_a else a
    b = _t(b) if transpose_b else b
    return _restore_axis((alpha * _matmul(a, b)).astype(A.dtype), axis, nd)


def _potrf_check(attrs, arrays):
    """Eager values: a matrix that is not symmetric positive definite raises, as MXNet's
    LAPACK call does (a compiled program cannot raise: its factor holds NaN)."""
    A = arrays[0]
    if not is_concrete(A) or np.size(A) == 0:
        return
    a = np.asarray(A, np.float64)
    a = (a + np.swapaxes(a, -1, -2)) / 2
    try:
        np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise OpError(
            f"potrf: the input of shape {tuple(a.shape)} is not symmetric positive definite, "
            f"so it has no Cholesky factor; check the matrix (e.g. add a multiple of the "
            f"identity)"
        ) from None


@register(
    "_linalg_potrf",
    attrs={"lower": Attr("bool", True)},
    inputs=("A",),
    aliases=("linalg_potrf",),
    check=_potrf_check,
)
def potrf(A, *, lower):
    """Cholesky factor of symmetric positive definite ``A``: lower ``L`` with
    ``A = L L^T`` (``lower=False``: upper ``U`` with ``A = U^T U``)."""
    L = jnp.linalg.cholesky(_mat(A, square=True), symmetrize_input=True)
    return L if lower else _t(L)


@register(
    "_linalg_potri", attrs={"lower": Attr("bool", True)}, inputs=("A",), aliases=("linalg_potri",)
)
def potri(A, *, lower):
    """``(L L^T)^{-1}`` from a Cholesky factor ``L`` (``lower=False``: ``(U^T U)^{-1}``)."""
    F = jnp.tril(_mat(A, square=True)) if lower else jnp.triu(A)
    eye = jnp.broadcast_to(jnp.eye(A.shape[-1], dtype=A.dtype), A.shape)
    inv = jax.scipy.linalg.solve_triangular(F, eye, lower=lower)  # F^{-1}
    return _matmul(_t(inv), inv) if lower else _matmul(inv, _t(inv))


_TRI = {
    "transpose": Attr("bool", False),
    "rightside": Attr("bool", False),
    "lower": Attr("bool", True),
    "alpha": Attr("float", 1.0, static=False),
}


def _tri(A, lower):
    return jnp.tril(A) if lower else jnp.triu(A)


@register("_linalg_trmm", inputs=("A", "B"), attrs=_TRI, aliases=("linalg_trmm",))
def trmm(A, B, *, transpose, rightside, lower, alpha):
    """``alpha * op(A) @ B`` (``rightside``: ``alpha * B @ op(A)``) with triangular ``A``
    (only the ``lower``/upper triangle is read)."""
    a = _tri(_mat(A, square=True), lower)
    a = _t(a) if transpose else a
    out = _matmul(B, a) if rightside else _matmul(a, B)
    return (alpha * out).astype(B.dtype)


@register("_linalg_trsm", inputs=("A", "B"), attrs=_TRI, aliases=("linalg_trsm",))
def trsm(A, B, *, transpose, rightside, lower, alpha):
    """Solve ``op(A) X = alpha * B`` (``rightside``: ``X op(A) = alpha * B``) for
    triangular ``A``."""
    a = _tri(_mat(A, square=True), lower)
    b = alpha * B
    if rightside:  # X op(A) = b  <=>  op(A)^T X^T = b^T
        x = jax.scipy.linalg.solve_triangular(a, _t(b), lower=lower, trans=0 if transpose else 1)
        return _t(x).astype(B.dtype)
    x = jax.scipy.linalg.solve_triangular(a, b, lower=lower, trans=1 if transpose else 0)
    return x.astype(B.dtype)


@register("_linalg_sumlogdiag", inputs=("A",), aliases=("linalg_sumlogdiag",))
def sumlogdiag(A):
    """``sum(log(diag(A)))`` of each square matrix."""
    d = jnp.diagonal(_mat(A, square=True), axis1=-2, axis2=-1)
    return _batch_out(jnp.sum(jnp.log(d), axis=-1))


@register(
    "_linalg_extractdiag",
    inputs=("A",),
    attrs={"offset": Attr("int", 0)},
    aliases=("linalg_extractdiag",),
)
def extractdiag(A, *, offset):
    """The ``offset`` diagonal of each square matrix (positive: above the main one)."""
    return jnp.diagonal(_mat(A, square=True), offset=offset, axis1=-2, axis2=-1)


@register(
    "_linalg_makediag",
    inputs=("A",),
    attrs={"offset": Attr("int", 0)},
    aliases=("linalg_makediag",),
)
def makediag(A, *, offset):
    """Square matrices with the vectors on the trailing axis as their ``offset`` diagonal."""
    n = A.shape[-1] + abs(offset)
    idx = np.arange(A.shape[-1])
    rows, cols = (idx, idx + offset) if offset >= 0 else (idx - offset, idx)
    out = jnp.zeros(A.shape[:-1] + (n, n), A.dtype)
    return out.at[..., rows, cols].set(A)


def _trian_index(n, offset, lower):
    """(rows, cols) of the packed triangle in MXNet's order."""
    k = abs(offset)
    m = n - k
    upper = offset > 0 or (offset == 0 and not lower)
    rows, cols = [], []
    for r in range(m):
        for c in range(r + 1):
            # packed (r, c) of a lower triangle; shifted by the offset
            rr, cc = r + k, c
            if upper:
                rr, cc = cc, rr
            rows.append(rr)
            cols.append(cc)
    return np.array(rows, np.int32), np.array(cols, np.int32)


_TRIAN = {"offset": Attr("int", 0), "lower": Attr("bool", True)}


@register("_linalg_extracttrian", inputs=("A",), attrs=_TRIAN, aliases=("linalg_extracttrian",))
def extracttrian(A, *, offset, lower):
    """The triangle of each square matrix (``lower``, or upper; ``offset`` shifts it off
    the main diagonal), packed row by row into a vector."""
    n = _mat(A, square=True).shape[-1]
    if abs(offset) >= n:
        raise ValueError(f"offset {offset} must be smaller than the matrix size {n}")
    rows, cols = _trian_index(n, offset, lower)
    return A[..., rows, cols]


@register("_linalg_maketrian", inputs=("A",), attrs=_TRIAN, aliases=("linalg_maketrian",))
def maketrian(A, *, offset, lower):
    """Inverse of ``extracttrian``: square matrices with the packed vectors as their
    triangle and zeros elsewhere."""
    size = A.shape[-1]
    m = int((np.sqrt(8 * size + 1) - 1) / 2)
    if m * (m + 1) // 2 != size:
        raise ValueError(f"trailing axis {size} is not a triangular number m(m+1)/2")
    n = m + abs(offset)
    rows, cols = _trian_index(n, offset, lower)
    out = jnp.zeros(A.shape[:-1] + (n, n), A.dtype)
    return out.at[..., rows, cols].set(A)


@register(
    "_linalg_syrk",
    inputs=("A",),
    attrs={"transpose": Attr("bool", False), "alpha": Attr("float", 1.0, static=False)},
    aliases=("linalg_syrk",),
)
def syrk(A, *, transpose, alpha):
    """``alpha * A @ A^T`` (``transpose``: ``alpha * A^T @ A``)."""
    a = _mat(A)
    out = _matmul(_t(a), a) if transpose else _matmul(a, _t(a))
    return (alpha * out).astype(A.dtype)


@register(
    "_linalg_gelqf",
    inputs=("A",),
    num_outputs=2,
    output_names=("Q", "L"),
    aliases=("linalg_gelqf",),
)
def gelqf(A):
    """LQ factorization ``A = L Q`` of ``(x, y)`` matrices with ``x <= y``: ``Q`` has
    orthonormal rows, ``L`` is lower triangular (LAPACK's sign convention). Outputs
    ``Q, L``."""
    a = _mat(A)
    if a.shape[-2] > a.shape[-1]:
        raise ValueError(f"gelqf needs matrices with rows <= columns, got shape {a.shape}")
    q, r = jnp.linalg.qr(_t(a))
    return _t(q), _t(r)


@register("_linalg_syevd", inputs=("A",), num_outputs=2, output_names=("U", "L"))
def syevd(A):
    """Eigendecomposition of symmetric ``A`` (lower triangle read): rows of ``U`` are the
    eigenvectors (``U A = diag(L) U``), ``L`` ascending; each row's entry of largest
    magnitude (first one on ties) is positive. The gradient is symmetric, as MXNet's."""
    a = _mat(A, square=True)
    low = jnp.tril(a)
    value = low + _t(jnp.tril(a, -1))  # the symmetric matrix of the lower triangle
    sym = (a + _t(a)) / 2  # gradients flow as through the symmetric part
    a = jax.lax.stop_gradient(value) + sym - jax.lax.stop_gradient(sym)
    w, v = jnp.linalg.eigh(a, symmetrize_input=False)
    u = _t(v)
    k = jnp.argmax(jnp.abs(u), axis=-1)
    lead = jnp.take_along_axis(u, k[..., None], axis=-1)
    return u * jnp.where(lead < 0, -1.0, 1.0).astype(u.dtype), w


@register("_linalg_inverse", inputs=("A",), aliases=("linalg_inverse",))
def inverse(A):
    """The inverse of each square matrix."""
    return jnp.linalg.inv(_mat(A, square=True))


@register("_linalg_det", inputs=("A",), aliases=("linalg_det",))
def det(A):
    """The determinant of each square matrix."""
    return _batch_out(jnp.linalg.det(_mat(A, square=True)))


@register(
    "_linalg_slogdet",
    inputs=("A",),
    num_outputs=2,
    output_names=("sign", "logabsdet"),
    aliases=("linalg_slogdet",),
)
def slogdet(A):
    """``sign(det(A))`` and ``log(|det(A)|)`` of each square matrix."""
    sign, logabs = jnp.linalg.slogdet(_mat(A, square=True))
    return _batch_out(sign.astype(A.dtype)), _batch_out(logabs.astype(A.dtype))
