"""Size-class programs run by NumPy on the host, where that gives XLA:CPU's values.

A size-class program (:mod:`gluonjax._ops.buckets`) is the op's own jax function at a
class shape. Compiling it costs XLA:CPU 25-45 ms, a hundred MXNet ops. When its jaxpr
holds only primitives whose IEEE result is unique (``add``, ``sub``, ``mul``, ``div``,
``sqrt``, ``max``, ``min``, comparisons, ``select_n``, conversions to a float type,
shape moves; see :data:`_PRIMS`), NumPy computes the same values on the host, and
nothing is compiled. Transcendental functions (``exp``, ``tanh``, ...), integer
division and float-to-integer conversion are not in the table: a program with one of
them compiles, as before.

Where XLA:CPU is not IEEE, the host copies it, or hands the call back:

* XLA:CPU flushes subnormal inputs and results of float32, float64 and bfloat16 to zero.
  A call that meets a value below twice the smallest normal number (an input or any
  intermediate result) raises :class:`Unsupported`, and the caller runs the compiled
  program (float16 is computed in float32 by XLA and is not flushed).
* ``max``/``min`` order -0 below +0 (``max(-0, +0) == +0`` in either order) and
  ``sign(-0) == -0``; NumPy returns an operand, or +0: the host computes XLA's answer.
* XLA:CPU fuses ``a * b + c`` within one program into a fused multiply-add (one
  rounding): a program that adds a product it made is not translated.
* Sums may add in another order than XLA (the reductions' documented tolerance).

The translation is keyed with the program (``buckets.program``): one trace per key and
process, no lowering, no compile.
"""

from __future__ import annotations

import enum
import json
import math

import jax
import numpy as np

__all__ = ["Unsupported", "translate", "from_jaxpr"]


class Unsupported(Exception):
    """This call (a subnormal value) or program (a primitive outside the table) is not
    computed on the host; the caller compiles."""


# twice the smallest normal number of each type XLA:CPU flushes (bfloat16 computes in float32)
_TINY = {np.dtype(np.float32): np.float32(2 * np.finfo(np.float32).tiny),
         np.dtype(np.float64): np.float64(2 * np.finfo(np.float64).tiny)}  # fmt: skip
try:
    import ml_dtypes

    _BF16 = np.dtype(ml_dtypes.bfloat16)
    _TINY[_BF16] = np.asarray(2 * np.finfo(np.float32).tiny, _BF16)[()]
except ImportError:  # pragma: no cover - jax depends on ml_dtypes
    pass


def _errors_ignored():
    """``(context variable, state)``: NumPy 2 keeps its floating-point error state in a
    context variable; setting it to ``np.errstate(all="ignore")``'s state, made once,
    costs 0.3 us where entering ``np.errstate`` costs 1.7. None on another NumPy."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar as var

        with np.errstate(all="ignore"):
            return var, var.get()
    except (ImportError, AttributeError):
        return None


def _check(a):
    """Raise :class:`Unsupported` if ``a`` holds a nonzero value below twice the
    smallest normal number, which XLA:CPU flushes to zero (as input or as result)."""
    t = _TINY.get(a.dtype)
    if t is None:
        return a
    m = np.abs(a)
    if np.fmin.reduce(m, axis=None, initial=np.inf) < t and ((m < t) & (m != 0)).any():
        raise Unsupported("a subnormal value")
    return a


_QUIET = _errors_ignored()

_FLOATS = {np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64), *_TINY}


def _float(dt):
    return dt in _FLOATS


def _max(a, b):
    r = np.maximum(a, b)
    if _float(r.dtype):
        z = (a == 0) & (b == 0)
        if z.any():  # -0 < +0: +0 unless both are -0 (and -0 + -0 is the only -0 sum)
            r = np.where(z, a + b, r)
    return r


def _min(a, b):
    r = np.minimum(a, b)
    if _float(r.dtype):
        z = (a == 0) & (b == 0)
        if z.any():
            r = np.where(z, -((-a) + (-b)), r)
    return r


def _sign(a):
    r = np.sign(a)
    return np.where(a == 0, a, r) if _float(a.dtype) else r


def _div(a, b):
    if not _float(np.result_type(a, b)):
        raise Unsupported("integer division")
    return np.true_divide(a, b)


def _rem(a, b):
    if not _float(np.result_type(a, b)):
        raise Unsupported("integer remainder")
    return np.fmod(a, b)


# ------------------------------------------------------------------- exp (float32)
# XLA:CPU computes a float32 ``exp`` with its own polynomial (the Cephes one), inlined
# into the program: clamp, ``n = floor(x * log2(e) + 1/2)``, a two-part reduction
# ``r = x - n * ln2``, a degree-5 polynomial by Horner's rule and ``2**n`` made from the
# exponent bits. On an x86-64 CPU with FMA, LLVM fuses every ``a * b + c`` of it into one
# fused multiply-add (one rounding). The host repeats those steps: a fused step is the
# exact float64 product plus the addend, rounded once to float32 (float32 products are
# exact in float64; ``tools/verify_host_exp.py`` compares all 2**32 inputs with XLA).
# Where that has not been verified (another jaxlib, a CPU without FMA, XLA flags that
# change CPU code generation) the call is :class:`Unsupported` and compiles, as before.
_EXP_VERIFIED = ("0.10.2",)  # jaxlib versions whose XLA:CPU float32 exp was compared
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_EXP_LO, _EXP_HI = np.float32(-87.8), np.float32(88.8)
_LOG2E, _HALF = np.float32(1.4426950216293335), np.float64(0.5)
_LN2_HI, _LN2_LO = np.float32(0.693359375), np.float32(-2.1219444170128554e-4)
_EXP_POLY = tuple(np.float32(c) for c in (
    1.9875691214110702e-4, 1.398199936375022e-3, 8.333452045917511e-3,
    4.166579619050026e-2, 1.666666567325592e-1, 0.5))  # fmt: skip
_exp_state = {}
# about 40 ns an element on the host, against one 30 ms compile per class and then about
# 1 ns: past this size the first calls on a shape (up to HOT of them) cost more than the
# compile they save
_EXP_HOST_MAX = 1 << 14


def _exp_verified():
    """Whether XLA:CPU's float32 exp on this machine is the one the host repeats."""
    ok = _exp_state.get("ok")
    if ok is None:
        ok = _exp_state["ok"] = _exp_platform()
    return ok


