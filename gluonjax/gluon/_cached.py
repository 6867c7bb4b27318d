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

from .. import _compile
from .. import _rng as _random
from .._caches import LRU, PROCESS
from .._inline import inline_fun
from .._ops import host as _host
from .._ops.hostcall import HOST_CALLS, HostCalls
from .._tape.node import CallOrigin, Kind, entry, inexact, needs_grad, vjp_node, with_vjp
from .._tape.state import TraceScope, _Scope
from .._tape.state import _local as _st
from .._tape.stats import StatWrite
from ..autograd import _deferred
from ..base import BlockInputError, HybridizationError, MXNetError
from ..ndarray.ndarray import NDArray
from ..numpy._array import ndarray as _np_ndarray
from . import _fast
from . import _forward_check as _fc
from . import _np_mode as _npm

_APPLY = LRU(256, "vjp appliers by output structure")
_IDS = itertools.count(1)  # ids of parameter masks and call signatures (never reused)
_NO_TAPE = object()  # CachedGraph._recorded: nothing needs a gradient, run untaped
# CachedGraph.__call__ while recording: the traced forward has an integer output (a float
# input cast by ``sum(dtype='int32')``...); MXNet passes gradients through such casts, jax
# cannot (integers have no cotangents), so the caller runs the block op by op
EAGER = object()
_LEAF = jax.tree_util.tree_structure(0)


