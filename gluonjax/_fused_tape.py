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

from ._graph import postorder
from ._tape import _check_heads, _lazy, _raw

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


def _leaf_dest(slot):
    while len(_LEAF_DESTS) <= slot:
        _LEAF_DESTS.append(("l", len(_LEAF_DESTS)))
    return _LEAF_DESTS[slot]


_LEAF_DESTS: list = []  # ("l", slot): where a leaf's cotangent goes, made once


def plan_backward(order, heads, head_grads, variables):
    """The whole backward (and the forward of deferred nodes) as one cached ``jax.jit``."""
    _check_heads(heads)
    index = {n: k for k, n in enumerate(order)}
    leaves, leaf_slot = [], {}
    plan, args = [], []

    def leaf(p):
        if p._grad_req in (None, "null") and not (variables and id(p) in variables):
            return None
        slot = leaf_slot.get(id(p))
        if slot is None:
            slot = leaf_slot[id(p)] = len(leaves)
            leaves.append(p)
        return _leaf_dest(slot)

    # a plan made only of deferred nodes whose parents are node outputs and variables can
    # be reused by a later backward of the same structure (``reuse_plan``)
    recipe = [] if variables is None else None
    for k, n in enumerate(order):
        dests, srcs, fix = [], [], False
        if n.sk is None or n.lazy is None:
            recipe = None
        # ``v``: the parent's value when recorded (deferred nodes; None if pending then)
        for j, (p, v) in enumerate(zip(n.parents, n.lazy[3] if n.lazy is not None else n.parents)):
            pn = p._node
            if pn is None:
                d = leaf(p)
                dests.append(d)
                if recipe is not None:
                    if d is None:
                        recipe = None
                    elif len(recipe) == d[1]:  # a new leaf
                        recipe.append((k, j))
            else:
                src = index.get(pn[0])
                dests.append(None if src is None else ("n", src, pn[1]))
                if pn[0].lazy is not None:  # a deferred parent's value is made inside the call
                    srcs.append((src, pn[1]))
                    continue
            srcs.append(None)
            if v is None:
                fix = True  # pending when recorded, produced since: read below
        avals = n.akey or aval_key(n.out_avals)
        lazy = n.lazy
        if lazy is None:
            plan.append((n.apply, avals, tuple(dests), None))
            args.append(n.vjp)
            continue
        srcs = tuple(srcs)
        plan.append((lazy[0], avals, tuple(dests), srcs))
        given = lazy[3]  # the parents' values when recorded (None: pending then)
        if fix:
            given = [
                None if s else p._data if v is None else v
                for s, p, v in zip(srcs, n.parents, given)
            ]
        args.append((lazy[1], given))
    plan = tuple(plan)
    head_plan, head_avals = [], []
    for h in heads:
        hn = h._node
        if hn is None:
            head_plan.append(leaf(h))
            head_avals.append(aval_key((h,))[0])
        else:
            head_plan.append(("n", index[hn[0]], hn[1]))
            akey = hn[0].akey
            head_avals.append(akey[hn[1]] if akey else aval_key((h,))[0])
    head_plan, head_avals = tuple(head_plan), tuple(head_avals)
    key = (plan, head_plan, head_avals, len(leaves))
    hit = _FUSED.get(key)
    if hit is None:
        if len(_FUSED) >= _FUSED_LIMIT:
            return None
        pure = _make_fused(plan, head_plan, head_avals, len(leaves))
        hit = _FUSED[key] = (pure, jax.jit(pure))
    if recipe is not None and all(h._node is not None for h in heads):
        skey = _structure(order, heads, {n: k for k, n in enumerate(order)})
        if skey is not None and len(_REUSE) < 2 * _FUSED_LIMIT:
            _REUSE[skey] = found = (hit, tuple(recipe))
            head = heads[0]._node
            if len(heads) == 1 and head[0].chain is not None and _chain(head[0]) == order:
                _REUSE[(head[0].chain, head[1])] = found
    # a missing head gradient is made of ones inside the compiled call (no extra dispatch)
    cts = [None if g is None else _raw(g).astype(h.dtype) for h, g in zip(heads, head_grads)]
    return FusedCall(hit, args, cts, leaves, order)


_REUSE: dict = {}  # structure of a tape (see _structure) -> (compiled plan, leaf positions)


def _structure(order, heads, index):
    """The hashable structure of a tape of deferred nodes (``Node.sk``/``kids``)."""
    try:
        nodes = tuple((n.sk, tuple([(index[c], i) for c, i in n.kids])) for n in order)
        return nodes, tuple([(index[h._node[0]], h._node[1]) for h in heads])
    except KeyError:  # a node parent not on the walk: not a tape of deferred nodes
        return None


def _kid_nodes(n):
    return [c for c, _ in n.kids] if n.kids else ()


def _chain(n):
    """The nodes of a chain (``Node.chain``), its head first."""
    order = [n]
    while n.kids:
        n = n.kids[0][0]
        order.append(n)
    return order


def reuse_plan(heads, head_grads):
    """``plan_backward``'s result from a plan made for the same structure, or None.

    Applies when every node is deferred and was recorded with its structure (``sk``):
    the walk follows the node parents noted when recording, and only the variables
    (found at the positions the plan noted) are checked, not every parent.
    """
    if len(heads) == 1:  # one chain of nodes: its number is its structure
        hn = heads[0]._node
        found = None if hn is None or hn[0].chain is None else _REUSE.get((hn[0].chain, hn[1]))
        if found is not None:
            order = _chain(hn[0])
            for n in order:
                if n.lazy is None:
                    return None
            return _reused(found, order, heads, head_grads)
    roots = []
    for h in heads:
        hn = h._node
        if hn is None or hn[0].sk is None or hn[0].lazy is None:
            return None
        roots.append(hn[0])
    if len(roots) == 1 and not roots[0].kids:
        order = roots
    else:
        order = postorder(roots, _kid_nodes)[::-1]
    for n in order:
        if n.sk is None or n.lazy is None:
            return None
    index = {n: k for k, n in enumerate(order)} if len(order) > 1 else {order[0]: 0}
    found = _REUSE.get(_structure(order, heads, index))
    return None if found is None else _reused(found, order, heads, head_grads)


def _reused(found, order, heads, head_grads):
    hit, recipe = found
    leaves = []
    for k, j in recipe:
        p = order[k].parents[j]
        if p._node is not None or p._grad_req in (None, "null"):
            return None
        leaves.append(p)
    args = [(n.lazy[1], n.lazy[3]) for n in order]
    cts = [None if g is None else _raw(g).astype(h.dtype) for h, g in zip(heads, head_grads)]
    return FusedCall(hit, args, cts, leaves, order, order)


class FusedCall:
    """One planned backward: ``run()`` gives the leaves' cotangents (once)."""

    def __init__(self, fns, args, cts, leaves, order, deferred=None):
        self.pure, self.jit = fns
        self.args, self.cts, self.leaves = args, cts, leaves
        if deferred is None:
            deferred = [n for n in order if n.lazy is not None]
        self.deferred = deferred
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