def _exp_platform():
    import os
    import platform

    try:
        import jaxlib

        if jaxlib.__version__ not in _EXP_VERIFIED:
            return False
        if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
            return False
        if "xla_cpu" in os.environ.get("XLA_FLAGS", ""):  # ISA or fast-math choices
            return False
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return "fma" in line.split()
    except (OSError, ImportError, AttributeError):
        pass
    return False


def _exp(x, accuracy=None, **_):
    if x.dtype != _F32 or accuracy is not None or not _exp_verified():
        raise Unsupported("exp: only float32, where verified")
    if x.size > _EXP_HOST_MAX:
        raise Unsupported("exp: a large array runs faster compiled")
    f64, unsafe = _F64, "unsafe"
    shape = x.shape
    x = x.reshape(-1)
    w = np.empty((4, x.size), _F32)  # one buffer for the float32 steps
    xc, n, r, y = w
    t = np.empty(x.size, f64)  # and one for the fused steps' exact products
    # clamp as XLA's selects do (a NaN stays itself)
    np.maximum(x, _EXP_LO, out=xc)
    np.minimum(xc, _EXP_HI, out=xc)
    # a fused step: the float64 product of float32 values is exact, and the float32
    # output rounds the sum once
    np.add(np.multiply(xc, _LOG2E, out=t, dtype=f64), _HALF, out=n, casting=unsafe)
    np.floor(n, out=n)
    np.minimum(n, np.float32(127), out=n)  # (n >= -127 already: x >= -87.8)
    np.subtract(xc, np.multiply(n, _LN2_HI, out=t, dtype=f64), out=r, casting=unsafe)
    np.subtract(r, np.multiply(n, _LN2_LO, out=t, dtype=f64), out=r, casting=unsafe)
    p = _EXP_POLY
    np.add(np.multiply(r, p[0], out=t, dtype=f64), p[1], out=y, casting=unsafe)
    for c in p[2:]:
        np.add(np.multiply(y, r, out=t, dtype=f64), c, out=y, casting=unsafe)
    np.multiply(r, r, out=xc)
    np.add(np.multiply(y, xc, out=t, dtype=f64), r, out=y, casting=unsafe)
    y += np.float32(1)
    # 2**n from the exponent bits (n = -127 gives 0; a NaN's n any value: y is NaN)
    e = r.view(np.int32)
    np.copyto(e, n, casting=unsafe)
    e += 127
    e <<= 23
    y *= r  # (e's bits)
    if np.fmin.reduce(n, initial=np.inf) <= -126:  # below the normal range:
        y[np.abs(y) < _TINY32] = 0  # XLA flushes it
    return y.reshape(shape)


_TINY32 = np.float32(np.finfo(np.float32).tiny)


def _integer_pow(x, y):
    # lax's own lowering: square-and-multiply, then 1 / result for y < 0
    acc, base, n = None, x, abs(y)
    if n == 0:
        return np.ones_like(x)
    while n:
        if n & 1:
            acc = base if acc is None else acc * base
        n >>= 1
        if n:
            base = base * base
    return _div(np.ones_like(acc), acc) if y < 0 else acc


def _convert(x, new_dtype, **_):
    new = np.dtype(new_dtype)
    old = x.dtype
    if new == np.dtype(bool):
        return x != 0
    if _float(new) or (old.kind in "iub" and new.kind in "iu"):
        return x.astype(new)
    if _float(old) and new.kind in "iu":  # truncation, exact inside the integer range
        info, w = np.iinfo(new), x.astype(np.float64)
        if x.size == 0 or (
            np.isfinite(w).all() and w.min() > info.min - 1 and w.max() < info.max + 1
        ):
            return x.astype(new)
    raise Unsupported(f"conversion {old} -> {new}")  # outside the range: XLA saturates


