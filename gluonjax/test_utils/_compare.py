"""Comparing arrays with dtype-aware tolerances (``assert_almost_equal`` and friends)."""

from __future__ import annotations

import functools
import numbers

import numpy as np
import numpy.testing as npt

from ..context import Context, current_context

__all__ = [
    "default_context",
    "set_default_context",
    "default_dtype",
    "default_rtols",
    "default_atols",
    "default_numeric_eps",
    "effective_dtype",
    "get_tolerance",
    "get_tols",
    "get_atol",
    "get_rtol",
    "get_etol",
    "same",
    "almost_equal",
    "assert_almost_equal",
    "assert_allclose",
    "assert_almost_equal_with_err",
    "assert_almost_equal_ignore_nan",
    "assert_exception",
    "retry",
    "same_array",
    "np_reduce",
    "collapse_sum_like",
    "compare_ndarray_tuple",
]


def default_context():
    """The context tests run on: ``mx.current_context()`` (``cpu(0)`` unless changed)."""
    return current_context()


def set_default_context(ctx):
    """Make ``ctx`` the default context of this thread (what ``default_context()`` returns)."""
    from .. import context as _context

    _context._state.ctx = Context(ctx)


def default_dtype():
    """The dtype test inputs use by default: float32."""
    return np.float32


def _table(f16, f32, f64):
    ints = (np.bool_, np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64)
    t = {np.dtype(np.float16): f16, np.dtype(np.float32): f32, np.dtype(np.float64): f64}
    t.update({np.dtype(d): 0 for d in ints})
    return t


def default_rtols():
    """Relative tolerance per dtype: float16 1e-2, float32 1e-4, float64 1e-5, integers 0."""
    return _table(1e-2, 1e-4, 1e-5)


def default_atols():
    """Absolute tolerance per dtype: float16 1e-1, float32 1e-3, float64 1e-20, integers 0."""
    return _table(1e-1, 1e-3, 1e-20)


def default_numeric_eps():
    """Finite-difference step per dtype (powers of two, exact as input deltas)."""
    return {
        np.dtype(np.float16): 1.0 / 2**6,
        np.dtype(np.float32): 1.0 / 2**9,
        np.dtype(np.float64): 1.0 / 2**14,
    }


def _tf32_matmuls(ctx):
    """True where jax runs float32 matmuls/convolutions in TF32 (Ampere+ GPUs, default
    precision): their results are only as precise as float16 inputs."""
    if ctx is None or getattr(ctx, "device_type", None) != "gpu":
        return False
    try:
        import jax

        if jax.config.jax_default_matmul_precision in ("highest", "float32"):
            return False
        cc = getattr(ctx.jax_device, "compute_capability", None)
        return cc is not None and float(cc) >= 8.0
    except Exception:  # noqa: BLE001  (no such device: no TF32)
        return False


def effective_dtype(dat):
    """The dtype that decides the tolerance for comparing ``dat``.

    float32 results made on a GPU that runs float32 matmuls in TF32 count as float16;
    every other array counts as its own dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from gluonjax.test_utils import effective_dtype
    >>> effective_dtype(np.ones(2, np.float16))
    dtype('float16')
    """
    ctx = getattr(dat, "ctx", None) if not isinstance(dat, np.ndarray) else None
    dtype = np.dtype(dat.dtype)
    if dtype == np.float32 and _tf32_matmuls(ctx):
        return np.dtype(np.float16)
    return dtype


def get_tolerance(dat, tol, default_tol):
    """``tol`` if it is a number, else its entry (or ``default_tol``'s) for ``dat``'s dtype."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = {} if tol is None else tol
    return tol.get(dtype, default_tol.get(dtype, 0))


def get_tols(x, y, rtol, atol):
    """``(rtol, atol)`` for comparing ``x`` and ``y``: the looser default of their dtypes
    unless given."""
    x = x if hasattr(x, "dtype") else np.asarray(x)
    y = y if hasattr(y, "dtype") else np.asarray(y)
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """``atol`` or the default absolute tolerance of ``dtype`` (float64: 1e-20)."""
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    """``rtol`` or the default relative tolerance of ``dtype`` (float64: 1e-5)."""
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def get_etol(etol=None):
    """``etol`` or 0: the fraction of elements allowed to mismatch."""
    return 0 if etol is None else etol


def _np(x):
    return x.asnumpy() if hasattr(x, "asnumpy") else x


def same(a, b):
    """True if ``a`` and ``b`` (NumPy arrays or NDArrays) have equal shapes and values.

    Examples
    --------
    >>> import numpy as np
    >>> from gluonjax.test_utils import same
    >>> same(np.array([1, 2]), np.array([1, 2])), same(np.array([1, 2]), np.array([1, 3]))
    (True, False)
    """
    return bool(np.array_equal(_np(a), _np(b)))


def _check_shapes(a, b):
    if a.shape != b.shape:
        raise AssertionError(
            npt.build_err_msg(
                [a, b], err_msg=f"a.shape = {a.shape} and b.shape = {b.shape} are not equal"
            )
        )


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """``np.allclose`` with MXNet's defaults (rtol 1e-5, atol 1e-20); NDArrays accepted."""
    a, b = _np(a), _np(b)
    if not use_broadcast:
        _check_shapes(np.asarray(a), np.asarray(b))
    return bool(np.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan))


def _max_violation(a, b, rtol, atol):
    with np.errstate(invalid="ignore"):
        diff = np.where(np.equal(a, b), 0, np.abs(a - b))
        ratio = diff / (atol + rtol * np.abs(b) + 1e-20)
    ratio = np.nan_to_num(ratio, nan=np.inf)
    idx = np.unravel_index(np.argmax(ratio), ratio.shape) if ratio.size else ()
    return idx, (float(np.max(ratio)) if ratio.size else 0.0)


