"""The compiled forward of a hybridized block (``hybridize()`` = ``jax.jit``).

``CachedGraph`` collects the block's parameters once and compiles
``pure(param_values, inputs, seed_key, counter, training)`` with ``jax.jit``;
jax retraces only for a new input signature. Under ``autograd.record()`` the
forward is one compiled call returning the VJP, and the backward one more.
"""

from __future__ import annotations

import operator

import jax
import numpy as np

from .. import _tape, _trace
from .. import autograd as _ag
from .. import random as _random
from ..base import HybridizationError, MXNetError
from ..ndarray.ndarray import NDArray

_DATA = operator.attrgetter("_data")
_APPLY: dict = {}


def _tree_apply(treedef):
    """A stable ``apply(vjp, cts)`` per output structure (a key of the fused backward)."""
    fn = _APPLY.get(treedef)
    if fn is None:

        def fn(vjp_fn, cts):
            gp, gi = vjp_fn(jax.tree_util.tree_unflatten(treedef, list(cts)))
            return tuple(gp) + tuple(gi)

        _APPLY[treedef] = fn
    return fn


_TRACER_ERRORS = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerBoolConversionError,
    jax.errors.TracerArrayConversionError,
    jax.errors.TracerIntegerConversionError,
)


def _raw(x):
    if isinstance(x, NDArray):
        return x._data
    v = getattr(x, "_value", None)  # Symbol carrying a traced value
    if v is not None:
        return v
    return x


def _is_leaf(x):
    return isinstance(x, NDArray) or hasattr(x, "_outputs")