def _tree_apply(treedef):
    """A stable ``apply(vjp, cts)`` per output structure (a key of the fused backward)."""
    fn = _APPLY.get(treedef)
    if fn is None:

        def fn(vjp_fn, cts):
            gp, gi = vjp_fn(jax.tree_util.tree_unflatten(treedef, list(cts)))
            return tuple(gp) + tuple(gi)

        _APPLY.put(treedef, fn)
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
        # parameters on several contexts: the arrays of an input's context (see _param_ctx)
        self.multi = any(p._copies for p in self.params)
        self._ctx_datas = {}
        self.jit = _compile.jit(self._pure, "train", static_argnums=(4,))
        # blocks without random ops run a variant per mode that takes no key at all
        self.plain = _fast.plain_jits(self)
        self.vjp_fwd = {}
        self.lazy_fns, self.lazy_sigs = {}, {}  # see _recorded
        self.stateful = set()  # signatures whose forward writes state: never deferred
        self._pinfo = {}  # parameters' grad_reqs -> what they mean for _recorded
        self.uses_random = False  # set while tracing; only then do calls consume a key
        # the hook-free call of HybridBlock.__call__ (one NDArray input), and the
        # parameter values, re-read only after a parameter array was written
        self.fast = _fast.FastCall(self)
        self.np_mode = False  # traced with mx.np.ndarray inputs (HybridBlock sets it)
        self.out_np = False  # the traced forward returned mx.np.ndarray outputs

    def _pure(self, param_values, inputs, seed_key, counter, training):
        block = self.block

        def run():
            cls = _np_ndarray if self.np_mode else NDArray
            args = [None if v is None else cls(v) for v in inputs]
            given = [None if a is None else a._data for a in args]
            out = block._traced_forward(*args)
            _check_traced(block, out, args, given)  # once per traced signature
            self.out_np = _npm.output_kind(block, out)
            return _as_lists(out)

        out, updates, used = pure_call(
            block, self.params, param_values, seed_key, counter, training, run
        )
        if used:
            self.uses_random = True
        return out, updates

    def __call__(self, args):
        # read flags and arrays, one compiled call, wrap the result (one NDArray input
        # outside record() takes the shorter self.fast)
        ctx = _input_ctx(args)
        if ctx is not None:  # a logical context (or several contexts): keep it on the outputs
            out = self._call(args, ctx)
            return out if out is EAGER else _tag(out, ctx)
        return self._call(args, None)

    def _call(self, args, ctx):
        st = _st
        datas = self.datas if not self.multi else self._datas_for(ctx, args)
        if st.recording:
            out = self._recorded(args, st.training, datas)
            if out is not _NO_TAPE:
                return out
        raw = [a._data if isinstance(a, NDArray) else _raw_input(a) for a in args]
        if not self.uses_random:
            pvals = (
                self.fast.values() if datas is self.datas else _fast.twins([d._data for d in datas])
            )
            try:
                return _fast.finish(self.plain[st.training](pvals, *raw), datas)
            except _random.NeedsKey:
                self.uses_random = True
        pvals = [d._data for d in datas]
        key, counter = _random.peek()
        out, updates = self.jit(pvals, raw, key, np.uint32(counter & 0xFFFFFFFF), st.training)
        _random.advance()
        return _fast.finish(_fast.WithUpdates(out, updates) if updates else out, datas)

    def _datas_for(self, ctx, args):
        """The parameter arrays of the inputs' context (parameters on several contexts)."""
        if ctx is None:
            ctx = next((a.context for a in args if isinstance(a, NDArray)), None)
        got = self._ctx_datas.get(ctx)
        if got is None:
            got = self._ctx_datas[ctx] = [p._array_for_input(ctx) for p in self.params]
        return got

    def _param_info(self, reqs):
        """What the parameters' ``grad_req``s ``reqs`` mean for a recorded call (cached)."""
        pmask = tuple(r is not None and r != "null" for r in reqs)
        idx = tuple(i for i, m in enumerate(pmask) if m)
        every = len(idx) == len(pmask)
        info = self._pinfo[reqs] = (pmask, idx, every, (None,) * len(pmask), next(_IDS))
        return info

    def _recorded(self, args, training, datas):
        """The forward as a tape node: deferred (``autograd._deferred``) once the
        signature ran, with deferral on; else run at once with its VJP.

        Returns ``_NO_TAPE`` when neither a parameter nor an input needs a gradient.
        """
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
                pending = _deferred.is_pending(a)
                v = None if pending else a._data
                av = _deferred.aval_of(a) if pending else _deferred.aval(v)
                m = False
                if needs_grad(a):
                    needs = True
                    m = inexact(av.dtype)  # a VJP argument (a Pending one: made later)
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
        # pid stands for pmask (a cheaper key); PROCESS.layout_version moves when a
        # parameter's dtype changes
        sig = (training, pid, imask, tuple(sig), PROCESS.layout_version)
        known = self.lazy_sigs.get(sig)
        if known is None and sig not in self.stateful:
            known = self._learn(sig, fkey, pconst, raw, arrays, given)
        if known is not None and known.int_out:
            return EAGER
        if known is not None and not self.uses_random:  # traced: it takes no key
            key = counter = None
        else:
            key, counter = _random.peek()
            counter = np.uint32(counter & 0xFFFFFFFF)
        # only what is not a VJP argument: fewer buffers for the compiled calls to take
        consts = (pconst, raw, key, counter)
        inputs = tuple([entry(a) for a in arrays])
        if self.uses_random:
            _random.advance()
        if known is None:  # the forward writes state: run it at once
            return self._stateful_call(fkey, consts, arrays, given, inputs, idx, imask, datas)
        if PROCESS.defer:
            outs = _deferred.record_deferred(
                self.block.name, inputs, known.avals, known.fn, consts, tuple(given),
                known.sid, known.run,
            )  # fmt: skip
            outs[0]._node[0].origin = CallOrigin(self, idx, imask)  # for get_symbol
        else:
            vals = [a._data if v is None else v for a, v in zip(arrays, given)]
            leaves, vjp_fn, apply = known.run(consts, vals)
            node = vjp_node(
                Kind.CACHED, self.block.name, inputs, known.avals, vjp_fn, apply,
                functools.partial(known.fn, consts),
            )  # fmt: skip
            node.origin = CallOrigin(self, idx, imask)
            outs = [NDArray(v) for v in leaves]
            for i, w in enumerate(outs):
                w._node = (node, i)
        return (
            outs[0] if known.treedef is None else jax.tree_util.tree_unflatten(known.treedef, outs)
        )

    def _stateful_call(self, fkey, consts, arrays, given, inputs, idx, imask, datas):
        """A recorded call whose forward writes state (BatchNorm in training): run now."""
        vals = [a._data if v is None else v for a, v in zip(arrays, given)]
        leaves, vjp_fn, apply, treedef, updates = self._forward_vjp(fkey, consts, vals, full=True)
        writes = self._stat_write(fkey, consts, vals, datas, updates) if updates else None
        avals = tuple(_deferred.aval(v) for v in leaves)
        fn = self.lazy_fns.get(fkey) or self._lazy_fn(fkey)
        node = vjp_node(
            Kind.CACHED, self.block.name, inputs, avals, vjp_fn, apply,
            functools.partial(fn, consts),
        )  # fmt: skip
        node.origin = CallOrigin(self, idx, imask)
        node.writes = writes
        wrapped = [NDArray(v) for v in leaves]
        for i, w in enumerate(wrapped):
            w._node = (node, i)
        return jax.tree_util.tree_unflatten(treedef, wrapped)

    def _stat_write(self, fkey, consts, vals, datas, updates):
        """The node's pending write of the states its forward changed (BatchNorm's
        moving statistics move in the backward, as in MXNet 1.x; see ``_tape.stats``)."""
        pmask = fkey[1]
        at = {i: k for k, i in enumerate(i for i, m in enumerate(pmask) if m)}
        order = list(updates)
        old = [vals[at[i]] if pmask[i] else consts[0][i] for i in order]

        def redo(cur):
            pconst, vs = list(consts[0]), list(vals)
            for i, v in zip(order, cur):
                if pmask[i]:
                    vs[at[i]] = v
                else:
                    pconst[i] = v
            got = self._forward_vjp(fkey, (pconst, *consts[1:]), vs, full=True)[4]
            return [got[i] for i in order]

        return StatWrite([datas[i] for i in order], old, [updates[i] for i in order], redo)

    def _learn(self, sig, fkey, pconst, raw, arrays, given):
        """Trace a new signature's forward once (no compile) into a :class:`_Signature`,
        or None when the forward writes state (BatchNorm in training).

        Every later use of the signature (its deferred calls, their backward, a call
        run at once) evaluates the traced program instead of running the block's
        Python again, so the block's code runs once per signature, as in MXNet.
        """
        n_dp = sum(fkey[1])

        def traced(consts, *pv):
            return self._merged(fkey, consts, pv[:n_dp], pv[n_dp:])

        vals = [
            _deferred.aval(v) if v is not None else _deferred.aval_of(a)
            for a, v in zip(arrays, given)
        ]
        closed = None
        if not self.uses_random:  # first without a random key: a forward that needs one says so
            try:
                closed, shape = jax.make_jaxpr(traced, return_shape=True)(
                    (pconst, raw, None, None), *vals
                )
            except _random.NeedsKey:
                self.uses_random = True
        if closed is None:
            key, counter = _random.peek()
            consts = (pconst, raw, key, np.uint32(counter & 0xFFFFFFFF))
            closed, shape = jax.make_jaxpr(traced, return_shape=True)(consts, *vals)
        out, updates = shape
        if updates:
            self.stateful.add(sig)
            return None
        leaves, treedef = jax.tree_util.tree_flatten(out)
        known = self.lazy_sigs[sig] = _Signature(
            None if treedef == _LEAF else treedef,
            tuple(jax.ShapeDtypeStruct(v.shape, v.dtype) for v in leaves),
            next(_IDS),
            closed,
            len(leaves),
        )
        return known

    def _forward_vjp(self, fkey, consts, vals, full=False):
        """One compiled forward returning the VJP; ``vals`` are the parents' values."""
        fwd = self.vjp_fwd.get(fkey)
        if fwd is None:
            fwd = self.vjp_fwd[fkey] = _compile.jit(self._make_vjp(fkey), "train")
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

            out, vjp_fn, updates = with_vjp(f, dp, di, has_aux=True)
            return out, updates, vjp_fn

        return fwd


