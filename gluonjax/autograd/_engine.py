"""The backward pass: :func:`backward`, :func:`grad` and :func:`mark_variables`.

The tape reachable from the heads runs as one compiled call when every node
is fusable (``_plan``); otherwise (a custom ``Function``, gradients made with
``create_graph=True``) node by node. With deferral on, ``backward()`` only
plans: the gradients are pending until read or until ``trainer.step`` runs the
plan together with the update (``_deferred``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._caches import PROCESS
from .._ops import buckets as _buckets
from .._tape.node import FUSABLE, Kind, run_vjp, toposort
from .._tape.stats import apply_writes
from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from . import _deferred, _plan
from ._higher import grad_create_graph

__all__ = ["backward", "grad", "mark_variables"]


def _as_lists(heads, head_grads):
    if not isinstance(heads, (list, tuple)):
        heads = [heads]
        head_grads = [head_grads]
    elif head_grads is None:
        head_grads = [None] * len(heads)
    elif not isinstance(head_grads, (list, tuple)):
        head_grads = [head_grads]
    if len(head_grads) != len(heads):
        raise MXNetError(
            f"backward: got {len(heads)} head(s) but {len(head_grads)} head gradient(s); "
            f"pass one head gradient (or None) per head"
        )
    return list(heads), list(head_grads)


def _head_ones(h):
    """The implicit head gradient: None (ones made where the backward runs), or on a
    process with several devices, ones on the head's own devices when those are not the
    default one, so that the gradients land beside their variables."""
    if PROCESS.several_devices is None:
        PROCESS.several_devices = len(jax.local_devices()) > 1
    if not PROCESS.several_devices:
        return None
    sharding = getattr(h._data, "sharding", None)
    if sharding is None or sharding.device_set == {jax.local_devices()[0]}:
        return None
    return jnp.ones(h.shape, h.dtype, device=sharding)


def _head_roots(heads, head_grads):
    """Check the heads and their gradients; the heads' nodes and raw cotangents."""
    roots, cts = [], []
    for k, (h, g) in enumerate(zip(heads, head_grads)):
        if not isinstance(h, NDArray):
            raise MXNetError(f"backward: head {k} is a {type(h).__name__}, not an NDArray")
        hn = h._node
        if hn is not None and hn[0].kind is Kind.FREED:
            raise MXNetError(
                f"backward: head {k} ({hn[0].name}) was already differentiated and its graph "
                f"freed. Pass retain_graph=True to the first backward() to call it again."
            )
        if hn is None and h._grad_req in (None, "null"):
            raise MXNetError(
                f"backward: head {k} (shape {h.shape}) was not computed under "
                f"autograd.record() from arrays that need a gradient. Wrap the forward in "
                f"`with autograd.record():` and call x.attach_grad() (or use Parameters) first."
            )
        if g is None:
            cts.append(_head_ones(h))
        else:
            raw = g._data if isinstance(g, NDArray) else jnp.asarray(g)
            if tuple(raw.shape) != tuple(h.shape):
                raise MXNetError(
                    f"backward: head gradient {k} has shape {tuple(raw.shape)} but head {k} "
                    f"has shape {tuple(h.shape)}; pass a head gradient of the head's shape"
                )
            cts.append(raw.astype(h.dtype) if raw.dtype != h.dtype else raw)
        if hn is not None and hn[0] not in roots:
            roots.append(hn[0])
    return roots, cts


def _run(heads, head_grads, retain_graph, variables, defer):
    """Propagate cotangents from ``heads``.

    Returns ``{id(leaf): (leaf, cotangent)}``, or with ``defer`` a planned
    ``FusedCall`` that has not run.
    """
    roots, cts = _head_roots(heads, head_grads)
    order = toposort(roots) if roots else []
    for n in order:
        if n.kind is Kind.FREED:
            raise MXNetError(
                f"backward through '{n.name}' a second time: its graph was freed by an "
                f"earlier backward() (of this head or of another one that shares it). Pass "
                f"retain_graph=True to that backward() if you need to differentiate again."
            )
    apply_writes(order)  # BatchNorm's moving statistics move in the backward (MXNet 1.x)
    if all(n.kind in FUSABLE for n in order):
        call = _plan.plan(order, heads, cts, variables)
        call.release(retain_graph)
        return call if defer else call.cts_by_leaf(call.run())
    for n in reversed(order):  # inputs first: deferred nodes run on their own
        if n.kind is Kind.DEFERRED:
            _deferred.produce(n)
    return _node_run(order, heads, cts, retain_graph, variables)


def _eligible(arr, variables):
    if variables is None:
        return arr._grad_req in ("write", "add")
    return id(arr) in variables