def _broadcast_in_dim(x, shape, broadcast_dimensions, **_):
    shape = tuple(shape)
    view = [1] * len(shape)
    for k, d in enumerate(broadcast_dimensions):
        view[d] = x.shape[k]
    return np.broadcast_to(np.reshape(x, view), shape)


def _expand(x, shape, broadcast_dimensions, **_):
    """``broadcast_in_dim`` left to NumPy's broadcasting: ``x`` with 1s on the new axes."""
    view = [1] * len(shape)
    for k, d in enumerate(broadcast_dimensions):
        view[d] = x.shape[k]
    return np.reshape(x, view)


def _reduce(ufunc):
    def run(x, axes, **_):
        r = ufunc.reduce(x, axis=tuple(axes), dtype=x.dtype)
        if ufunc in (np.maximum, np.minimum) and _float(x.dtype):
            z = r == 0
            if np.any(z):  # XLA: -0 < +0, so a max of zeros is +0 unless all are -0
                sign = np.signbit(x) if ufunc is np.maximum else ~np.signbit(x)
                other = np.logical_or.reduce((x == 0) & ~sign, axis=tuple(axes))
                r = np.where(z, np.where(other, 0.0, -0.0) * (1 if ufunc is np.maximum else -1),
                             r).astype(x.dtype)  # fmt: skip
        return r

    return run


def _select_n(pred, *cases):
    if pred.dtype != np.dtype(bool) or len(cases) != 2:
        raise Unsupported("select_n with an integer selector")
    return np.where(pred, cases[1], cases[0])


def _squeeze(x, dimensions, **_):
    return np.squeeze(x, axis=tuple(dimensions))


def _reshape(x, new_sizes, dimensions=None, **_):
    if dimensions is not None:
        raise Unsupported("reshape with dimensions")
    return np.reshape(x, tuple(new_sizes))


def _transpose(x, permutation, **_):
    return np.transpose(x, permutation)


def _slice(x, start_indices, limit_indices, strides=None, **_):
    steps = strides or [1] * x.ndim
    return x[tuple(slice(a, b, c) for a, b, c in zip(start_indices, limit_indices, steps))]


def _concatenate(*xs, dimension, **_):
    return np.concatenate(xs, axis=dimension)


def _stack(*xs, axis, **_):
    return np.stack(xs, axis=axis)


def _unstack(x, axis, **_):
    return tuple(np.take(x, i, axis=axis) for i in range(x.shape[axis]))


def _split(x, sizes, axis, **_):
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


def _pad(x, value, padding_config, **_):
    """lax.pad: low/high edges (negative ones crop) and interior padding."""
    grow = [(max(lo, 0), max(hi, 0), inner) for lo, hi, inner in padding_config]
    shape = [lo + (n + (n - 1) * inner if n else 0) + hi
             for n, (lo, hi, inner) in zip(x.shape, grow)]  # fmt: skip
    out = np.full(shape, value, dtype=x.dtype)
    out[tuple(slice(lo, lo + (n - 1) * (inner + 1) + 1 if n else lo, inner + 1)
              for n, (lo, _, inner) in zip(x.shape, grow))] = x  # fmt: skip
    crop = tuple(slice(-lo if lo < 0 else 0, (s + hi) if hi < 0 else s)
                 for s, (lo, hi, _) in zip(shape, padding_config))  # fmt: skip
    return out[crop]


def _rev(x, dimensions, **_):
    return np.flip(x, axis=tuple(dimensions))


def _iota(dtype, shape, dimension, **_):
    view = [1] * len(shape)
    view[dimension] = shape[dimension]
    r = np.arange(shape[dimension], dtype=np.dtype(dtype)).reshape(view)
    return np.ascontiguousarray(np.broadcast_to(r, tuple(shape)))


def _starts(x, starts, sizes):
    # XLA clamps a dynamic start so that the whole window lies inside the operand
    return tuple(min(max(int(s), 0), n - k) for s, n, k in zip(starts, x.shape, sizes))


def _dynamic_slice(x, *starts, slice_sizes, **_):
    st = _starts(x, starts, slice_sizes)
    return x[tuple(slice(a, a + k) for a, k in zip(st, slice_sizes))]


def _dynamic_update_slice(x, update, *starts):
    st = _starts(x, starts, update.shape)
    out = np.array(x)
    out[tuple(slice(a, a + k) for a, k in zip(st, update.shape))] = update
    return out


def _fill(dtype, value):
    if value is not None:
        return value
    if dtype.kind == "f" or dtype in _FLOATS:
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return True


_MODES = ("CLIP", "PROMISE_IN_BOUNDS", "FILL_OR_DROP")