class _Signature:
    """What one traced call signature of a block gives: the outputs' ``treedef`` (None
    for one array) and ``avals``, an id ``sid`` (part of the fused backward's key), and
    the traced program as ``fn(consts, *input values) -> output values`` and ``run``
    (that with its VJP, one compiled call, for a deferred node run on its own)."""

    __slots__ = ("treedef", "avals", "sid", "fn", "_vjp", "_host", "int_out", "__weakref__")

    def __init__(self, treedef, avals, sid, closed, n_out):
        self.treedef, self.avals, self.sid = treedef, avals, sid
        self.int_out = any(not inexact(av.dtype) for av in avals)  # see EAGER
        program = inline_fun(closed)  # its nested jit calls inlined (see gluonjax._inline)

        def fn(consts, *pv):
            return tuple(program(*jax.tree_util.tree_leaves((consts, *pv)))[:n_out])

        fn.host_ok = _host.runs_exactly(closed)  # see autograd._plan.Plan
        self.fn = fn
        self._vjp = None
        self._host = HostCalls(lambda consts, vals: fn(consts, *vals), exact=True, hot=HOST_CALLS)
        self._host.off = not fn.host_ok

    def run(self, consts, vals):
        """The forward with its VJP on concrete values: ``(outputs, vjp, apply)``.

        A signature's first calls on new shapes run its program on the host
        (:class:`HostCalls`: NumPy, no compile) when its primitives allow; the VJP is
        then :class:`RecomputedVjp`, which the backward that applies it (the fused
        plan) traces: one compile, not two."""
        out = self._host(consts, tuple(vals))
        if out is not None:
            return list(out), RecomputedVjp(self.fn, consts, tuple(vals)), _apply_leaves
        if self._vjp is None:
            fn = self.fn

            def fwd(consts, vals):
                return with_vjp(functools.partial(fn, consts), *vals)

            self._vjp = _compile.jit(fwd, "train")
        out, vjp_fn = self._vjp(consts, vals)
        return list(out), vjp_fn, _apply_leaves


