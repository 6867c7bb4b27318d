"""The fused backward: the whole tape (and deferred forwards) as ONE ``jax.jit`` call.

``plan_backward`` turns the tape reachable from the heads into a ``FusedCall``: a cached
compiled function of the nodes' VJP closures (and, for deferred nodes, of their
recorded inputs, see ``_lazy``) that returns the leaves' cotangents. The call
runs at once (``autograd.grad``), or later (``backward()`` leaves the gradients
pending; ``trainer.step`` runs it together with the optimizer update).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ._tape import _check_heads, _eligible, _lazy, _raw

__all__ = ["FusedCall", "aval_key", "inexact", "plan_backward"]


def aval_key(avals):
    """``((shape, dtype name), ...)``: the hashable form of output avals."""
    return tuple((tuple(a.shape), _DTYPE_NAMES.get(a.dtype) or _dtype_name(a.dtype)) for a in avals)


_DTYPE_NAMES: dict = {}
_INEXACT: dict = {}


def _dtype_name(dt):
    name = _DTYPE_NAMES[dt] = str(dt)
    return name


def inexact(dtype):
    """``np.issubdtype(dtype, np.inexact)``, cached (it is on the recording path)."""
    hit = _INEXACT.get(dtype)
    if hit is None:
        hit = _INEXACT[dtype] = bool(np.issubdtype(dtype, np.inexact))
    return hit


_FUSED: dict = {}
_FUSED_LIMIT = 256  # distinct tape shapes compiled; beyond that, node by node


def plan_backward(order, heads, head_grads, variables):
    """The whole backward (and the forward of deferred nodes) as one cached ``jax.jit``."""
    _check_heads(heads)
    index = {id(n): k for k, n in enumerate(order)}
    leaves, leaf_slot = [], {}

    def dest(arr):
        if arr._node is not None:
            k = index.get(id(arr._node[0]))
            return None if k is None else ("n", k, arr._node[1])
        if not _eligible(arr, variables):
            return None
        slot = leaf_slot.get(id(arr))
        if slot is None:
            slot = leaf_slot[id(arr)] = len(leaves)
            leaves.append(arr)
        return ("l", slot)

    def src(arr):  # a deferred parent's value is made inside the call
        if arr._node is not None and arr._node[0].lazy is not None:
            return (index[id(arr._node[0])], arr._node[1])
        return None

    plan, args = [], []
    for n in order:
        avals = n.akey or aval_key(n.out_avals)
        dests = tuple(dest(p) for p in n.parents)
        if n.lazy is None:
            plan.append((n.apply, avals, dests, None))
            args.append(n.vjp)
        else:
            srcs = tuple(src(p) for p in n.parents)
            plan.append((n.lazy[0], avals, dests, srcs))
            given = [
                None if s else p._data if v is None else v
                for s, p, v in zip(srcs, n.parents, n.lazy[3])
            ]
            args.append((n.lazy[1], given))
    plan = tuple(plan)
    head_plan = tuple(dest(h) for h in heads)
    head_avals = tuple(
        h._node[0].akey[h._node[1]] if h._node and h._node[0].akey else aval_key((h,))[0]
        for h in heads
    )
    key = (plan, head_plan, head_avals, len(leaves))
    hit = _FUSED.get(key)
    if hit is None:
        if len(_FUSED) >= _FUSED_LIMIT:
            return None
        pure = _make_fused(plan, head_plan, head_avals, len(leaves))
        hit = _FUSED[key] = (pure, jax.jit(pure))
    # a missing head gradient is made of ones inside the compiled call (no extra dispatch)
    cts = [None if g is None else _raw(g).astype(h.dtype) for h, g in zip(heads, head_grads)]
    return FusedCall(hit, args, cts, leaves, order)


class FusedCall:
    """One planned backward: ``run()`` gives the leaves' cotangents (once)."""

    def __init__(self, fns, args, cts, leaves, order):
        self.pure, self.jit = fns
        self.args, self.cts, self.leaves = args, cts, leaves
        self.deferred = [n for n in order if n.lazy is not None]
        self.order, self.grads, self.result = order, None, None
        self.stepped = False  # an optimizer update already ran fused with it

    def release(self, retain_graph):
        """Free the tape (unless retained); deferred nodes now wait on this call."""
        for n in self.deferred:
            n.claim = self
        if not retain_graph:
            for n in self.order:
                n.vjp = n.bwd = n.lazy = None
        self.order = None

    def run(self):
        """Run (once) and return the leaves' cotangents; pending gradients get them."""
        if self.result is not None:
            return self.result
        cts, douts = self.jit(self.args, self.cts)
        self.result, self.args = cts, None
        self._outputs(douts)
        lazy = _lazy()
        if self.grads is not None:
            lazy.settle_grads(self, cts)
        self.grads = None  # no reference cycles left behind
        return cts

    def run_with(self, fn, extra):
        """Run the deferred forwards and ``fn``'s extra work as ONE compiled call.

        ``fn(args, cts, *extra) -> (deferred outputs, more)`` (see
        ``_update.backward_and_update``); returns ``more``. The gradients stay
        pending: should they be read, ``run()`` computes them from the same inputs.
        """
        douts, more = fn(self.args, self.cts, *extra)
        self.stepped = True
        self._outputs(douts)
        return more

    def _outputs(self, douts):
        if self.deferred is None:
            return
        lazy = _lazy()
        for n, vals in zip(self.deferred, douts):
            if n.claim is self:
                n.claim = None
            lazy.fill(n, vals)
        self.deferred = None

    def cts_by_leaf(self, cts):
        return {id(leaf): (leaf, ct) for leaf, ct in zip(self.leaves, cts) if ct is not None}


def _apply_deferred(vjp, cts):
    return vjp(tuple(cts))


def _make_fused(plan, head_plan, head_avals, n_leaves):
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

        for k in range(len(plan) - 1, -1, -1):  # deferred forwards, inputs first
            fn, _, _, srcs = plan[k]
            if srcs is not None:
                consts, given = vjps[k]
                xs = [v if s is None else vals[s[0]][s[1]] for s, v in zip(srcs, given)]
                vals[k], vjps[k] = jax.vjp(functools.partial(fn, consts), *xs)
        for d, ct, (shape, dtype) in zip(head_plan, head_cts, head_avals):
            add(d, jnp.ones(shape, dtype) if ct is None else ct)
        for k, (apply, avals, dests, srcs) in enumerate(plan):
            outs = tuple(
                acc.pop((k, i)) if (k, i) in acc else jnp.zeros(shape, dtype)
                for i, (shape, dtype) in enumerate(avals)
            )
            apply = apply if srcs is None else _apply_deferred
            for d, ct in zip(dests, apply(vjps[k], outs)):
                if ct is not None and getattr(ct, "dtype", None) != jax.dtypes.float0:
                    add(d, ct)
        return leaf, [vals[k] for k in sorted(vals)]

    return fused