def _windows(x, idx, sizes, start_map, op_batch, idx_batch, clip):
    """The windows of a gather or scatter (the index vector last, as jax emits it): the
    operand index of every window element, shape ``batch + sizes`` per operand dim, and
    whether each window lies inside the operand. ``clip``: starts are clamped so the
    window fits (then every window is inside)."""
    idx = np.asarray(idx).astype(np.int64)
    batch = idx.shape[:-1]
    nb, tail = len(batch), (1,) * x.ndim
    starts = np.zeros(batch + (x.ndim,), np.int64)
    for k, d in enumerate(start_map):
        starts[..., d] = idx[..., k]
    for d, b in zip(op_batch, idx_batch):  # operand dim d follows batch dim b of the indices
        starts[..., d] = np.arange(batch[b]).reshape([-1 if e == b else 1 for e in range(nb)])
    top = np.asarray(x.shape, np.int64) - np.asarray(sizes, np.int64)
    if clip:
        starts = np.clip(starts, 0, top)
    inside = np.all((starts >= 0) & (starts <= top), axis=-1).reshape(batch + tail)
    starts = np.clip(starts, 0, np.maximum(top, 0))
    full = tuple(batch) + tuple(sizes)
    grids = []
    for d, k in enumerate(sizes):
        view = [1] * (nb + x.ndim)
        view[nb + d] = k
        g = starts[..., d].reshape(batch + tail) + np.arange(k).reshape(view)
        grids.append(np.broadcast_to(g, full))
    return batch, grids, inside


def _gather(x, idx, dimension_numbers, slice_sizes, mode, fill_value=None, **_):
    """XLA's gather: each start is clamped so its window fits (``CLIP``,
    ``PROMISE_IN_BOUNDS``), or a window that does not fit is filled (``FILL_OR_DROP``)."""
    offset_dims, collapsed, start_map, op_batch, idx_batch = dimension_numbers
    if mode not in _MODES:
        raise Unsupported(f"gather mode {mode}")
    fill = mode == "FILL_OR_DROP"
    batch, grids, inside = _windows(x, idx, slice_sizes, start_map, op_batch, idx_batch,
                                    not fill)  # fmt: skip
    g = x[tuple(grids)] if x.ndim else np.broadcast_to(x, batch)
    if fill and not inside.all():
        g = np.where(inside, g, np.asarray(_fill(x.dtype, fill_value), x.dtype))
    keep = [k for d, k in enumerate(slice_sizes) if d not in collapsed and d not in op_batch]
    g = g.reshape(batch + tuple(keep))
    nb, rank = len(batch), len(batch) + len(keep)
    perm, b, o = [], iter(range(nb)), iter(range(nb, rank))
    for pos in range(rank):
        perm.append(next(o) if pos in offset_dims else next(b))
    return np.transpose(g, perm)


def _scatter_add(x, idx, upd, dimension_numbers, mode, **_):
    """XLA's scatter-add: each window of ``upd`` is added at its start, in the order of
    the updates (``np.add.at``); a window that does not fit is skipped, or its start
    clamped (``CLIP``)."""
    return _scatter_into(x, idx, upd, dimension_numbers, mode, add=True)


def _scatter(x, idx, upd, dimension_numbers, mode, **_):
    """XLA's scatter (the updates replace): windows that overlap have no defined order in
    XLA, so a call where two written elements meet runs compiled."""
    return _scatter_into(x, idx, upd, dimension_numbers, mode, add=False)


def _scatter_into(x, idx, upd, dimension_numbers, mode, add):
    win_dims, inserted, start_map, op_batch, idx_batch = dimension_numbers
    if mode not in _MODES:
        raise Unsupported(f"scatter mode {mode}")
    it = iter(upd.shape[d] for d in win_dims)
    sizes = [1 if d in inserted or d in op_batch else next(it) for d in range(x.ndim)]
    batch, grids, inside = _windows(x, idx, sizes, start_map, op_batch, idx_batch,
                                    mode == "CLIP")  # fmt: skip
    order = [d for d in range(upd.ndim) if d not in win_dims] + list(win_dims)
    full = tuple(batch) + tuple(sizes)
    u = np.transpose(upd, order).reshape(full)
    keep = np.broadcast_to(inside, full)
    out = np.array(x)
    where = tuple(g[keep] for g in grids)
    if add:
        np.add.at(out, where, u[keep])
        return out
    if where and where[0].size:
        flat = np.ravel_multi_index(where, x.shape)
        if np.unique(flat).size != flat.size:
            raise Unsupported("a scatter writing one element twice")
    out[where] = u[keep]
    return out


_DOT_TYPES = {np.dtype(np.float32), np.dtype(np.float64)}