@jax.tree_util.register_pytree_node_class
class RecomputedVjp:
    """The VJP of ``fn(consts, *vals)`` as data: applying it runs the forward again
    under ``jax.vjp`` (in the traced backward that applies it, or op by op)."""

    __slots__ = ("fn", "consts", "vals")

    def __init__(self, fn, consts, vals):
        self.fn, self.consts, self.vals = fn, consts, vals

    def __call__(self, cts):
        _, vjp_fn = with_vjp(functools.partial(self.fn, self.consts), *self.vals)
        return vjp_fn(cts)

    def tree_flatten(self):
        return (self.consts, self.vals), self.fn

    @classmethod
    def tree_unflatten(cls, fn, children):
        return cls(fn, *children)


def _as_lists(out):
    """A hybridized call's nested outputs as lists: MXNet 1.x regroups a cached graph's
    outputs that way (``return a, (b, c)`` gives ``[a, [b, c]]``; eager calls keep the
    forward's own tuples). A named tuple (``np.linalg.svd``'s result) keeps its type."""
    if type(out) in (list, tuple):
        return [_as_lists(o) for o in out]
    if isinstance(out, tuple) and hasattr(out, "_fields"):
        return type(out)(*[_as_lists(o) for o in out])
    return out


def pure_call(block, params, values, seed_key, counter, training, run):
    """Blocks as a pure function: ``run()`` (a block's Python forward, or a forward and
    a loss) with ``params`` reading ``values``, random ops drawing from
    ``fold_in(seed_key, counter)``, and training mode ``training``.

    The one place a block becomes a pure function of its parameters (hybridized calls,
    export and ``compile_step`` trace through it). Returns ``(outputs as jax values,
    {index: new value} of parameters written, whether it drew random numbers)``.
    """
    with (
        TraceScope(params, [NDArray(v) for v in values]) as scope,
        _random.traced_key(seed_key, counter) as rnd,
        _Scope(False, training),
    ):
        try:
            out = run()
        except _TRACER_ERRORS as err:
            raise HybridizationError(_tracer_message(block, err)) from None
        except HybridizationError as err:
            if f"'{block.name}'" in str(err):
                raise
            raise type(err)(f"Block '{block.name}' ({type(block).__name__}): {err}") from None
        out = jax.tree_util.tree_map(_raw, out, is_leaf=_is_leaf)
        return out, scope.updates(), rnd.used


def _apply_leaves(vjp_fn, cts):
    """``apply`` of a signature's VJP (its outputs are a flat tuple)."""
    return vjp_fn(tuple(cts))


def _input_ctx(args):
    """The logical context of the first input that has one (see gluonjax.context)."""
    for a in args:
        ctx = getattr(a, "_ctx", None)
        if ctx is not None:
            return ctx
    return None


def _tag(out, ctx):
    for leaf in jax.tree_util.tree_leaves(out, is_leaf=lambda v: isinstance(v, NDArray)):
        if isinstance(leaf, NDArray):
            leaf._ctx = ctx
    return out


def _check_traced(block, out, args, given):
    """A traced forward's output types, and no writes into its inputs (_forward_check)."""
    if type(out) is not NDArray:
        _fc.check_output(block, out, "hybridized")
    for i, (a, v) in enumerate(zip(args, given)):
        if a is not None and a._data is not v:
            raise _fc.input_write_error(block, i, a.shape, "hybridized")


def _raw_input(a):
    if a is None:
        return None
    if isinstance(a, NDArray):  # an NDArray subclass (a Pending value is produced here)
        return a._data
    if isinstance(a, np.ndarray):
        raise BlockInputError(
            f"a hybridized block was called with a numpy.ndarray of shape {a.shape}; "
            f"HybridBlocks take NDArrays (as MXNet). Convert it with mx.nd.array(x)."
        )
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
