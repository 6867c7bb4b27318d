"""The fused backward: a whole tape, deferred forwards included, as ONE ``jax.jit`` call.

:func:`plan` walks the tape reachable from the heads and describes it as a
:class:`Step` per node: how its cotangents flow (``dests``) and, for a deferred
node, where its inputs come from (``srcs``). The steps, the heads and the
number of leaves are the *structure* of the tape; one compiled program
(:class:`Plan`) is kept per structure, so every backward checks that the tape
it runs really has the structure of the program it reuses (the walk builds the
key), and a different tape gets a different program. Plans hold no user
object: a deferred step names its function through a weak reference, and the
cache is bounded (``gluonjax.clear_caches`` empties it).

A :class:`FusedCall` is one planned backward with its arguments; it runs at
once (``autograd.grad``), when a pending value is read, or together with the
optimizer update in ``trainer.step`` (:meth:`FusedCall.run_with`).
"""

from __future__ import annotations

import functools
import weakref
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import _compile
from .._caches import LRU
from .._ops.hostcall import HOST_CALLS, HostCalls
from .._tape.node import Kind, with_vjp
from ..base import MXNetError
from ._deferred import deliver, settle_grads

__all__ = ["Step", "Plan", "FusedCall", "plan", "aval_key"]

_DEFERRED, _VJP = Kind.DEFERRED, (Kind.OP, Kind.CACHED, Kind.FORCED)


def aval_key(avals):
    """``((shape, dtype name), ...)``: the hashable form of output avals."""
    return tuple((tuple(a.shape), _dtype_name(a.dtype)) for a in avals)


_DTYPE_NAMES = LRU(64, "dtype names")


def _dtype_name(dt):
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES.put(dt, str(np.dtype(dt)))
    return name


class Step(NamedTuple):
    """One node of a planned backward.

    ``fn``: a VJP node's ``apply`` (module-level), or a weak reference to a
    deferred node's pure forward. ``akey``: its outputs' shapes and dtypes.
    ``dests``: per input entry, where its cotangent goes: ``("l", slot)`` a
    leaf, ``("n", k, i)`` output ``i`` of step ``k``, or None. ``srcs``
    (deferred only): per input, ``(k, i)`` when step ``k`` of the same call
    produces it, else None (its value is an argument).
    """

    fn: object
    akey: tuple
    dests: tuple
    srcs: tuple | None


class Plan:
    """The compiled program of one tape structure: ``jit(args, head_cts)``.

    ``pure`` returns ``(leaf cotangents, deferred outputs)``; ``jit`` is it compiled.
    """

    __slots__ = ("steps", "pure", "jit", "host", "__weakref__")

    def __init__(self, steps, head_dests, head_akeys, n_leaves):
        self.steps = steps
        self.pure = _make_fused(steps, head_dests, head_akeys, n_leaves)
        self.jit = _compile.jit(self.pure, "train")
        # a small tape's first backwards on new shapes run on the host (no compile) when
        # its primitives allow; a deferred step whose forward does not is known at once
        self.host = HostCalls(self.pure, jitted=self.jit, exact=True, hot=HOST_CALLS)
        self.host.off = len(steps) > _HOST_STEPS or not all(
            s.srcs is None or getattr(s.fn(), "host_ok", False) for s in steps
        )

    def __call__(self, args, cts):
        res = self.host(args, cts)
        return res if res is not None else self.jit(args, cts)


_PLANS = LRU(512, "autograd plans")
# longer tapes are a model's: its backward compiles (a wasted host trace would be long)
_HOST_STEPS = 16


def plan(order, heads, head_cts, variables):
    """The planned backward of the tape ``order`` (users first) from ``heads``.

    Parameters
    ----------
    order : list of Node
        Every node reachable from the heads, each of a fusable kind.
    heads : list of arrays
    head_cts : list
        Raw head cotangents (None: ones).
    variables : set of int or None
        ``id``s of the arrays to differentiate with respect to
        (``autograd.grad``); None: every leaf whose ``grad_req`` is write/add.

    Returns
    -------
    FusedCall
    """
    index = {n: k for k, n in enumerate(order)}
    leaves, slots = [], {}

    def leaf(arr):
        if variables is None:
            if arr._grad_req not in ("write", "add"):
                return None
        elif id(arr) not in variables:
            return None
        slot = slots.get(id(arr))
        if slot is None:
            slot = slots[id(arr)] = len(leaves)
            leaves.append(arr)
        return ("l", slot)

    steps, keys, args, deferred = [], [], [], []
    for n in order:
        dests = []
        if n.kind is _DEFERRED:
            call, srcs = n.call, []
            given = list(call.given)
            for j, e in enumerate(n.inputs):
                if type(e) is tuple:
                    src, i = e
                    k = index[src]
                    dests.append(("n", k, i))
                    if src.kind is _DEFERRED:  # produced inside the call
                        srcs.append((k, i))
                        given[j] = None
                        continue
                    if given[j] is None:  # pending when recorded, produced since
                        given[j] = src.values[i]
                else:
                    dests.append(leaf(e))
                srcs.append(None)
            dests, srcs = tuple(dests), tuple(srcs)
            akey = aval_key(n.avals)
            steps.append(Step(weakref.ref(call.fn), akey, dests, srcs))
            keys.append((call.sig, akey, dests, srcs))
            args.append((call.consts, given))
            deferred.append(n)
        else:
            for e in n.inputs:
                dests.append(("n", index[e[0]], e[1]) if type(e) is tuple else leaf(e))
            dests, akey = tuple(dests), aval_key(n.avals)
            steps.append(Step(n.apply, akey, dests, None))
            keys.append((n.apply, akey, dests))
            args.append(n.vjp)
    head_dests, head_akeys = [], []
    for h in heads:
        hn = h._node
        if hn is None:
            head_dests.append(leaf(h))
            head_akeys.append((tuple(h.shape), _dtype_name(h.dtype)))
        else:
            head_dests.append(("n", index[hn[0]], hn[1]))
            a = hn[0].avals[hn[1]]
            head_akeys.append((tuple(a.shape), _dtype_name(a.dtype)))
    key = (tuple(keys), tuple(head_dests), tuple(head_akeys), len(leaves))
    found = _PLANS.get(key)
    if found is None:
        found = _PLANS.put(key, Plan(tuple(steps), key[1], key[2], len(leaves)))
    return FusedCall(found, args, list(head_cts), leaves, order, deferred)


