"""More of MXNet 1.9.1's storage-type rules: scalar comparisons, ``take``, ``quadratic``
and ``contrib.getnnz`` (the rules proper live in ``_ops``; see its docstring).

A rule takes ``(inputs, attributes)`` and returns ``(class, pattern)`` for a sparse
result (a pattern of None is derived from the values) or None for a dense one.
"""

from __future__ import annotations

import operator

import jax
import numpy as np

from ..ndarray import NDArray
from ._array import BaseSparseNDArray, CSRNDArray, SparseStorageError, _Lazy

__all__ = ["RULES", "ALWAYS", "COMPUTE"]


def _st(x):
    return x._stype if isinstance(x, BaseSparseNDArray) else "default"


def _scalar_logic(fn):
    """``_<cmp>_scalar``: a sparse input stays sparse (same pattern) when ``0 <cmp> scalar``
    is false, so every position it does not store stays 0 (MXNet's
    ``BinaryScalarLogicStorageType``); otherwise the result is dense."""

    def rule(ins, attrs):
        x = ins[0]
        if _st(x) == "default" or fn(0.0, float(attrs.get("scalar", 0.0))):
            return None
        return type(x), x._pattern_ref()

    return rule


_LOGIC = {
    "_equal_scalar": operator.eq,
    "_not_equal_scalar": operator.ne,
    "_greater_scalar": operator.gt,
    "_greater_equal_scalar": operator.ge,
    "_lesser_scalar": operator.lt,
    "_lesser_equal_scalar": operator.le,
}


def _take_rows(pattern, rows):
    """The csr pattern of the rows ``rows`` of ``pattern`` (in that order)."""
    indptr, indices = pattern
    counts = np.diff(indptr)[rows]
    out_ptr = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(counts, out=out_ptr[1:])
    parts = [indices[indptr[r] : indptr[r + 1]] for r in rows]
    cols = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)
    return out_ptr, cols


def _take(ins, attrs):
    """``take(csr, dense indices, axis=0)`` in mode clip or wrap is csr (MXNet's
    ``TakeOpForwardStorageType``); every other combination is dense."""
    x = ins[0]
    mode = attrs.get("mode", "clip")
    if _st(x) != "csr" or len(ins) < 2 or _st(ins[1]) != "default":
        return None
    if int(attrs.get("axis", 0)) != 0 or mode not in ("clip", "wrap"):
        return None
    idx = ins[1]
    if isinstance(getattr(idx, "_data", None), jax.core.Tracer):
        return CSRNDArray, None
    rows = np.asarray(idx.asnumpy() if isinstance(idx, NDArray) else idx).astype(np.int64)
    n = x.shape[0]
    rows = np.mod(rows, n) if mode == "wrap" else np.clip(rows, 0, n - 1)
    rows = rows.reshape(-1)
    src = x._pattern_ref()
    if isinstance(src, _Lazy):
        return CSRNDArray, _Lazy(lambda p: _take_rows(p, rows), [src])
    return CSRNDArray, _take_rows(src, rows)


def _quadratic(ins, attrs):
    """``contrib.quadratic`` of a csr input with ``c == 0`` keeps the csr pattern."""
    x = ins[0]
    if _st(x) == "csr" and float(attrs.get("c", 0.0)) == 0.0:
        return CSRNDArray, x._pattern_ref()
    return None


def _getnnz(ins, attrs):
    """``contrib.getnnz`` counts the stored values of a csr matrix (a dense result); MXNet
    has no kernel for other storage types."""
    x = ins[0] if ins else None
    if _st(x) != "csr":
        raise SparseStorageError(
            f"contrib.getnnz needs a csr matrix, got stype {_st(x)!r}; convert it with "
            f".tostype('csr')"
        )
    axis = attrs.get("axis")
    if axis is not None and int(axis) != 1:
        raise SparseStorageError(
            f"contrib.getnnz: axis must be None (all) or 1 (per row), got {axis}; MXNet "
            f"1.9.1 has no per-column count either (sum a dense (x != 0) for that)"
        )
    return None


def _getnnz_value(ins, attrs):
    """The counts of ``contrib.getnnz`` from the csr pattern (explicit zeros count)."""
    x = ins[0]
    if x._node is not None:
        return None  # recorded by autograd: the registry op counts the non-zeros
    indptr, indices = x._pattern()
    axis = attrs.get("axis")
    if axis is None:
        counts = np.asarray([len(indices)])
    else:
        counts = np.diff(indptr)
    dt = jax.dtypes.canonicalize_dtype(np.int64)
    return NDArray(jax.device_put(counts.astype(dt), next(iter(x._data.devices()))))


def _batch_norm(ins, attrs):
    """BatchNorm falls back to dense for sparse inputs, except with ``fix_gamma`` (which
    MXNet 1.9.1 refuses, its issue #11647)."""
    if attrs.get("fix_gamma", True) and any(_st(x) != "default" for x in ins):
        raise SparseStorageError(
            "BatchNorm: fix_gamma=True is not supported for sparse arrays (MXNet issue "
            "#11647); pass dense arrays (.tostype('default')) or set fix_gamma=False"
        )
    return None


RULES = {name: _scalar_logic(fn) for name, fn in _LOGIC.items()}
RULES.update(
    take=_take, _contrib_quadratic=_quadratic, _contrib_getnnz=_getnnz, BatchNorm=_batch_norm
)
#: rules that also run on dense inputs
ALWAYS = frozenset(("_contrib_getnnz",))
#: rules whose value comes from the storage pattern rather than the registry op
COMPUTE = {"_contrib_getnnz": _getnnz_value}