def _dot_general(a, b, dimension_numbers, preferred_element_type=None, **_):
    """``dot_general`` by NumPy's matmul (BLAS): the sums may add in another order than
    XLA's (the reductions' tolerance). float32/float64 and integers only: NumPy's float16
    matmul rounds every partial sum, XLA:CPU's does not."""
    (ca, cb), (ba, bb) = dimension_numbers
    dt = np.dtype(preferred_element_type) if preferred_element_type else np.result_type(a, b)
    if dt not in _DOT_TYPES and dt.kind not in "iu":
        raise Unsupported(f"dot_general in {dt}")
    fa = [d for d in range(a.ndim) if d not in ca and d not in ba]
    fb = [d for d in range(b.ndim) if d not in cb and d not in bb]
    bshape = tuple(a.shape[d] for d in ba)
    ashape, bfree = tuple(a.shape[d] for d in fa), tuple(b.shape[d] for d in fb)
    k = math.prod(a.shape[d] for d in ca)
    A = np.transpose(a, [*ba, *fa, *ca]).astype(dt).reshape(math.prod(bshape), -1, k)
    B = np.transpose(b, [*bb, *cb, *fb]).astype(dt).reshape(math.prod(bshape), k, -1)
    return np.matmul(A, B).reshape(bshape + ashape + bfree)


def _argm(fn):
    def run(x, axes, index_dtype, **_):
        return fn(x, axis=axes[0]).astype(np.dtype(index_dtype))

    return run


def _clamp(lo, x, hi):
    return _min(_max(x, lo), hi)


# primitive name -> (function of the operands and the eqn's params, whether the params
# are passed). Each gives XLA:CPU's bits for the primitive (tests/ops/test_host_programs).
_PRIMS = {
    "add": (np.add, False),
    "add_any": (np.add, False),
    "sub": (np.subtract, False),
    "mul": (np.multiply, False),
    "div": (_div, False),
    "rem": (_rem, False),
    "max": (_max, False),
    "min": (_min, False),
    "neg": (np.negative, False),
    "abs": (np.abs, False),
    "sign": (_sign, False),
    "sqrt": (np.sqrt, False),
    "exp": (_exp, True),
    "floor": (np.floor, False),
    "ceil": (np.ceil, False),
    "square": (np.square, False),
    "eq": (np.equal, False),
    "ne": (np.not_equal, False),
    "lt": (np.less, False),
    "le": (np.less_equal, False),
    "gt": (np.greater, False),
    "ge": (np.greater_equal, False),
    "and": (np.bitwise_and, False),
    "or": (np.bitwise_or, False),
    "xor": (np.bitwise_xor, False),
    "not": (np.invert, False),
    "is_finite": (np.isfinite, False),
    "select_n": (_select_n, False),
    "clamp": (_clamp, False),
    "integer_pow": (_integer_pow, True),
    "convert_element_type": (_convert, True),
    "broadcast_in_dim": (_broadcast_in_dim, True),
    "reshape": (_reshape, True),
    "squeeze": (_squeeze, True),
    "transpose": (_transpose, True),
    "reduce_sum": (_reduce(np.add), True),
    "reduce_prod": (_reduce(np.multiply), True),
    "reduce_max": (_reduce(np.maximum), True),
    "reduce_min": (_reduce(np.minimum), True),
    "reduce_and": (_reduce(np.bitwise_and), True),
    "reduce_or": (_reduce(np.bitwise_or), True),
    "argmax": (_argm(np.argmax), True),
    "argmin": (_argm(np.argmin), True),
    # window and index moves: exact at any values, tied to the traced shapes
    "slice": (_slice, True),
    "concatenate": (_concatenate, True),
    "stack": (_stack, True),
    "split": (_split, True),
    "unstack": (_unstack, True),
    "pad": (_pad, True),
    "rev": (_rev, True),
    "iota": (_iota, True),
    "dynamic_slice": (_dynamic_slice, True),
    "dynamic_update_slice": (_dynamic_update_slice, False),
    "gather": (_gather, True),
    "scatter-add": (_scatter_add, True),
    "scatter": (_scatter, True),
    "dot_general": (_dot_general, True),
}
_SHAPED = ("broadcast_in_dim", "reshape", "squeeze", "transpose", "argmax", "argmin", "slice",
           "concatenate", "stack", "split", "unstack", "pad", "rev", "iota", "dynamic_slice",
           "dynamic_update_slice", "gather", "scatter-add", "scatter", "dot_general")  # fmt: skip
# primitives computed element by element (NumPy broadcasting their operands is exact)
_ELEMENTWISE = ("add", "add_any", "sub", "mul", "div", "rem", "max", "min", "neg", "abs",
                "sign", "sqrt", "floor", "ceil", "square", "exp", "eq", "ne", "lt", "le",
                "gt", "ge", "and", "or", "xor", "not", "is_finite", "select_n", "clamp",
                "integer_pow", "convert_element_type", "ident")  # fmt: skip
_REDUCES = ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or")
# exp ends in a product (its 2**n scaling) that XLA may fuse with a following add
_PRODUCTS = ("mul", "square", "integer_pow", "exp")
_SUMS = ("add", "add_any", "sub", "scatter-add")
_CARRY = ("neg", "broadcast_in_dim", "reshape", "squeeze", "transpose", "select_n", "slice",
          "concatenate", "stack", "split", "unstack", "pad", "rev", "dynamic_slice",
          "dynamic_update_slice", "gather", "scatter", "clamp")  # fmt: skip