class FusedCall:
    """One planned backward: the compiled plan with its arguments, run at most once.

    Attributes
    ----------
    plan : Plan
    leaves : list of arrays
        The arrays whose cotangents the call returns, in order.
    grads : list or None
        ``(grad_req, gradient array)`` per leaf while the gradients wait on this
        call (``autograd._deferred.defer_grads``).
    result : list or None
        The leaves' cotangents once it ran.
    """

    __slots__ = ("plan", "args", "cts", "leaves", "nodes", "deferred", "grads", "result")

    def __init__(self, plan_, args, cts, leaves, nodes, deferred):
        self.plan, self.args, self.cts, self.leaves = plan_, args, cts, leaves
        self.nodes, self.deferred = nodes, deferred
        self.grads = self.result = None
        for n in deferred:  # reading one of their outputs now runs this call
            n.claim = self

    @property
    def done(self):
        return self.args is None

    def release(self, retain_graph):
        """Free the tape's nodes unless ``retain_graph`` (deferred ones keep what this
        call needs until it ran)."""
        if not retain_graph:
            for n in self.nodes:
                n.free()
        self.nodes = None

    def run(self):
        """Run the backward (once) and return the leaves' cotangents."""
        if self.args is None:
            if self.result is None:
                raise MXNetError("gluonjax internal error: a planned backward lost its result")
            return self.result
        cts, douts = self.plan(self.args, self.cts)
        self._finish(cts, douts)
        return cts

    def run_with(self, fn, extra):
        """Run this backward and ``fn``'s extra work as ONE compiled call.

        ``fn(args, cts, *extra) -> (leaf cotangents, deferred outputs, more)`` (see
        ``autograd._update.consume``); returns ``more``.
        """
        cts, douts, more = fn(self.args, self.cts, *extra)
        self._finish(cts, douts)
        return more

    def _finish(self, cts, douts):
        self.args = self.cts = None  # the inputs are no longer needed
        self.result = cts
        for n, vals in zip(self.deferred, douts):
            deliver(n, vals)
            if n.claim is self:
                n.claim = None
                if n.kind is Kind.FREED:
                    n.call = None
        self.deferred = ()
        if self.grads is not None:
            settle_grads(self, cts)
            self.grads = None

    def cts_by_leaf(self, cts):
        """``{id(leaf): (leaf, cotangent)}`` for the leaves that got one."""
        return {id(lf): (lf, ct) for lf, ct in zip(self.leaves, cts) if ct is not None}


def _make_fused(steps, head_dests, head_akeys, n_leaves):
    """The pure function of a plan: ``fused(args, head_cts) -> (leaf cts, deferred outs)``."""

    def fused(args, head_cts):
        vjps, acc, leaf, vals = list(args), {}, [None] * n_leaves, {}

        def add(d, ct):
            if d is None:
                return
            if d[0] == "l":
                leaf[d[1]] = ct if leaf[d[1]] is None else leaf[d[1]] + ct
            else:
                k = (d[1], d[2])
                acc[k] = ct if k not in acc else acc[k] + ct

        for k in range(len(steps) - 1, -1, -1):  # deferred forwards, inputs first
            step = steps[k]
            if step.srcs is not None:
                fn = step.fn()
                if fn is None:
                    raise MXNetError("gluonjax internal error: a deferred block was freed")
                consts, given = vjps[k]
                xs = [v if s is None else vals[s[0]][s[1]] for s, v in zip(step.srcs, given)]
                vals[k], vjps[k] = with_vjp(functools.partial(fn, consts), *xs)
        for d, ct, (shape, dtype) in zip(head_dests, head_cts, head_akeys):
            add(d, jnp.ones(shape, dtype) if ct is None else ct)
        for k, step in enumerate(steps):
            outs = tuple(
                acc.pop((k, i)) if (k, i) in acc else jnp.zeros(shape, dtype)
                for i, (shape, dtype) in enumerate(step.akey)
            )
            in_cts = vjps[k](outs) if step.srcs is not None else step.fn(vjps[k], outs)
            for d, ct in zip(step.dests, in_cts):
                if ct is not None and getattr(ct, "dtype", None) != jax.dtypes.float0:
                    add(d, ct)
        return leaf, [vals[k] for k in sorted(vals)]

    return fused
