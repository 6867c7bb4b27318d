"""Deferred values under ``autograd.record()``: fewer compiled calls per training step.

In the three-line Gluon loop::

    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    trainer.step(batch_size)

a hybridized block called while recording (with an input signature it has
already run once) does not run at once: it returns ``Pending`` arrays and puts
a *deferred* node on the tape. ``backward()`` then plans the forward of the
deferred nodes, the backward of the whole tape and (when ``trainer.step`` comes
next) the optimizer update as ONE compiled call; the gradients are ``Pending``
until that call runs. Reading any pending value (``asnumpy()``, an eager op,
``.grad``, ``shape`` excepted) runs what it needs first, so user code sees the
same values as without deferral; only the moment the work happens moves.
"""

from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .ndarray.ndarray import NDArray

__all__ = ["ENABLED", "Pending", "aval", "defer_grads", "force_node", "outputs", "pending_call"]

ENABLED = [True]  # tests switch deferral off to compare against the eager tape

_SLOT = NDArray.__dict__["_data"]
_NEW, _ref = NDArray.__new__, weakref.ref
_get, _set = _SLOT.__get__, _SLOT.__set__


class Pending(NDArray):
    """An NDArray whose value is produced by deferred work (see module docstring).

    It turns back into its original class when the value arrives; ``shape`` and
    ``dtype`` are known before that and never force the work.
    """

    __slots__ = ()

    def _get_data(self):
        _force(self)
        return _get(self)

    def _set_data(self, value):
        _set(self, value)
        _settle(self)

    _data = property(_get_data, _set_data)

    @property
    def shape(self):
        return tuple(self.__dict__["_aval"].shape)

    @property
    def dtype(self):
        return np.dtype(self.__dict__["_aval"].dtype)

    @property
    def ndim(self):
        return len(self.__dict__["_aval"].shape)

    @property
    def size(self):
        return int(np.prod(self.__dict__["_aval"].shape, dtype=np.int64))


def _settle(arr):
    d = arr.__dict__
    d.pop("_aval", None)
    d.pop("_gsrc", None)
    d.pop("_nsrc", None)
    arr.__class__ = d.pop("_cls", NDArray)


def _make_pending(arr, aval):
    """Turn ``arr`` (or a new array when ``None``) into a Pending one of ``aval``."""
    if arr is None:
        arr = NDArray.__new__(Pending)
    elif type(arr) is not Pending:
        arr.__dict__["_cls"] = type(arr)
        arr.__class__ = Pending
    arr.__dict__["_aval"] = aval
    return arr


def aval(value):
    """The abstract value of a raw array: jax's own (``ShapedArray``) when it has one."""
    try:
        return value.aval
    except AttributeError:  # a numpy array
        return jax.ShapeDtypeStruct(np.shape(value), np.result_type(value))


def _aval_of(arr):
    return arr.__dict__["_aval"] if type(arr) is Pending else aval(_get(arr))


def _force(arr):
    src = arr.__dict__.get("_gsrc")
    if src is not None:
        src[0].run()
    else:
        node = arr.__dict__["_nsrc"]
        if node.claim is not None:
            node.claim.run()
        else:
            force_node(node)
    if type(arr) is Pending:  # an internal invariant, not a user error
        raise RuntimeError("gluonjax: a deferred value was not produced by its computation")


def outputs(node, avals):
    """Pending output arrays of a deferred ``node`` (weakly kept by the node)."""
    outs, refs = [], []
    for i, aval in enumerate(avals):
        a = _NEW(Pending)
        a.__dict__ = {"_aval": aval, "_node": (node, i), "_nsrc": node}
        outs.append(a)
        refs.append(_ref(a))
    node.outs = refs
    return outs


def fill(node, values):
    """Give the live pending outputs of ``node`` their values."""
    for ref, v in zip(node.outs or (), values):
        a = ref()
        if a is not None and type(a) is Pending:
            _set(a, v)
            _settle(a)


def force_node(node):
    """Run a deferred node on its own (its forward with VJP), making it a regular node."""
    from ._tape import _per_node_bwd

    # the parents' values when recorded; pending ones are produced first
    vals = [p._data if v is None else v for p, v in zip(node.parents, node.lazy[3])]
    forward_vjp, fkey = node.lazy[2]
    leaves, vjp, apply = forward_vjp(fkey, node.lazy[1], vals)
    node.vjp, node.apply, node.lazy = vjp, apply, None
    node.bwd = _per_node_bwd(node)
    fill(node, leaves)


def defer_grads(call):
    """Make the gradient buffers of ``call``'s leaves Pending on ``call``."""
    grads = []
    for j, leaf in enumerate(call.leaves):
        req, g = leaf._grad_req, leaf._grad
        if g is None:  # a new buffer: the variable's value stands for the aval
            g = leaf._grad = _make_pending(None, _aval_of(leaf))
        else:
            if req == "add" and type(g) is Pending:
                g._data  # noqa: B018 - an earlier pending gradient is produced first
            if type(g) is not Pending:  # its current value stands for the aval
                d = g.__dict__
                d["_cls"], d["_aval"] = type(g), aval(_get(g))
                g.__class__ = Pending
        g.__dict__["_gsrc"] = (call, j)
        grads.append((req, g))
    call.grads = grads


def settle_grads(call, cts):
    """Write ``cts`` (one per leaf, maybe ``None``) into the grads still pending on ``call``."""
    for j, (req, g) in enumerate(call.grads):
        if g.__dict__.get("_gsrc", (None,))[0] is not call:
            continue  # written since (zero_grad, a later backward...)
        ct = cts[j]
        try:
            old = _get(g)
        except AttributeError:
            old = None
        if ct is None:
            value = old if old is not None else jnp.zeros(g.shape, g.dtype)
        elif req == "add" and old is not None:
            value = old + ct
        else:
            value = ct if ct.dtype == g.dtype else ct.astype(g.dtype)
        _set(g, value)
        _settle(g)


def pending_call(grads):
    """``(call, leaf positions)`` if all ``grads`` wait on one unrun backward, written
    (not added) as they are; else ``(None, None)``."""
    call, pos = None, []
    for g in grads:
        src = g.__dict__.get("_gsrc") if type(g) is Pending else None
        if src is None or (call is not None and src[0] is not call):
            return None, None
        call = src[0]
        if call.grads[src[1]][0] != "write":
            return None, None
        pos.append(src[1])
    if call is None or call.result is not None or call.stepped:
        return None, None
    return call, pos