# sums whose order NumPy may not share with XLA: equal within rounding, not bit for bit
_ORDERED = ("reduce_sum", "reduce_prod", "dot_general", "scatter-add")
_PASS = ("optimization_barrier", "stop_gradient", "copy", "copy_p")
_CALLS = {
    "jit": "jaxpr",
    "pjit": "jaxpr",
    "custom_jvp_call": "call_jaxpr",
    "custom_vjp_call": "call_jaxpr",
    "closed_call": "call_jaxpr",
}
_PARAMS = {
    "exp": ("accuracy",),
    "integer_pow": ("y",),
    "convert_element_type": ("new_dtype",),
    "broadcast_in_dim": ("shape", "broadcast_dimensions"),
    "reshape": ("new_sizes", "dimensions"),
    "squeeze": ("dimensions",),
    "transpose": ("permutation",),
    "reduce_sum": ("axes",),
    "reduce_prod": ("axes",),
    "reduce_max": ("axes",),
    "reduce_min": ("axes",),
    "reduce_and": ("axes",),
    "reduce_or": ("axes",),
    "argmax": ("axes", "index_dtype"),
    "argmin": ("axes", "index_dtype"),
    "slice": ("start_indices", "limit_indices", "strides"),
    "concatenate": ("dimension",),
    "stack": ("axis",),
    "split": ("sizes", "axis"),
    "unstack": ("axis",),
    "pad": ("padding_config",),
    "rev": ("dimensions",),
    "iota": ("dtype", "shape", "dimension"),
    "dynamic_slice": ("slice_sizes",),
    "gather": ("dimension_numbers", "slice_sizes", "mode", "fill_value"),
    "scatter-add": ("dimension_numbers", "mode"),
    "scatter": ("dimension_numbers", "mode"),
    "dot_general": ("dimension_numbers", "preferred_element_type"),
}


def _steps(jaxpr, consts):
    """The jaxpr as a flat list of ``(primitive name, in_slots, out_slots, params,
    dtypes)`` (calls inlined; slots index one environment), with the input and output
    slots, the literals and consts, and the rank-0 slots. Raises :class:`Unsupported` for
    a primitive not in the table or a product that a sum takes."""
    slots = {}
    init = []  # (slot, value): literals and consts

    scalars = set()  # slots of rank 0

    def slot(v):
        if type(v).__name__ == "Literal":
            k = len(slots) + len(init) + 10**9  # unique
            arr = np.asarray(v.val, dtype=v.aval.dtype)
            init.append((k, arr))
            if arr.ndim == 0:
                scalars.add(k)
            return k
        if v not in slots:
            slots[v] = len(slots)
            if getattr(v.aval, "ndim", None) == 0:
                scalars.add(slots[v])
        return slots[v]

    steps = []
    products = set()  # slots holding a product: an add of one is fused into an FMA by XLA
    spread = set()  # slots holding a broadcast value: XLA may divide by one as a * (1 / b)

    def walk(jx, ins, cs):
        for var, val in zip(jx.constvars, cs):
            init.append((slot(var), _check(np.asarray(val))))
        for var, k in zip(jx.invars, ins):
            slots[var] = k
        for e in jx.eqns:
            name = e.primitive.name
            in_k = [slot(v) for v in e.invars]
            if name in _CALLS:
                inner = e.params[_CALLS[name]]
                inner_jaxpr = getattr(inner, "jaxpr", inner)
                inner_consts = getattr(inner, "consts", ())
                sub_ins = [slot(v) for v in inner_jaxpr.invars]
                for a, b in zip(in_k, sub_ins):
                    steps.append(("ident", [a], [b], None, (None,)))
                    if a in products:
                        products.add(b)
                inner_out = walk(inner_jaxpr, sub_ins, inner_consts)
                for o, k in zip(e.outvars, inner_out):
                    steps.append(("ident", [k], [slot(o)], None, (None,)))
                    if k in products:
                        products.add(slot(o))
                continue
            out_k = [slot(v) for v in e.outvars]
            dts = tuple(np.dtype(v.aval.dtype) for v in e.outvars)
            if name in _PASS:
                for a, b in zip(in_k, out_k):
                    steps.append(("ident", [a], [b], None, (None,)))
                    if a in products:
                        products.add(b)
                continue
            if name in _SUMS and products.intersection(in_k):
                # XLA:CPU contracts a*b + c into one fused multiply-add (one rounding)
                raise Unsupported("a sum of a product (XLA fuses it into an FMA)")
            if (name in _PRODUCTS or (name in _CARRY and products.intersection(in_k))) and any(
                d.kind in "fc" for d in dts
            ):  # an integer product is exact: adding it to anything is too
                products.update(out_k)
            if name == "div" and _spread_divisor(e, in_k[1], spread):
                # XLA rewrites a / broadcast(b) into a * broadcast(1 / b) for some shapes
                raise Unsupported("a division by a broadcast value")
            if (name == "broadcast_in_dim" and _grows(e)) or (
                name in _MOVES and spread.intersection(in_k)
            ):
                spread.update(out_k)
            entry = _PRIMS.get(name)
            if entry is None:
                raise Unsupported(f"primitive {name}")
            params = None
            if entry[1]:
                params = {p: _plain(e.params[p]) for p in _PARAMS[name] if p in e.params}
            steps.append((name, in_k, out_k, params, dts))
        return [slot(v) for v in jx.outvars]

    top_in = [slot(v) for v in jaxpr.invars]
    outs = walk(jaxpr, top_in, consts)
    return steps, top_in, outs, init, sorted(scalars)


