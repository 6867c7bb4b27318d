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

from .. import _fused_tape, _lazy, _tape, _trace
from .. import autograd as _ag
from .. import random as _random
from ..base import HybridizationError, MXNetError
from ..ndarray.ndarray import NDArray
from . import _fast

_APPLY: dict = {}
_IDS = itertools.count(1)  # ids of parameter masks and signatures (see Node.sk)
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
        # read flags and arrays, one compiled call, wrap the result (one NDArray input
        # outside record() takes the shorter self.fast)
        st = _ag._st
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
        """The forward as a tape node: deferred (``_lazy``) once the signature ran.

        Returns ``_NO_TAPE`` when neither a parameter nor an input needs a gradient.
        """
        datas = self.datas
        reqs = tuple([d._grad_req for d in datas])
        pmask, idx, every, nones, pid = self._pinfo.get(reqs) or self._param_info(reqs)
        pvals = [d._data for d in datas]
        if every:  # all parameters are VJP arguments (the usual training case)
            parents, given, pconst = list(datas), pvals, nones
        else:
            parents = [datas[i] for i in idx]
            given = [pvals[i] for i in idx]  # parents' values as of now
            pconst = [None if m else v for v, m in zip(pvals, pmask)]
        needs = bool(idx)
        imask, raw, sig, kids = [], [], [], []
        for a in args:
            if isinstance(a, NDArray):
                pending = type(a) is _lazy.Pending
                v = None if pending else a._data
                av = a.__dict__["_aval"] if pending else _lazy.aval(v)
                m = False
                if a._node is not None or a._grad_req not in (None, "null"):
                    needs = True
                    # travels as a VJP argument (a Pending one is produced later)
                    m = _fused_tape.inexact(av.dtype)
                if m:
                    parents.append(a)
                    given.append(v)
                    raw.append(None)
                    # the output of a deferred node: the structure is known (Node.sk)
                    an = a._node
                    if kids is not None and pending and an and an[0].lazy is not None:
                        kids.append(an)
                    else:
                        kids = None
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
        replay = functools.partial(fn, consts)
        if known is not None and _lazy.ENABLED[0]:
            if self.uses_random:
                _random.advance()
            treedef, avals, akey, sid = known
            lazy = (fn, consts, (self._forward_vjp, fkey), given)
            # the signature's id (never reused) also names this graph and its parameter mask
            sk = None if kids is None else sid
            node = _tape.deferred_node(
                tuple(parents), self.block.name, replay, lazy, avals, akey, sk, kids
            )
            outs = _lazy.outputs(node, avals)
            return outs[0] if treedef is None else jax.tree_util.tree_unflatten(treedef, outs)
        node = _tape.Node(None, tuple(parents), (), self.block.name, replay)
        leaves, node.vjp, node.apply, treedef, updates = self._forward_vjp(
            fkey, consts, [p._data for p in parents], full=True
        )
        if self.uses_random:  # known once traced
            _random.advance()
        if updates:
            for i, v in updates.items():
                self.datas[i]._data = v
        else:  # no state to write back: later calls of this signature may be deferred
            avals = tuple(_lazy.aval(v) for v in leaves)
            single = treedef == _LEAF  # one array out: no unflatten needed
            akey = _fused_tape.aval_key(avals)
            self.lazy_sigs[sig] = (None if single else treedef, avals, akey, next(_IDS))
        node.n_out, node.out_avals = len(leaves), tuple(leaves)
        node.bwd = _tape._per_node_bwd(node)
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