def _where(a, b, idx, names):
    return f"{idx}, {names[0]}={a[idx]:.8f}, {names[1]}={b[idx]:.8f}"


def assert_almost_equal(
    a,
    b,
    rtol=None,
    atol=None,
    names=("a", "b"),
    equal_nan=False,
    use_broadcast=True,
    mismatches=(10, 10),
):
    """Raise AssertionError unless ``|a - b| <= atol + rtol * |b|`` everywhere.

    Parameters
    ----------
    a, b : numpy.ndarray, NDArray or number
    rtol, atol : float or dict of dtype -> float, optional
        Tolerances; by default the looser of the two arrays' dtype defaults
        (float16 1e-2/1e-1, float32 1e-4/1e-3, float64 1e-5/1e-20, integers exact).
    names : tuple of str
        Names of ``a`` and ``b`` in the message.
    equal_nan : bool
        Whether NaNs in the same places count as equal.
    use_broadcast : bool
        If False, the shapes must be equal.
    mismatches : (int, int)
        How many mismatches to print and to count.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax.test_utils import assert_almost_equal
    >>> assert_almost_equal(mx.nd.array([1.0, 2.0]), [1.00001, 2.0])
    >>> try:
    ...     assert_almost_equal(mx.nd.array([1.0]), [1.1], names=("mine", "numpy"))
    ... except AssertionError as err:
    ...     print(str(err).splitlines()[2])
    Error 90.090090 exceeds tolerance rtol=1.000000e-04, atol=1.000000e-03 (mismatch 100.000000%).
    """
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = np.asarray(_np(a)), np.asarray(_np(b))
    if not use_broadcast:
        _check_shapes(a, b)
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    a, b = np.broadcast_arrays(a, b)
    idx, worst = _max_violation(a, b, rtol, atol)
    bad = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    count = int(bad.sum())
    shown = [() for _ in range(int(bad))] if bad.ndim == 0 else list(zip(*np.nonzero(bad)))
    shown = shown[: mismatches[0]]
    lines = [f"{i + 1:3d}: {_where(a, b, tuple(p), names)}" for i, p in enumerate(shown)]
    msg = (
        f"Error {worst:f} exceeds tolerance rtol={rtol:e}, atol={atol:e} "
        f"(mismatch {100.0 * count / max(a.size, 1):f}%).\n"
        f"Location of maximum error: {_where(a, b, idx, names)}\n" + "\n".join(lines)
    )
    with np.printoptions(threshold=4, suppress=True):
        raise AssertionError(npt.build_err_msg([a, b], err_msg=msg, names=names))


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """``assert_almost_equal`` with NumPy's defaults (rtol 1e-7, atol 0, NaN == NaN)."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(
    a, b, rtol=None, atol=None, etol=None, names=("a", "b"), equal_nan=False, mismatches=(10, 10)
):
    """Like :func:`assert_almost_equal` but a fraction ``etol`` of elements may mismatch."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = np.asarray(_np(a)), np.asarray(_np(b))
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    err = 1 - np.count_nonzero(close) / close.size
    if err > etol:
        idx, worst = _max_violation(*np.broadcast_arrays(a, b), rtol, atol)
        raise AssertionError(
            f"{err:.2%} of the elements mismatch (allowed {etol:.2%}); worst error {worst:f} "
            f"at {_where(*np.broadcast_arrays(a, b), idx, names)}"
        )


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    """:func:`assert_almost_equal` after zeroing positions where either side is NaN."""
    a, b = np.copy(_np(a)), np.copy(_np(b))
    nan = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan] = 0
    b[nan] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f, exception_type, *args, **kwargs):
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type``.

    Examples
    --------
    >>> from gluonjax.test_utils import assert_exception
    >>> assert_exception(int, ValueError, "x")
    """
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise {exception_type.__name__}")


def retry(n):
    """Decorator for a stochastic test: rerun it up to ``n`` times while it fails an assert."""
    if n <= 0:
        raise ValueError(f"retry(n) needs n >= 1, got {n}")

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            for i in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError:
                    if i == n - 1:
                        raise

        return wrapper

    return decorate


def same_array(array1, array2):
    """True if writing ``array1`` shows in ``array2`` (they share memory).

    gluonjax arrays are immutable jax arrays behind mutable handles, so two distinct
    NDArray objects never share memory: only an object and itself do.
    """
    array1[:] += 1
    shared = same(array1.asnumpy(), array2.asnumpy())
    array1[:] -= 1
    return shared and same(array1.asnumpy(), array2.asnumpy())


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce ``dat`` over ``axis`` (int, list or None) one axis at a time with
    ``numpy_reduce_func`` (``np.sum``, ``np.argmax``...), keeping dims if asked."""
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else range(len(dat.shape))
    ret = dat
    for i in sorted(axis, reverse=True):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        shape = list(dat.shape)
        for i in axis:
            shape[i] = 1
        ret = ret.reshape(tuple(shape))
    return ret


def collapse_sum_like(a, shape):
    """Sum numpy array ``a`` over the axes that broadcasting added to reach it from ``shape``."""
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    extra = a.ndim - len(shape)
    axes = list(range(extra)) + [
        i + extra for i, s in enumerate(shape) if s != a.shape[i + extra] and s == 1
    ]
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """Compare two (nested tuples of) arrays with :func:`assert_almost_equal`; None skips."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)
