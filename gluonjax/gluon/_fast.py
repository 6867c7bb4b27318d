"""The plain compiled call of a hybridized block: not recording, no random key.

``plain_jits(cached)`` gives one ``jax.jit`` per training mode of
``(param_values, *inputs) -> output``: no static argument and, when the traced
forward writes no state, nothing but the output in the result, so a call costs
what a hand-written ``jax.jit`` call costs. A forward that writes state
(BatchNorm's running statistics in training mode) returns
``WithUpdates(out, updates)`` instead; this is decided per trace. A forward that
draws random numbers raises ``random.NeedsKey`` while tracing, and the caller
switches to the keyed variant (``CachedGraph.jit``).

``FastCall`` is the state of ``HybridBlock.__call__``'s hot path (one NDArray
input): it keeps the list of parameter values and rebuilds it only when a
parameter array was written (``PROCESS.param_version``).

**Convolution weights in the kernels' layout.** On XLA:CPU a convolution runs with
an HWIO kernel; a program given MXNet's OIHW weights transposes every one of them
on every call (a ResNet-50 inference at batch 1: 110 transposes, more than half of
its time). So the plain programs take each 4-D floating parameter (but depthwise
``(C, 1, kh, kw)`` weights, which XLA:CPU runs faster from OIHW) as a *twin*: its
value transposed to ``(kh, kw, in, out)`` and wrapped in a 1-tuple, made once per
parameter value (the twin is rebuilt only when the parameter array was written). The
program transposes it back first thing, which XLA folds into the convolution's
operand layout (no transpose left). The 1-tuples make which parameters are twins a
part of the call's pytree structure, so a traced program and the values it is called
with always agree. CPU only (``_compile.weight_twins``); ``GLUONJAX_WEIGHT_TWINS=0``
turns it off.

**Options per program.** The first call of a plain function traces it once, and the
program's content picks its XLA options (``_compile.options_for``: a program with
grouped convolutions keeps YNNPACK); the choice holds for the block from then on, and
the trace is reused by the compile.
"""

from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
import numpy as np

from .. import _compile
from .._caches import PROCESS
from .._ops.hostcall import HOST_CALLS, HostCalls
from .._tape.state import _local as _st
from ..ndarray.ndarray import NDArray
from ._param_array import ParamArray

__all__ = ["WithUpdates", "plain_jits", "finish", "FastCall", "is_twin", "twins"]

_DATA = operator.attrgetter("_data")
_ARRAY_TYPE = []  # the concrete type of jax arrays, looked up once a backend runs
# NDArray.__init__ only sets ``_data`` (the autograd fields default at class level), so
# the hot path builds its result as ``NEW(NDArray)`` + that one store, a little cheaper
# than a call of the class; tests/gluon/test_hybrid_fast.py checks both make the same object.
NEW = NDArray.__new__


@jax.tree_util.register_pytree_node_class
class WithUpdates:
    """A compiled forward's output with the state it wrote, ``{param index: value}``.

    Parameters
    ----------
    out : pytree of arrays
        The block's output.
    updates : dict
        New values of the parameters the forward wrote, by index in ``CachedGraph.datas``.
    """

    __slots__ = ("out", "updates")

    def __init__(self, out, updates):
        self.out, self.updates = out, updates

    def tree_flatten(self):
        return (self.out, self.updates), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


_TO_HWIO, _FROM_HWIO = (2, 3, 1, 0), (3, 2, 0, 1)


def is_twin(v):
    """Whether parameter value ``v`` (array or aval) travels as its HWIO twin: a 4-D
    floating value that is not a depthwise ``(C, 1, kh, kw)`` weight."""
    return v.ndim == 4 and v.shape[1] != 1 and jnp.issubdtype(v.dtype, jnp.floating)


@jax.jit
def _make_twins(ws):
    return [jnp.transpose(w, _TO_HWIO) for w in ws]


def twins(values, prev_src=None, prev=None):
    """``values`` with every value that :func:`is_twin` picks replaced by ``(twin,)``,
    its HWIO twin in a 1-tuple (one compiled call makes all new twins); a value that
    ``is`` the same as in ``prev_src`` reuses its twin from ``prev``. Without twins (not
    on the CPU) ``values`` is returned as is."""
    if not _compile.weight_twins():
        return values
    out = list(values)
    todo = []
    for i, v in enumerate(values):
        if v is not None and is_twin(v):
            if prev_src is not None and prev_src[i] is v:
                out[i] = prev[i]
            else:
                todo.append(i)
    if todo:
        for i, t in zip(todo, _make_twins([values[i] for i in todo])):
            out[i] = (t,)
    return out