_MOVES = ("reshape", "squeeze", "transpose", "convert_element_type", "broadcast_in_dim", "neg")


def _grows(e):
    return math.prod(e.outvars[0].aval.shape) > math.prod(e.invars[0].aval.shape)


def _spread_divisor(e, k, spread):
    """Whether the divisor of ``div`` eqn ``e`` (slot ``k``) is a broadcast value: made
    by a broadcast (an optimization barrier stops that), or smaller than the quotient
    (broadcast by the division itself)."""
    if k in spread:
        return True
    return math.prod(e.invars[1].aval.shape) < math.prod(e.outvars[0].aval.shape)


def _ident(x):
    return x


def _plain(v):
    """A jaxpr parameter as JSON's types (dtypes by name, tuples as lists)."""
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, enum.Enum):  # gather's mode
        return v.name
    return np.dtype(v).name


class HostProgram:
    """A translated program: called like the compiled one, on host arrays. It is data
    (primitive names, slots, plain parameters, constants): :meth:`to_json` and
    :meth:`from_json` carry it between processes without executing anything.

    ``exact``: no step sums in an order of its own (:data:`_ORDERED`), so the outputs
    are XLA's bit for bit.

    ``generic``: every step is elementwise (a rank-0 value broadcast by NumPy's rules
    rather than to the class shape) or a reduction over axes of a full array, so
    :meth:`raw` runs it on unpadded arrays of any shape with the same values per
    element."""

    __slots__ = ("steps", "ins", "outs", "init", "in_dtypes", "specs", "scalars", "generic",
                 "exact", "out_specs", "_run", "_run_raw", "_env")  # fmt: skip

    def __init__(self, steps, ins, outs, init, in_dtypes, specs, scalars):
        self.steps, self.ins, self.outs, self.init = steps, ins, outs, init
        self.in_dtypes = [np.dtype(d) for d in in_dtypes]
        self.specs, self.scalars = specs, scalars
        self.out_specs = [(tuple(shape), np.dtype(d)) for shape, d in specs]
        run, raw = [], []
        small = set(scalars)  # slots whose value may be rank 0 in raw()
        lazy = set()  # slots whose value in raw() may have 1s where NumPy will broadcast
        generic = True
        for name, in_k, out_k, params, dts in steps:
            fn = _ident if name == "ident" else _PRIMS[name][0]
            if params is not None and "new_dtype" in params:
                params = dict(params, new_dtype=np.dtype(params["new_dtype"]))
            dts = tuple(None if d is None else np.dtype(d) for d in dts)
            run.append((fn, in_k, out_k, params, dts))
            if name == "broadcast_in_dim" and in_k[0] in small:
                raw.append((_ident, in_k, out_k, None, dts))
                small.update(out_k)
                continue
            if name == "broadcast_in_dim":
                # raw(): the operand's own sizes, 1 on the new axes; the elementwise steps
                # after it broadcast (a reduction's VJP spreads its cotangent this way)
                raw.append((_expand, in_k, out_k, params, dts))
                lazy.update(out_k)
                continue
            raw.append(run[-1])
            if name in _SHAPED or (name in _REDUCES and in_k[0] in small):
                generic = False
            elif lazy.intersection(in_k) and (name in _REDUCES or name not in _ELEMENTWISE):
                generic = False  # a reduction or move of a value not yet broadcast
            elif name not in _REDUCES and all(k in small for k in in_k):
                small.update(out_k)
            elif lazy.intersection(in_k):
                lazy.update(out_k)
        self.generic = generic
        self.exact = not any(step[0] in _ORDERED for step in steps)
        self._run, self._run_raw = run, raw
        self._env = dict(init)

    def __call__(self, *args):
        """The outputs for padded arguments of the traced shapes."""
        res = self._go(self._run, args)
        return [r if r.shape == s[0] else np.broadcast_to(r, s[0])
                for r, s in zip(res, self.out_specs)]  # fmt: skip

    def raw(self, *args, checked=False):
        """The outputs for unpadded arguments (``generic`` programs): rank-0 values are
        left to broadcast, so an output may be rank 0. ``checked``: the array arguments
        are known to hold no value XLA:CPU flushes (``buckets.host_views``)."""
        return self._go(self._run_raw, args, checked)

    def _go(self, steps, args, checked=False):
        """Run ``steps`` with NumPy's floating-point errors ignored (XLA raises none)."""
        if _QUIET is None:
            with np.errstate(all="ignore"):
                return self._steps(steps, args, checked)
        var, state = _QUIET
        token = var.set(state)
        try:
            return self._steps(steps, args, checked)
        finally:
            var.reset(token)

    def _steps(self, steps, args, checked):
        env = dict(self._env)
        for k, a, d in zip(self.ins, args, self.in_dtypes):
            h = np.asarray(a, d)
            env[k] = h if checked and h is a else _check(h)
        for fn, in_k, out_k, params, dts in steps:
            vals = [env[k] for k in in_k]
            res = fn(*vals, **params) if params is not None else fn(*vals)
            if type(res) is not tuple:  # split, unstack: a tuple, even of one
                res = (res,)
            for k, r, d in zip(out_k, res, dts):
                r = np.asarray(r)
                if d is not None:
                    if r.dtype != d:
                        raise Unsupported(f"{fn} gave {r.dtype}, the program {d}")
                    if d in _TINY:
                        _check(r)
                env[k] = r
        return [env[k] for k in self.outs]

    def to_json(self):
        init = [[k, a.dtype.name, list(a.shape), a.reshape(-1).tolist()] for k, a in self.init]
        steps = [[n, i, o, p, [None if d is None else np.dtype(d).name for d in dts]]
                 for n, i, o, p, dts in self.steps]  # fmt: skip
        body = {"steps": steps, "ins": self.ins, "outs": self.outs, "init": init,
                "in_dtypes": [d.name for d in self.in_dtypes], "specs": self.specs,
                "scalars": self.scalars}  # fmt: skip
        return json.dumps(body)

    @classmethod
    def from_json(cls, text):
        """A program from :meth:`to_json`'s text; raises ``ValueError`` (and the
        like) on text that is not one."""
        b = json.loads(text)
        for name, _, _, params, _ in b["steps"]:
            if name != "ident" and name not in _PRIMS:
                raise ValueError(f"unknown primitive {name!r}")
            if params is not None and not set(params) <= set(_PARAMS.get(name, ())):
                raise ValueError(f"parameters {sorted(params)} of {name!r}")
        init = [(int(k), np.asarray(v, dtype=np.dtype(d)).reshape(shape))
                for k, d, shape, v in b["init"]]  # fmt: skip
        steps = [(n, list(i), list(o), p, tuple(dts)) for n, i, o, p, dts in b["steps"]]
        return cls(steps, b["ins"], b["outs"], init, b["in_dtypes"], b["specs"], b["scalars"])


