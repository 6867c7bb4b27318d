"""Tape nodes: what one recorded call keeps for the backward pass.

Imports no ``NDArray``: arrays are read through their autograd fields only
(``_node``, ``_grad_req``). A node's inputs are *entries*, fixed when it is
recorded, so a later write into an input array (``y[:] = 0`` outside
``record()``, rebinding ``y``) never changes what the node differentiates:

* ``(node, index)``: output ``index`` of another node;
* an array: a variable (a leaf with ``attach_grad``) whose ``grad`` receives
  the gradient.

A node's :class:`Kind` says how its backward runs; see each member.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import jax
import numpy as np

from .._caches import LRU
from .._graph import postorder

__all__ = [
    "int_grad",
    "int_apply",
    "Kind",
    "Node",
    "OpOrigin",
    "CallOrigin",
    "DeferredCall",
    "entry",
    "needs_grad",
    "toposort",
    "vjp_node",
    "apply_single",
    "apply_multi",
    "run_vjp",
    "with_vjp",
    "pullback",
    "inexact",
]


class Kind(enum.Enum):
    """How a node's backward (and, for a deferred node, its forward) runs."""

    OP = "eager registry op"  # vjp + apply: fusable into one compiled backward
    CACHED = "hybridized call"  # a compiled forward run at once, with its vjp
    DEFERRED = "deferred hybridized call"  # recorded, not run: ``call`` says how
    FORCED = "deferred call run on its own"  # a DEFERRED node whose value was read
    FUNCTION = "custom autograd.Function"  # ``bwd`` runs the user's backward
    BUCKET = "eager op on a size class"  # ``bwd``: the VJP on the class, or on the host
    GRAD = "gradient of grad(create_graph=True)"  # ``bwd``: vjp of the gradient function
    FREED = "freed by backward"  # retain_graph=False: nothing left to differentiate


_VJP_KINDS = (Kind.OP, Kind.CACHED, Kind.FORCED)
FUSABLE = frozenset((*_VJP_KINDS, Kind.DEFERRED))  # what one compiled backward can run


class OpOrigin(NamedTuple):
    """What an OP node was: ``op`` with ``static_key`` on ``n_args`` arguments, of which
    those at ``positions`` (indices into the op's array list, after ``offset`` random-key
    arguments) are the node's inputs; the others were constants."""

    op: object
    static_key: tuple
    n_args: int
    positions: tuple
    offset: int


class CallOrigin(NamedTuple):
    """What a hybridized call's node was: the block's compiled graph (``CachedGraph``),
    the indices of the parameters that are inputs, and which call arguments are."""

    cached: object
    param_idx: tuple
    imask: tuple


class DeferredCall:
    """How a DEFERRED node computes its outputs (see ``autograd._deferred``).

    Parameters
    ----------
    fn : callable
        Pure ``fn(consts, *input_values) -> tuple of output values``.
    consts : pytree
        Everything the call needs that is not an input (non-differentiable
        arguments, the random key).
    given : tuple
        Each input's value when recorded; ``None`` for an input that was itself
        pending then (the output of another deferred node).
    sig : int
        Identifies ``fn`` with its argument signature: equal ``sig`` means the
        same computation on inputs of the same shapes (a key of the fused plan).
    run : callable
        ``run(consts, input_values) -> (output values, vjp, apply)``: the forward
        with its VJP, compiled on its own (when the node is forced).
    """

    __slots__ = ("fn", "consts", "given", "sig", "run")

    def __init__(self, fn, consts, given, sig, run):
        self.fn, self.consts, self.given, self.sig, self.run = fn, consts, given, sig, run


class Node:
    """One recorded call.

    Attributes
    ----------
    kind : Kind
    name : str
        The op or block, for messages.
    inputs : tuple
        The entries of the inputs that need a gradient (see module docstring).
    avals : tuple
        Output shapes and dtypes (jax abstract values).
    replay : callable or None
        Pure ``replay(*input_values) -> outputs``: what ``grad(create_graph=True)``
        differentiates again.
    vjp, apply
        OP, CACHED, FORCED: jax's VJP closure and a stable pure
        ``apply(vjp, cotangents) -> input cotangents`` (so many nodes run as one
        compiled backward).
    bwd : callable or None
        FUNCTION, GRAD, BUCKET: ``bwd(cotangents) -> input cotangents``.
    call : DeferredCall or None
        DEFERRED (and a FREED node whose planned backward has not run yet).
    values : tuple or None
        The output values once known (a deferred call's, after it ran).
    outs : list of weakref or None
        DEFERRED: the pending output arrays, filled when the values arrive.
    claim
        The planned backward (``_plan.FusedCall``) that will produce the outputs.
    origin : OpOrigin or CallOrigin or None
        What ``autograd.get_symbol`` rebuilds the node from.
    writes : _tape.stats.StatWrite or None
        Moving statistics (BatchNorm's) that the backward writes when it runs
        through this node, as MXNet 1.x does.
    """

    __slots__ = (
        "kind", "name", "inputs", "avals", "replay", "vjp", "apply", "bwd",
        "call", "values", "outs", "claim", "origin", "writes", "__weakref__",
    )  # fmt: skip

    def __init__(self, kind, name, inputs, avals, replay=None):
        self.kind, self.name, self.inputs, self.avals = kind, name, inputs, avals
        self.replay = replay
        self.vjp = self.apply = self.bwd = self.call = None
        self.values = self.outs = self.claim = self.origin = self.writes = None

    def __repr__(self):
        return f"<Node {self.name} {self.kind.name}>"

    def free(self):
        """Release what only a backward needs (``retain_graph=False``): the VJP, the
        links to the inputs (the parameters and data they hold) and the origin. The
        output values stay for arrays that still read them."""
        self.kind = Kind.FREED
        self.vjp = self.apply = self.bwd = self.replay = self.origin = self.writes = None
        self.inputs = ()
        if self.claim is None:
            self.call = None