def _node_run(order, heads, cts_in, retain_graph, variables):
    """Backward node by node (custom Functions and create_graph gradients on the tape)."""
    cts, leaves = {}, {}

    def add(e, ct):
        if type(e) is tuple:
            key = (id(e[0]), e[1])
        else:
            if not _eligible(e, variables):
                return
            key = id(e)
            leaves[key] = e
        prev = cts.get(key)
        cts[key] = ct if prev is None else _buckets.add(prev, ct)

    # ones, zeros and sums come from the host and size classes: on new shapes this path
    # (taken by eager ops on size classes) compiles nothing per shape. Between size-class
    # VJPs (BUCKET nodes) a cotangent stays on the host (``buckets.Host``); it is put on
    # the device for any other node and for the variables' gradients.
    for h, g in zip(heads, cts_in):
        add(h._node or h, _buckets.host_filled(h.shape, h.dtype, 1) if g is None else g)
    for node in order:
        outs = []
        for i, av in enumerate(node.avals):
            ct = cts.pop((id(node), i), None)
            outs.append(_buckets.host_filled(av.shape, av.dtype, 0) if ct is None else ct)
        if node.kind is not Kind.BUCKET:
            outs = [_buckets.on_device(o) for o in outs]
        if node.bwd is not None:  # FUNCTION, GRAD, BUCKET
            in_cts = node.bwd(tuple(outs))
        else:
            in_cts = run_vjp(node, outs)
        for e, ct in zip(node.inputs, in_cts):
            if ct is not None and getattr(ct, "dtype", None) != jax.dtypes.float0:
                add(e, ct)
        if not retain_graph:
            node.free()
    return {k: (leaves[k], _buckets.on_device(cts[k])) for k in leaves}


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):  # noqa: ARG001
    """Compute the gradients of ``heads`` and write them into the variables' ``.grad``.

    Parameters
    ----------
    heads : NDArray or list of NDArray
        Outputs to differentiate (a non-scalar head is seeded with ones).
    head_grads : NDArray or list, optional
        Cotangents for the heads, each of its head's shape.
    retain_graph : bool
        Keep the tape so backward can run again.
    """
    heads, head_grads = _as_lists(heads, head_grads)
    PROCESS.backwards += 1
    res = _run(heads, head_grads, retain_graph, None, PROCESS.defer)
    if type(res) is _plan.FusedCall:  # gradients stay pending until read or trainer.step
        _deferred.defer_grads(res)
        return
    for leaf, ct in res.values():
        leaf._accumulate_grad(ct)


def _check_variables(variables):
    for k, v in enumerate(variables):
        if not isinstance(v, NDArray) or v._node is not None or v._grad_req is None:
            raise MXNetError(
                f"autograd.grad: cannot differentiate with respect to variable {k}"
                f"{'' if not isinstance(v, NDArray) else f' (shape {v.shape})'}: it does not "
                f"require a gradient. Variables must be arrays with attach_grad() (or "
                f"Parameter data), not results of recorded operations."
            )


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False, train_mode=True):  # noqa: ARG001
    """Gradients of ``heads`` with respect to ``variables``, returned (not stored).

    Returns a list with one gradient per variable (also for a single variable,
    as MXNet 1.x does). With ``create_graph=True`` the returned gradients are
    themselves on the tape, so they can be differentiated again (higher-order
    gradients). As in MXNet, a variable the heads do not depend on is an error.

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.array([1.0, 2.0]); x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = (x * x * x).sum()
    ...     dx = mx.autograd.grad(y, x, create_graph=True)[0]
    ...     z = dx.sum()
    >>> z.backward(); x.grad.asnumpy().tolist()
    [6.0, 12.0]
    """
    heads, head_grads = _as_lists(heads, head_grads)
    variables = [variables] if isinstance(variables, NDArray) else list(variables)
    if not variables:
        raise MXNetError("autograd.grad: variables cannot be an empty list")
    _check_variables(variables)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        roots, cts = _head_roots(heads, head_grads)
        apply_writes(toposort(roots) if roots else [])
        out = grad_create_graph(heads, roots, cts, variables, retain_graph)
    else:
        found = _run(heads, head_grads, retain_graph, {id(v) for v in variables}, False)
        out = []
        for k, v in enumerate(variables):
            hit = found.get(id(v))
            if hit is None:
                raise MXNetError(
                    f"autograd.grad: cannot differentiate with respect to variable {k} "
                    f"(shape {v.shape}): it is unreachable from the heads"
                )
            ct = hit[1]
            out.append(NDArray(ct if ct.dtype == v.dtype else ct.astype(v.dtype)))
    return out  # a list even for one variable, as MXNet 1.x returns


def mark_variables(variables, gradients, grad_reqs="write"):
    """Make ``variables`` leaves of the tape whose gradients go to ``gradients``.

    Parameters
    ----------
    variables : NDArray or list of NDArray
    gradients : NDArray or list of NDArray
        One gradient buffer per variable, of its shape.
    grad_reqs : str or list of str
        'write', 'add' or 'null', one for all or one per variable.
    """
    if not isinstance(variables, (list, tuple)):
        variables = [variables]
    if not isinstance(gradients, (list, tuple)):
        gradients = [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not (len(variables) == len(gradients) == len(grad_reqs)):
        raise MXNetError(
            f"mark_variables: got {len(variables)} variable(s), {len(gradients)} gradient(s) "
            f"and {len(grad_reqs)} grad_req(s); pass one gradient and one grad_req per variable"
        )
    for k, (v, g, r) in enumerate(zip(variables, gradients, grad_reqs)):
        if r not in ("write", "add", "null"):
            raise MXNetError(f"mark_variables: grad_req {k} is {r!r}; use write, add or null")
        if tuple(g.shape) != tuple(v.shape):
            raise MXNetError(
                f"mark_variables: gradient {k} has shape {tuple(g.shape)} but its variable "
                f"has shape {tuple(v.shape)}"
            )
    for v, g, r in zip(variables, gradients, grad_reqs):
        v._grad, v._grad_req, v._node = g, r, None
        v._fresh_grad = False


PROCESS.backward = backward  # NDArray.backward (a lower layer) reaches the engine here
