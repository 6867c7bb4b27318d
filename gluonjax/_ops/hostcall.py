"""Exact-shape host programs: a function on shapes it has not seen runs its own jaxpr in
NumPy instead of compiling it.

Size classes (:mod:`gluonjax._ops.buckets`) serve elementwise ops and reductions. Every
other eager op, and an executor's forward and backward graph, compile one XLA program
per input shape: 30-100 ms on the CPU, hundreds of MXNet ops, for a shape that a test
loop or a notebook cell may use once. When the function's jaxpr holds only primitives
of the host table (:mod:`gluonjax._ops.host`: IEEE-exact arithmetic, comparisons,
selects, shape and index moves, ``gather``, sums and ``dot_general``), NumPy runs the
traced steps at that shape: one trace (about 1 ms), no lowering, no compile. A
primitive outside the table turns the host path off for the whole function (one trace
lost, once); a call that meets a subnormal value runs compiled (XLA:CPU flushes them).

Values: bit for bit XLA's for everything but sums, ``scatter-add`` and ``dot_general``,
which may add in another order (the reductions' tolerance; tested). Such a program runs
on the host once per shape, so a second call on that shape (a loop, a finite-difference
check comparing calls) gets the compiled program's rounding every time. An exact one runs
until :data:`buckets.HOT` calls on one set of shapes; then the caller compiles as before,
so loops on fixed shapes run XLA's fused program. Only concrete single-device CPU arrays
take this path.
``GLUONJAX_HOST_OPS=0`` (or ``GLUONJAX_SIZE_CLASSES=0``) turns it off.
"""

from __future__ import annotations

import jax
import numpy as np

from .._caches import LRU
from . import buckets
from . import host as _host

__all__ = ["HostCalls", "run", "forward", "STATS", "HOST_CALLS"]

STATS = {"made": 0, "runs": 0, "off": 0}
# a whole block's program (hybridized forward, fused backward) on the host: its first calls
# per set of shapes only (a block built and called once or twice: a test, a notebook cell);
# a third call is a loop's, which gets the compiled program
HOST_CALLS = 2
_SEEN_MAX = 1 << 14
_SCALARS = (int, float, bool)


def _on():
    return buckets.enabled() and buckets._host_on()


class HostCalls:
    """``fn`` (a pure function of arrays in pytrees) run by NumPy, per argument shapes.

    ``self(*args)`` returns ``fn(*args)`` (jax arrays, in ``fn``'s output structure) or
    None: the caller runs its compiled form. ``count=False``: the caller counts calls
    per shape itself (an eager op's ``_seen``). ``jitted``: ``jax.jit(fn)``, whose trace
    (kept by jax) the caller's compile of the same shapes then reuses. ``exact=True``:
    only a program whose every value is bit for bit XLA's (no sum NumPy may order
    otherwise) runs on the host; another turns the host path off. ``hot``: calls per set
    of shapes on the host before the compiled form takes over (default
    :data:`buckets.HOT`); given, the host path then turns off for good, so a caller
    that serves one set of shapes (a traced signature, a backward plan) pays nothing more
    per call."""

    __slots__ = ("fn", "progs", "seen", "off", "count", "jitted", "exact", "hot")

    def __init__(self, fn, count=True, jitted=None, exact=False, hot=None):
        self.fn, self.count, self.off, self.jitted = fn, count, False, jitted
        self.exact, self.hot = exact, hot
        self.progs = {}
        self.seen = {}

    def __call__(self, *args):
        if self.off or not _on():
            return None
        leaves, tree = jax.tree_util.tree_flatten(args)
        key = _key(leaves, tree)
        if key is None:
            return None
        if self.count:
            c = self.seen.get(key, 0)
            if self.hot is None:
                if c >= buckets.HOT:
                    return None
            elif c >= self.hot:
                self.off = True
                return None
            if len(self.seen) >= _SEEN_MAX:
                self.seen.clear()
            self.seen[key] = c + 1
        hit = self.progs.get(key)
        if hit is None:
            if key in self.progs:
                return None  # this shape did not trace: the compiled path raises its error
            hit = self._translate(key, leaves, tree)
            if hit is None:
                return None
        prog, out_tree = hit
        try:
            outs = prog(*[np.asarray(v) for v in leaves])
        except Exception:  # noqa: BLE001 - Unsupported (a subnormal value, which XLA:CPU
            return None  # flushes), or anything else: the compiled program runs the call
        if not prog.exact:
            # sums in NumPy's order: only this first call, so that repeated calls on one
            # shape (a finite-difference loop) all get the compiled program's rounding
            self.progs[key] = None
        STATS["runs"] += 1
        return jax.tree_util.tree_unflatten(out_tree, [buckets.to_device(o) for o in outs])

    def _trace(self, leaves, tree):
        if self.jitted is not None:
            traced = self.jitted.trace(*jax.tree_util.tree_unflatten(tree, leaves))
            return traced.jaxpr, jax.tree_util.tree_structure(traced.out_info)
        box = []

        def flat(*vals):
            out = self.fn(*jax.tree_util.tree_unflatten(tree, vals))
            outs, out_tree = jax.tree_util.tree_flatten(out)
            box.append(out_tree)
            return outs

        return jax.make_jaxpr(flat)(*leaves), box[-1]

    def _translate(self, key, leaves, tree):
        try:
            closed, out_tree = self._trace(leaves, tree)
        except Exception:  # noqa: BLE001 - the op's error: the compiled path raises it
            if len(self.progs) < 64:
                self.progs[key] = None
            return None
        try:
            prog = _host.from_jaxpr(closed)
            if self.exact and not prog.exact:
                raise _host.Unsupported("a sum NumPy may order otherwise")
        except Exception:  # noqa: BLE001 - a primitive outside the table: off for good
            self.off = True
            self.progs.clear()
            STATS["off"] += 1
            return None
        if len(self.progs) >= 256:
            self.progs.clear()
        STATS["made"] += 1
        hit = self.progs[key] = (prog, out_tree)
        return hit


def _key(leaves, tree):
    """``(tree, (shape, dtype, weak type) per leaf)``, or None when a leaf is not a
    concrete CPU array, a NumPy value or a Python scalar."""
    arrays = [v for v in leaves if type(v) is buckets._ARRAY]
    if arrays and not buckets._concrete_cpu(arrays):
        return None
    key = [tree, jax.config.jax_enable_x64]  # the trace's types depend on it
    for v in leaves:
        t = type(v)
        if t is buckets._ARRAY:
            key.append((v.shape, v.dtype, v.weak_type))
        elif t is np.ndarray or isinstance(v, np.generic):
            key.append((v.shape, v.dtype))
        elif t in _SCALARS:
            key.append(t)
        else:
            return None
    return tuple(key)


_OPS = LRU(4096, "exact-shape host programs of eager ops")


def run(op, static_key, arrays, n):
    """An eager call of ``op`` (no size class) on shapes it has not seen
    :data:`buckets.HOT` times, computed by NumPy, or None: the op's compiled kernel."""
    if buckets.seen(op, static_key, arrays, n):
        return None
    return forward(op, static_key, arrays)


def forward(op, static_key, arrays):
    """``op``'s result computed by NumPy (the call already counted), or None."""
    k = (op.name, static_key)
    calls = _OPS.get(k)
    if calls is None:
        calls = _OPS.put(k, HostCalls(op.bound(static_key), count=False))
    try:
        return calls(*arrays)
    except Exception:  # noqa: BLE001 - the exact kernel runs the call, or raises its error
        return None