class CachedGraph:
    """Compiled forward (and VJP) of one hybridized block."""

    def __init__(self, block, static_alloc=False):
        self.block = block
        self.params = block._all_params()
        self.datas = [p._data for p in self.params]
        self.jit = jax.jit(self._pure, static_argnums=(4,))
        # blocks without random ops run a variant that takes no key at all
        self.jit_nokey = jax.jit(
            lambda p, x, training: self._pure(p, x, None, None, training), static_argnums=(2,)
        )
        self.vjp_fwd = {}
        self.uses_random = False  # set while tracing; only then do calls consume a key
        self.fast = self._make_fast()

    def _make_fast(self):
        """``fast(x)``: one NDArray input, not recording, no randomness (the common call)."""
        datas, jit_nokey, st, nd_, get = self.datas, self.jit_nokey, _ag._st, NDArray, _DATA

        def fast(x):
            try:
                out, updates = jit_nokey(list(map(get, datas)), [x._data], st.training)
            except _random.NeedsKey:  # a new trace (e.g. training mode) draws random numbers
                self.uses_random = True
                self.block.__dict__["_fast"] = None
                return self([x])
            if updates:
                for i, v in updates.items():
                    datas[i]._data = v
            if type(out) is tuple or type(out) is list or type(out) is dict:
                return jax.tree_util.tree_map(nd_, out)
            return nd_(out)

        return fast

    def _pure(self, param_values, inputs, seed_key, counter, training):
        block = self.block
        with (
            _trace.TraceScope(self.params, param_values) as scope,
            _random.traced_key(seed_key, counter) as rnd,
            _ag._Scope(False, training),
        ):
            args = [None if v is None else NDArray(v) for v in inputs]
            try:
                out = block._traced_forward(*args)
            except _TRACER_ERRORS as err:
                raise HybridizationError(_tracer_message(block, err)) from None
            except HybridizationError as err:
                if f"'{block.name}'" in str(err):
                    raise
                raise HybridizationError(
                    f"Block '{block.name}' ({type(block).__name__}): {err}"
                ) from None
            out = jax.tree_util.tree_map(_raw, out, is_leaf=_is_leaf)
            if rnd.used:
                self.uses_random = True
            return out, scope.updates()

    def __call__(self, args):
        # the hot path: read flags and arrays, one compiled call, wrap the result
        st = _ag._st
        if len(args) == 1 and type(args[0]) is NDArray:
            raw = [args[0]._data]
        else:
            raw = [a._data if type(a) is NDArray else _raw_input(a) for a in args]
        if st.recording and self._needs_tape(args):
            key, counter = _random.peek()
            return self._recorded(args, raw, key, np.uint32(counter & 0xFFFFFFFF), st.training)
        pvals = list(map(_DATA, self.datas))
        if not self.uses_random:
            try:
                out, updates = self.jit_nokey(pvals, raw, st.training)
            except _random.NeedsKey:
                self.uses_random = True
        if self.uses_random:
            key, counter = _random.peek()
            out, updates = self.jit(pvals, raw, key, np.uint32(counter & 0xFFFFFFFF), st.training)
            _random.advance()
        if updates:
            for i, v in updates.items():
                self.datas[i]._data = v
        if type(out) is not tuple and type(out) is not list and type(out) is not dict:
            return NDArray(out)
        return jax.tree_util.tree_map(NDArray, out)

    def _needs_tape(self, args):
        return any(d._grad_req not in (None, "null") for d in self.datas) or any(
            type(a) is NDArray and _tape.needs_grad(a) for a in args
        )

    def _recorded(self, args, raw, key, counter, training):
        pmask = tuple(d._grad_req not in (None, "null") for d in self.datas)
        imask = tuple(
            type(a) is NDArray and _tape.needs_grad(a) and np.issubdtype(a.dtype, np.inexact)
            for a in args
        )
        fkey = (training, pmask, imask)
        fwd = self.vjp_fwd.get(fkey)
        if fwd is None:
            fwd = self.vjp_fwd[fkey] = jax.jit(self._make_vjp(training, pmask, imask))
        pvals = [d._data for d in self.datas]
        dp = [v for v, m in zip(pvals, pmask) if m]
        di = [v for v, m in zip(raw, imask) if m]
        out, updates, vjp_fn = fwd(dp, di, pvals, raw, key, counter)
        if self.uses_random:
            _random.advance()
        if updates:
            for i, v in updates.items():
                self.datas[i]._data = v
        leaves, treedef = jax.tree_util.tree_flatten(out)
        parents = tuple(d for d, m in zip(self.datas, pmask) if m) + tuple(
            a for a, m in zip(args, imask) if m
        )

        n_dp = sum(pmask)

        def replay(*pv):
            itp, iti = iter(pv[:n_dp]), iter(pv[n_dp:])
            p = [next(itp) if m else v for v, m in zip(pvals, pmask)]
            x = [next(iti) if m else v for v, m in zip(raw, imask)]
            res, _ = self._pure(p, x, key, counter, training)
            return tuple(jax.tree_util.tree_leaves(res))

        node = _tape.Node(
            None, parents, tuple(leaves), self.block.name, replay, vjp_fn, _tree_apply(treedef)
        )
        wrapped = [NDArray(v) for v in leaves]
        for i, w in enumerate(wrapped):
            w._node = (node, i)
        return jax.tree_util.tree_unflatten(treedef, wrapped)

    def _make_vjp(self, training, pmask, imask):
        def fwd(dp, di, pvals, raw, key, counter):
            def f(dp, di):
                itp, iti = iter(dp), iter(di)
                p = [next(itp) if m else v for v, m in zip(pvals, pmask)]
                x = [next(iti) if m else v for v, m in zip(raw, imask)]
                return self._pure(p, x, key, counter, training)

            out, vjp_fn, updates = jax.vjp(f, dp, di, has_aux=True)
            return out, updates, vjp_fn

        return fwd


def _raw_input(a):
    if a is None:
        return None
    if hasattr(a, "shape") and hasattr(a, "dtype"):
        return a
    if isinstance(a, (int, float, np.number)):
        return np.asarray(a, np.float32)
    raise MXNetError(
        f"a hybridized block takes NDArray (or numpy/jax array) inputs, got {type(a).__name__}"
    )


def _tracer_message(block, err):
    first = str(err).split("\n")[0]
    return (
        f"Block '{block.name}' ({type(block).__name__}) uses a traced value as a Python "
        f"value while hybridized ({type(err).__name__}: {first}). Inside a hybridized "
        f"forward, values are symbolic: replace Python `if`/`while` on array values with "
        f"F.where(...) or F.contrib.cond / while_loop / foreach, do not call asnumpy() or "
        f"float() there, or call net.hybridize(False) to run eagerly."
    )