def _untwin(pvals):
    return [jnp.transpose(v[0], _FROM_HWIO) if type(v) is tuple else v for v in pvals]


class _FirstCall:
    """A plain function before it compiles: its first calls on new shapes run on the
    host when its primitives allow (``HostCalls``: NumPy, no compile); then trace it,
    let the program pick its XLA options (``_compile.options_for``), put the compiled
    function in ``slots[mode]``."""

    __slots__ = ("plain", "slots", "mode", "host")

    def __init__(self, plain, slots, mode):
        self.plain, self.slots, self.mode = plain, slots, mode
        self.host = HostCalls(plain, jitted=jax.jit(plain), exact=True, hot=HOST_CALLS)

    def __call__(self, *args):
        res = self.host(*args)
        if res is not None:
            return res
        probe = self.host.jitted
        opts = _compile.options_for("infer", probe.trace(*args).jaxpr)
        fn = jax.jit(self.plain, compiler_options=opts) if opts else probe
        self.slots[self.mode] = fn
        return fn(*args)


def plain_jits(cached):
    """``[predict_fn, train_fn]``: ``fn(param_values, *inputs)`` compiled without a key
    (a list: each entry replaces itself with its compiled function at its first call).

    Parameters
    ----------
    cached : CachedGraph
        The hybridized block's compiled forward (its ``_pure`` is traced).
    """

    def make(training):
        def plain(pvals, *inputs):
            out, updates = cached._pure(_untwin(pvals), inputs, None, None, training)
            return WithUpdates(out, updates) if updates else out

        return plain

    slots = [None, None]
    slots[0] = _FirstCall(make(False), slots, 0)
    slots[1] = _FirstCall(make(True), slots, 1)
    return slots


def finish(res, datas):
    """Write a plain call's state updates into ``datas`` and wrap its output as NDArrays.

    Parameters
    ----------
    res : pytree of arrays or WithUpdates
        What a ``plain_jits`` function returned.
    datas : list of NDArray
        The parameter arrays, in the order the compiled function takes them.
    """
    if type(res) is WithUpdates:
        # a training-mode call that is not recorded moves no statistics (MXNet 1.x
        # moves BatchNorm's in the backward)
        if not _st.training:
            for i, v in res.updates.items():
                datas[i]._data = v
        res = res.out
    t = type(res)
    if t is tuple or t is list or t is dict or isinstance(res, tuple):  # named tuples too
        return jax.tree_util.tree_map(NDArray, res)
    return NDArray(res)


class FastCall:
    """The plain one-input call of a hybridized block and the parameter values it passes.

    ``HybridBlock.__call__`` runs it inline (a Python frame less on the hot path)::

        if f.seen != PROCESS.param_version:
            f.refresh()
        out = f.plain[mode](f.pvals, x._data)  # NeedsKey: return f.needs_key(x)
        # an array (type f.array_type) becomes an NDArray, anything else f.finish(out)

    ``pvals`` holds the convolution weights as twins (see the module's docstring);
    ``values()`` gives the same list to ``CachedGraph``'s general path.

    Parameters
    ----------
    cached : CachedGraph
        The hybridized block's compiled forward (``plain`` and ``datas`` are read).
    """

    __slots__ = ("cached", "plain", "datas", "pvals", "seen", "array_type", "tracked", "src")

    def __init__(self, cached):
        self.cached, self.plain, self.datas = cached, cached.plain, cached.datas
        self.pvals, self.seen, self.src = None, -1, None
        # arrays that are not ParamArrays do not report writes: re-read them every call
        self.tracked = all(type(d) is ParamArray for d in self.datas)
        if not _ARRAY_TYPE:
            _ARRAY_TYPE.append(type(jax.device_put(np.float32(0))))  # compiles nothing
        self.array_type = _ARRAY_TYPE[0]

    def refresh(self):
        """Re-read the parameter values (a parameter array was written since)."""
        v = PROCESS.param_version  # read before the values: a write in between only costs a rebuild
        src = list(map(_DATA, self.datas))
        self.pvals = twins(src, self.src, self.pvals)
        self.src = src
        self.seen = v if self.tracked else -1

    def values(self):
        """The current parameter values, as the compiled functions take them."""
        if self.seen != PROCESS.param_version:
            self.refresh()
        return self.pvals

    def needs_key(self, x):
        """A new trace draws random numbers: leave the plain call for good, run keyed."""
        cached = self.cached
        cached.uses_random = True
        cached.block.__dict__["_fast"] = None
        return cached([x])

    def finish(self, res):
        """Updates written and output wrapped (see :func:`finish`)."""
        return finish(res, self.datas)
