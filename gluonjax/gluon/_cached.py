"""The compiled forward of a hybridized block (``hybridize()`` = ``jax.jit``).

``CachedGraph`` collects the block's parameters once and compiles
``pure(param_values, inputs, seed_key, counter, training)`` with ``jax.jit``;
jax retraces only for a new input signature. A forward without random ops runs
a variant per train/predict mode that takes no key (``_fast.plain_jits``; the
one-input call of ``HybridBlock.__call__`` is ``_fast.FastCall``). Under
``autograd.record()`` the forward is one compiled call returning the VJP, and
the backward one more.
"""

from __future__ import annotations

import functools
import itertools

import jax
import numpy as np

from .. import random as _random
from ..autograd import _deferred, _plan
from ..autograd._node import Kind, entry, needs_grad, vjp_node
from ..autograd._state import DEFER, TraceScope, _Scope
from ..autograd._state import _local as _st
from ..base import HybridizationError, MXNetError
from ..ndarray.ndarray import NDArray
from . import _fast

_APPLY: dict = {}
_IDS = itertools.count(1)  # ids of parameter masks and call signatures (never reused)
_NO_TAPE = object()  # CachedGraph._recorded: nothing needs a gradient, run untaped
_LEAF = jax.tree_util.tree_structure(0)


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
        # blocks without random ops run a variant per mode that takes no key at all
        self.plain = _fast.plain_jits(self)
        self.vjp_fwd = {}
        self.lazy_fns, self.lazy_sigs = {}, {}  # see _recorded
        self._pinfo = {}  # parameters' grad_reqs -> what they mean for _recorded
        self.uses_random = False  # set while tracing; only then do calls consume a key
        # the hook-free call of HybridBlock.__call__ (one NDArray input), and the
        # parameter values, re-read only after a parameter array was written
        self.fast = _fast.FastCall(self)

    def _pure(self, param_values, inputs, seed_key, counter, training):
        block = self.block
        with (
            TraceScope(self.params, [NDArray(v) for v in param_values]) as scope,
            _random.traced_key(seed_key, counter) as rnd,
            _Scope(False, training),
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
        # read flags and arrays, one compiled call, wrap the result (one NDArray input
        # outside record() takes the shorter self.fast)
        st = _st
        if st.recording:
            out = self._recorded(args, st.training)
            if out is not _NO_TAPE:
                return out
        raw = [a._data if isinstance(a, NDArray) else _raw_input(a) for a in args]
        pvals = self.fast.values()
        if not self.uses_random:
            try:
                return _fast.finish(self.plain[st.training](pvals, *raw), self.datas)
            except _random.NeedsKey:
                self.uses_random = True
        key, counter = _random.peek()
        out, updates = self.jit(pvals, raw, key, np.uint32(counter & 0xFFFFFFFF), st.training)
        _random.advance()
        return _fast.finish(_fast.WithUpdates(out, updates) if updates else out, self.datas)

    def _param_info(self, reqs):
        """What the parameters' ``grad_req``s ``reqs`` mean for a recorded call (cached)."""
        pmask = tuple(r is not None and r != "null" for r in reqs)
        idx = [i for i, m in enumerate(pmask) if m]
        every = len(idx) == len(pmask)
        info = self._pinfo[reqs] = (pmask, idx, every, (None,) * len(pmask), next(_IDS))
        return info

    def _recorded(self, args, training):
        """The forward as a tape node: deferred (``autograd._deferred``) once the
        signature ran, with deferral on; else run at once with its VJP.

        Returns ``_NO_TAPE`` when neither a parameter nor an input needs a gradient.
        """
        datas = self.datas
        reqs = tuple([d._grad_req for d in datas])
        pmask, idx, every, nones, pid = self._pinfo.get(reqs) or self._param_info(reqs)
        pvals = [d._data for d in datas]
        if every:  # all parameters are VJP arguments (the usual training case)
            arrays, given, pconst = list(datas), list(pvals), nones
        else:
            arrays = [datas[i] for i in idx]
            given = [pvals[i] for i in idx]  # the inputs' values as of now
            pconst = [None if m else v for v, m in zip(pvals, pmask)]
        needs = bool(idx)
        imask, raw, sig = [], [], []
        for a in args:
            if isinstance(a, NDArray):
                pending = type(a) is _deferred.Pending
                v = None if pending else a._data
                av = a.__dict__["_aval"] if pending else _deferred.aval(v)
                m = False
                if needs_grad(a):
                    needs = True
                    m = _plan.inexact(av.dtype)  # a VJP argument (a Pending one: made later)
                if m:
                    arrays.append(a)
                    given.append(v)
                    raw.append(None)
                else:
                    raw.append(a._data if pending else v)
                sig.append(av)
            else:
                m, r = False, _raw_input(a)
                raw.append(r)
                sig.append(None if r is None else (tuple(r.shape), r.dtype))
            imask.append(m)
        if not needs:
            return _NO_TAPE
        imask = tuple(imask)
        fkey = (training, pmask, imask)
        sig = (training, pid, imask, tuple(sig))  # pid stands for pmask: a cheaper key
        known = self.lazy_sigs.get(sig)
        if known is not None and not self.uses_random:  # traced: it takes no key
            key = counter = None
        else:
            key, counter = _random.peek()
            counter = np.uint32(counter & 0xFFFFFFFF)
        # only what is not a VJP argument: fewer buffers for the compiled calls to take
        consts = (pconst, raw, key, counter)
        fn = self.lazy_fns.get(fkey) or self._lazy_fn(fkey)
        inputs = tuple([entry(a) for a in arrays])
        if known is not None and DEFER[0]:
            if self.uses_random:
                _random.advance()
            treedef, avals, sid = known
            run = functools.partial(self._forward_vjp, fkey)
            outs = _deferred.record_deferred(
                self.block.name, inputs, avals, fn, consts, tuple(given), sid, run
            )
            outs[0]._node[0].origin = (self, idx, imask)  # for autograd.get_symbol
            return outs[0] if treedef is None else jax.tree_util.tree_unflatten(treedef, outs)
        vals = [a._data if v is None else v for a, v in zip(arrays, given)]
        leaves, vjp_fn, apply, treedef, updates = self._forward_vjp(fkey, consts, vals, full=True)
        if self.uses_random:  # known once traced
            _random.advance()
        if updates:
            for i, v in updates.items():
                self.datas[i]._data = v
        avals = tuple(_deferred.aval(v) for v in leaves)
        if not updates:  # no state to write back: later calls of this signature may be deferred
            single = treedef == _LEAF  # one array out: no unflatten needed
            self.lazy_sigs[sig] = (None if single else treedef, avals, next(_IDS))
        node = vjp_node(
            Kind.CACHED, self.block.name, inputs, avals, vjp_fn, apply,
            functools.partial(fn, consts),
        )  # fmt: skip
        node.origin = (self, idx, imask)
        wrapped = [NDArray(v) for v in leaves]
        for i, w in enumerate(wrapped):
            w._node = (node, i)
        return jax.tree_util.tree_unflatten(treedef, wrapped)

    def _forward_vjp(self, fkey, consts, vals, full=False):
        """One compiled forward returning the VJP; ``vals`` are the parents' values."""
        fwd = self.vjp_fwd.get(fkey)
        if fwd is None:
            fwd = self.vjp_fwd[fkey] = jax.jit(self._make_vjp(fkey))
        n_dp = sum(fkey[1])
        out, updates, vjp_fn = fwd(vals[:n_dp], vals[n_dp:], *consts)
        leaves, treedef = jax.tree_util.tree_flatten(out)
        if full:
            return leaves, vjp_fn, _tree_apply(treedef), treedef, updates
        return leaves, vjp_fn, _tree_apply(treedef)

    def _merged(self, fkey, consts, dp, di):
        """``_pure`` on the recorded values with the VJP arguments ``dp``/``di`` put in."""
        training, pmask, imask = fkey
        pvals, raw, key, counter = consts
        itp, iti = iter(dp), iter(di)
        p = [next(itp) if m else v for v, m in zip(pvals, pmask)]
        x = [next(iti) if m else v for v, m in zip(raw, imask)]
        return self._pure(p, x, key, counter, training)

    def _lazy_fn(self, fkey):
        """A stable pure ``fn(consts, *parent_values) -> output leaves`` per mode and masks."""
        fn = self.lazy_fns.get(fkey)
        if fn is None:
            n_dp = sum(fkey[1])

            def fn(consts, *pv):
                res, _ = self._merged(fkey, consts, pv[:n_dp], pv[n_dp:])
                return tuple(jax.tree_util.tree_leaves(res))

            self.lazy_fns[fkey] = fn
        return fn

    def _make_vjp(self, fkey):
        def fwd(dp, di, *consts):
            def f(dp, di):
                return self._merged(fkey, consts, dp, di)

            out, vjp_fn, updates = jax.vjp(f, dp, di, has_aux=True)
            return out, updates, vjp_fn

        return fwd


def _raw_input(a):
    if a is None:
        return None
    if isinstance(a, NDArray):  # an NDArray subclass (a Pending value is produced here)
        return a._data
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