def with_vjp(fn, *primals, has_aux=False):
    """``(outputs, vjp)`` (``(outputs, vjp, aux)`` with ``has_aux``) of pure ``fn`` at
    ``primals``: what a tape node keeps for its backward.

    With :func:`pullback`, the one place gluonjax asks jax for a derivative: eager ops,
    hybridized and deferred calls, the fused backward and step, the executor, the
    monitor and ``grad(create_graph=True)`` all come here.
    """
    return jax.vjp(fn, *primals, has_aux=has_aux)


def pullback(fn, primals, cts=None, has_aux=False):
    """``(outputs, cotangents of primals)`` (and ``aux`` with ``has_aux``): ``fn`` at
    ``primals`` and its VJP applied at once to ``cts`` (a list matching the outputs, each
    cast to its output's dtype, None for ones; ``cts=None`` for ones everywhere: the
    gradient of a scalar)."""
    res = jax.vjp(fn, *primals, has_aux=has_aux)
    outs, vjp = res[0], res[1]
    if cts is None:
        seeds = jax.tree_util.tree_map(jax.numpy.ones_like, outs)
    else:
        seeds = type(cts)(
            jax.numpy.ones_like(o) if c is None else jax.numpy.asarray(c).astype(o.dtype)
            for o, c in zip(outs, cts)
        )
    in_cts = vjp(seeds)
    return (outs, in_cts, res[2]) if has_aux else (outs, in_cts)


def vjp_node(kind, name, inputs, avals, vjp, apply, replay=None):
    """A node of a VJP kind (OP, CACHED, FORCED) with its VJP closure."""
    n = Node(kind, name, inputs, avals, replay)
    n.vjp, n.apply = vjp, apply
    return n


def apply_single(vjp, cts):
    """``apply`` for a node with one output."""
    return vjp(cts[0])


def apply_multi(vjp, cts):
    """``apply`` for a node with several outputs."""
    return vjp(tuple(cts))


_APPLY_JIT = LRU(64, "node backward kernels")  # apply functions are few: one jit each


def run_vjp(node, cts):
    """Run a VJP-kind node's backward on its own: the input cotangents."""
    fn = _APPLY_JIT.get(node.apply)
    if fn is None:
        fn = _APPLY_JIT.put(node.apply, jax.jit(node.apply))
    return fn(node.vjp, tuple(cts))


_INEXACT = LRU(64, "dtype kinds")


def inexact(dtype):
    """``np.issubdtype(dtype, np.inexact)``, cached (it is on the recording path)."""
    hit = _INEXACT.get(dtype)
    if hit is None:
        hit = _INEXACT.put(dtype, bool(np.issubdtype(dtype, np.inexact)))
    return hit


def int_grad(arr):
    """Whether integer array ``arr`` takes part in differentiation, as MXNet's integer
    arrays do: a variable (``attach_grad``) or the result of such a computation. jax has
    no integer cotangents, so these run their VJP on float32 stand-ins (:func:`int_apply`)."""
    n = arr._node
    if n is None:
        return arr._grad_req in ("write", "add") and (
            np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_
        )
    return n[0].kind is not Kind.FREED and getattr(n[0].apply, "int_grad", False)


_INT_APPLY = LRU(256, "integer-gradient node backward")


def int_apply(ct_dtype, in_dtypes, multi=False):
    """``apply`` of a node whose VJP ran on float stand-ins of integer inputs: cotangents
    are cast to the VJP's float output dtype ``ct_dtype``; the input cotangents of integer
    positions (``in_dtypes[i]`` not None) back to their integer dtype. One function per
    signature, so compiled backwards are shared."""
    key = (ct_dtype, in_dtypes, multi)
    fn = _INT_APPLY.get(key)
    if fn is None:

        def fn(vjp, cts):
            cts = tuple(c.astype(ct_dtype) for c in cts)
            res = vjp(tuple(cts)) if multi else vjp(cts[0])
            return tuple(r if d is None else r.astype(d) for r, d in zip(res, in_dtypes))

        fn.int_grad = True
        fn = _INT_APPLY.put(key, fn)
    return fn


def needs_grad(arr):
    """True if ``arr`` is the output of a live tape node or a variable with a gradient."""
    n = arr._node
    if n is not None:
        return n[0].kind is not Kind.FREED
    return arr._grad_req is not None and arr._grad_req != "null"


def entry(arr):
    """The entry of ``arr`` as a node input: ``(node, index)`` or the variable itself."""
    n = arr._node
    return arr if n is None else n


def _children(node):
    return [e[0] for e in node.inputs if type(e) is tuple]


def toposort(roots):
    """Nodes reachable from ``roots`` (nodes), users before their inputs."""
    if len(roots) == 1:  # a chain (each node fed by at most one node): no search
        order, n = [], roots[0]
        while True:
            order.append(n)
            kids = [e for e in n.inputs if type(e) is tuple]
            if not kids:
                return order
            if len(kids) > 1:
                break
            n = kids[0][0]
    return postorder(roots, _children)[::-1]
