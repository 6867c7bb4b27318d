"""The autograd tape: nodes, backward and grad (see ``gluonjax.autograd``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._graph import postorder
from .base import MXNetError

__all__ = ["Node", "backward", "grad", "mark_variables"]


class Node:
    """One recorded call: ``bwd(cotangents) -> input cotangents`` for ``parents``.

    ``parents`` are the NDArray inputs that need a gradient; ``n_out`` outputs
    refer back to the node as ``array._node = (node, index)``.
    """

    __slots__ = (
        "bwd", "parents", "n_out", "out_avals", "name", "replay", "vjp", "apply",
        "lazy", "outs", "claim", "akey", "sk", "kids", "chain",
    )  # fmt: skip

    def __init__(self, bwd, parents, out_avals, name, replay=None, vjp=None, apply=None):
        self.parents = parents
        self.n_out = len(out_avals)
        self.out_avals = out_avals
        self.name = name
        self.replay = replay  # pure fn(*parent values) -> outputs tuple, for create_graph
        # jax VJP closure + a stable pure ``apply(vjp, cts) -> input cts``: lets backward
        # run the whole tape as ONE compiled call (see _fused_tape)
        self.vjp = vjp
        self.apply = apply
        # a deferred node (see _lazy): (pure fn(consts, *parents), consts, force, the
        # parents' values when recorded, None where still pending) and
        # weak refs to its Pending outputs; ``claim`` is the planned backward producing them
        self.lazy = self.outs = self.claim = None
        self.akey = None  # aval_key(out_avals), when known in advance
        # a deferred node's structure, for reusing the plan of a backward: ``sk`` the id
        # of its call's signature, ``kids`` the (node, index) of its node parents
        self.sk = self.kids = self.chain = None
        if bwd is None and vjp is not None:
            bwd = _per_node_bwd(self)
        self.bwd = bwd


def deferred_node(parents, name, replay, lazy, avals, akey, sk, kids):
    """A deferred node (see ``_lazy``): ``Node(None, parents, avals, name, replay)`` with
    ``lazy``, ``akey``, ``sk`` and ``kids`` set, built without ``__init__``'s checks (the
    recording path). ``chain`` numbers the structure of a chain of such nodes."""
    n = _NEW(Node)
    n.bwd = n.vjp = n.apply = n.outs = n.claim = None
    n.parents, n.name, n.replay, n.lazy = parents, name, replay, lazy
    n.n_out, n.out_avals, n.akey, n.sk, n.kids = len(avals), avals, akey, sk, kids
    n.chain = None
    if sk is not None:
        if not kids:
            n.chain = _chain_id((sk,))
        elif len(kids) == 1 and kids[0][0].chain is not None:
            n.chain = _chain_id((sk, kids[0][0].chain, kids[0][1]))
    return n


_CHAINS: dict = {}
_CHAIN_IDS = iter(range(1 << 62))


def _chain_id(structure):
    got = _CHAINS.get(structure)
    if got is None:
        if len(_CHAINS) > 10_000:  # ids are never reused: old plans just stop matching
            _CHAINS.clear()
        got = _CHAINS[structure] = next(_CHAIN_IDS)
    return got


_NEW = object.__new__
_APPLY_JIT: dict = {}


def _per_node_bwd(node):
    fn = _APPLY_JIT.get(node.apply)
    if fn is None:
        fn = _APPLY_JIT[node.apply] = jax.jit(node.apply)
    return lambda cts: fn(node.vjp, tuple(cts))


def apply_single(vjp, cts):
    """``apply`` for a node with one output."""
    return vjp(cts[0])


def apply_multi(vjp, cts):
    """``apply`` for a node with several outputs."""
    return vjp(tuple(cts))


def needs_grad(arr):
    """True if ``arr`` is on the tape or is a variable with a gradient buffer."""
    return arr._node is not None or (arr._grad_req is not None and arr._grad_req != "null")


def _kids(n):
    return [p._node[0] for p in n.parents if p._node is not None]


def _toposort(heads):
    """Tape nodes reachable from ``heads``, heads first (users before inputs)."""
    roots = [h._node[0] for h in heads if h._node is not None]
    if len(roots) == 1:  # a chain (one head, each node fed by at most one node): no search
        order, n = [], roots[0]
        while n is not None:
            order.append(n)
            kids = [p._node for p in n.parents if p._node is not None]
            if len(kids) > 1:
                break
            n = kids[0][0] if kids else None
        else:
            return order
    return postorder(roots, _kids)[::-1]


def _run(heads, head_grads, retain_graph, variables=None, defer=False):
    """Propagate cotangents from ``heads``.

    Returns ``{id(leaf): (leaf, cotangent)}``, or with ``defer`` a planned
    ``FusedCall`` (not run yet) when the tape allows one.
    """
    if variables is None:  # the plan of an earlier backward of the same structure
        call = _fused().reuse_plan(heads, head_grads)
        if call is not None:
            call.release(retain_graph)
            return call if defer else call.cts_by_leaf(call.run())
    order = _toposort(heads)
    if order and all(n.vjp is not None or n.lazy is not None for n in order):
        call = _fused().plan_backward(order, heads, head_grads, variables)
        if call is not None:
            call.release(retain_graph)
            return call if defer else call.cts_by_leaf(call.run())
    for n in reversed(order):  # inputs first: deferred nodes run on their own
        if n.lazy is not None:
            _lazy().force_node(n)
    return _node_run(order, heads, head_grads, retain_graph, variables)


_MODS: list = []  # (_lazy, _fused_tape), imported on first use (they import this module)


def _mods():
    if not _MODS:
        from . import _fused_tape, _lazy

        _MODS.extend((_lazy, _fused_tape))
    return _MODS


def _lazy():
    return (_MODS or _mods())[0]


def _fused():
    return (_MODS or _mods())[1]


def _eligible(arr, variables):
    return arr._grad_req not in (None, "null") or (variables is not None and id(arr) in variables)


def _check_heads(heads):
    for h in heads:
        if not needs_grad(h):
            raise MXNetError(
                "cannot differentiate with respect to an array that was not computed "
                "under autograd.record() from arrays with attach_grad(); wrap the "
                "forward in `with autograd.record():` and call x.attach_grad() first"
            )


def _node_run(order, heads, head_grads, retain_graph, variables):
    """Backward node by node (custom Functions, freed graphs, very many tape shapes)."""
    cts, leaves = {}, {}

    def add(arr, ct):
        if arr._node is not None:
            key = (id(arr._node[0]), arr._node[1])
        else:
            if not _eligible(arr, variables):
                return
            key = id(arr)
            leaves[key] = arr
        prev = cts.get(key)
        cts[key] = ct if prev is None else prev + ct

    _check_heads(heads)
    for h, g in zip(heads, head_grads):
        add(h, jnp.ones(h.shape, h.dtype) if g is None else _raw(g).astype(h.dtype))

    for node in order:
        if node.bwd is None:
            raise MXNetError(
                f"backward through '{node.name}' a second time: its intermediate results "
                f"were freed by the first backward. Pass retain_graph=True to the first "
                f"backward() if you need to call it again."
            )
        outs = []
        for i, aval in enumerate(node.out_avals):
            ct = cts.pop((id(node), i), None)
            outs.append(jnp.zeros(aval.shape, aval.dtype) if ct is None else ct)
        in_cts = node.bwd(tuple(outs))
        if not retain_graph:
            node.bwd = node.vjp = None
        for p, ct in zip(node.parents, in_cts):
            if ct is not None and getattr(ct, "dtype", None) != jax.dtypes.float0:
                add(p, ct)
    return {k: (leaves[k], cts[k]) for k in leaves}


def _raw(x):
    return x._data if hasattr(x, "_data") else jnp.asarray(x)


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):  # noqa: ARG001
    """Compute gradients of ``heads`` and write them into the variables' ``.grad``.

    Parameters
    ----------
    heads : NDArray or list of NDArray
        Outputs to differentiate (a non-scalar head is seeded with ones).
    head_grads : NDArray or list, optional
        Cotangents for the heads.
    retain_graph : bool
        Keep the tape so backward can run again.
    """
    heads, head_grads = _as_lists(heads, head_grads)
    lazy, fused = _MODS or _mods()
    res = _run(heads, head_grads, retain_graph, defer=lazy.ENABLED[0])
    if type(res) is fused.FusedCall:  # gradients stay Pending until read or trainer.step
        lazy.defer_grads(res)
        return
    for leaf, ct in res.values():
        leaf._accumulate_grad(ct)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False, train_mode=True):  # noqa: ARG001
    """Gradients of ``heads`` with respect to ``variables``, returned (not stored).

    With ``create_graph=True`` the returned gradients are themselves on the tape,
    so they can be differentiated again (higher-order gradients).
    """
    from .ndarray.ndarray import NDArray

    heads, head_grads = _as_lists(heads, head_grads)
    single = not isinstance(variables, (list, tuple))
    variables = [variables] if single else list(variables)
    if create_graph:
        from ._higher import grad_create_graph

        out = grad_create_graph(heads, variables, head_grads)
    else:
        keep = bool(retain_graph)
        found = _run(heads, head_grads, keep, {id(v) for v in variables})
        out = []
        for v in variables:
            hit = found.get(id(v))
            out.append(NDArray(hit[1] if hit else jnp.zeros(v.shape, v.dtype)))
    return out[0] if single else out


def _as_lists(heads, head_grads):
    if not isinstance(heads, (list, tuple)):
        heads = [heads]
        head_grads = [head_grads]
    elif head_grads is None:
        head_grads = [None] * len(heads)
    if len(head_grads) != len(heads):
        raise MXNetError(f"got {len(heads)} heads but {len(head_grads)} head_grads")
    return list(heads), list(head_grads)


def mark_variables(variables, gradients, grad_reqs="write"):
    """Make ``variables`` leaves of the tape whose gradients go to ``gradients``."""
    if not isinstance(variables, (list, tuple)):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    for v, g, r in zip(variables, gradients, grad_reqs):
        v._grad, v._grad_req, v._node = g, r, None