def translate(fn, avals, vector_body=False):
    """A :class:`HostProgram` computing ``fn`` at the argument types ``avals`` as
    XLA:CPU's program would, or None when its jaxpr needs a primitive outside the table
    (or jax's jaxpr format is not the one this reads). ``vector_body``: see
    :func:`from_jaxpr`."""
    try:
        return from_jaxpr(jax.make_jaxpr(fn)(*avals), vector_body)
    except Exception:  # noqa: BLE001 - Unsupported, or another jax's jaxpr: compile
        return None


def runs_exactly(closed):
    """Whether the host runs a closed jaxpr as XLA:CPU would, bit for bit: it translates
    (:func:`from_jaxpr`) and has no sum NumPy may order otherwise. A cheap first look at a
    forward before tracing what uses it (its backward)."""
    try:
        return from_jaxpr(closed).exact
    except Exception:  # noqa: BLE001 - Unsupported, or another jax's jaxpr
        return False


def _flat_vectors(closed):
    """Every array of the program (inputs, outputs, intermediates) is rank 0, or rank 1
    and a multiple of 256 long: XLA's loops then run each element in their vector body,
    never in a scalar remainder."""

    def avals(jx):
        yield from (v.aval for v in (*jx.invars, *jx.outvars))
        for e in jx.eqns:
            yield from (v.aval for v in e.outvars)
            inner = e.params.get(_CALLS.get(e.primitive.name, ""), None)
            if inner is not None:
                yield from avals(getattr(inner, "jaxpr", inner))

    return all(a.ndim == 0 or (a.ndim == 1 and a.shape[0] % 256 == 0) for a in avals(closed.jaxpr))


def from_jaxpr(closed, vector_body=False):
    """The :class:`HostProgram` of a closed jaxpr; raises :class:`Unsupported` for a
    primitive outside the table (or a sum of a product).

    ``exp`` is the vector body's (:func:`_exp`); an exact-shape program computes the
    last ``n mod 8`` elements in a scalar loop, up to an ulp apart. So a program with
    ``exp`` is translated only for a size class (``vector_body``) whose arrays are flat
    and a multiple of 256 long."""
    steps, ins, outs, init, scalars = _steps(closed.jaxpr, closed.consts)
    if any(step[0] == "exp" for step in steps) and not (vector_body and _flat_vectors(closed)):
        raise Unsupported("exp outside a flat size class (its scalar remainder differs)")
    dtypes = [np.dtype(v.aval.dtype).name for v in closed.jaxpr.invars]
    specs = [[list(v.aval.shape), np.dtype(v.aval.dtype).name] for v in closed.jaxpr.outvars]
    return HostProgram(steps, ins, outs, init, dtypes, specs, scalars)
