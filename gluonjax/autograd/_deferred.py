"""Deferred values under ``autograd.record()``: fewer compiled calls per training step.

In the three-line Gluon loop::

    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    trainer.step(batch_size)

a hybridized block (or a built-in layer) called while recording, with an input
signature it has already run once, does not run at once: it returns
:class:`Pending` arrays and puts a DEFERRED node on the tape (its pure forward,
the inputs' values as of now). ``backward()`` then plans the forward of the
deferred nodes and the backward of the whole tape as one compiled call
(``autograd._plan``); the gradients are pending on it, and ``trainer.step``
runs it together with the optimizer update. Reading any pending value
(``asnumpy()``, an eager op, ``.grad``; not ``shape``/``dtype``) runs what it
needs first, so user code sees the same values as without deferral; only the
moment the work happens moves. ``autograd.set_deferral(False)`` (or
``GLUONJAX_DEFER=0``) turns it off.
"""

from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .._graph import postorder
from .._tape.node import DeferredCall, Kind, Node
from ..base import MXNetError
from ..ndarray.ndarray import NDArray

__all__ = [
    "Pending",
    "aval",
    "record_deferred",
    "produce",
    "deliver",
    "defer_grads",
    "settle_grads",
    "pending_call",
]

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

    @property
    def stype(self):  # a pending sparse gradient keeps its storage type
        return self.__dict__.get("_cls", NDArray)._stype

    def __getattr__(self, name):
        # what only the original class has (a sparse gradient's ``indices``): the value first
        cls = self.__dict__.get("_cls")
        if cls is None or name.startswith("__") or not hasattr(cls, name):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        self._data  # noqa: B018 - produces the value; the array is its own class again
        return getattr(self, name)


def _settle(arr):
    d = arr.__dict__
    d.pop("_aval", None)
    d.pop("_gsrc", None)
    d.pop("_nsrc", None)
    arr.__class__ = d.pop("_cls", NDArray)


def aval(value):
    """The abstract value of a raw array: jax's own (``ShapedArray``) when it has one."""
    try:
        return value.aval
    except AttributeError:  # a numpy array
        return jax.ShapeDtypeStruct(np.shape(value), np.result_type(value))


def _force(arr):
    d = arr.__dict__
    src = d.get("_gsrc")
    if src is not None:
        src[0].run()
    else:
        produce(d["_nsrc"])
    if type(arr) is Pending:
        raise MXNetError("gluonjax internal error: a deferred value was not produced")


# ---------------------------------------------------------------- deferred nodes
def record_deferred(name, inputs, avals, fn, consts, given, sig, run):
    """Put a DEFERRED node on the tape; returns its pending outputs.

    Parameters
    ----------
    name : str
    inputs : tuple
        Entries of the inputs that need a gradient (``_node.entry``).
    avals : tuple
        The outputs' abstract values.
    fn, consts, given, sig, run
        See :class:`_node.DeferredCall`.
    """
    node = Node(Kind.DEFERRED, name, inputs, avals)
    call = node.call = DeferredCall(fn, consts, given, sig, run)
    node.replay = lambda *vals: call.fn(call.consts, *vals)
    outs, refs = [], []
    for i, av in enumerate(avals):
        a = _NEW(Pending)
        a.__dict__ = {"_aval": av, "_node": (node, i), "_nsrc": node}
        outs.append(a)
        refs.append(_ref(a))
    node.outs = refs
    return outs


def deliver(node, values):
    """``node``'s output values arrived: keep them and fill its live pending outputs."""
    node.values = tuple(values)
    for ref, v in zip(node.outs or (), values):
        a = ref()
        if a is not None and type(a) is Pending:
            _set(a, v)
            _settle(a)
    node.outs = None


def _waiting(node):
    """The deferred nodes ``node`` needs produced first (inputs pending when recorded)."""
    return [
        e[0]
        for e, g in zip(node.inputs, node.call.given)
        if g is None and type(e) is tuple and e[0].values is None
    ]


def produce(node):
    """Make ``node``'s output values known: run its planned backward, or force it
    (and the deferred nodes it waits on, inputs first) on its own."""
    if node.values is not None:
        return
    if node.claim is not None:
        node.claim.run()
        return
    for n in postorder([node], lambda n: _waiting(n) if n.claim is None else ()):
        if n.values is not None:
            continue
        if n.claim is not None:
            n.claim.run()
            continue
        if n.kind is not Kind.DEFERRED or n.call is None:
            raise MXNetError(f"gluonjax internal error: no value for the outputs of {n!r}")
        _force_node(n)


def _force_node(node):
    """Run a deferred node on its own (forward with VJP): it becomes a FORCED node."""
    call = node.call
    vals = [g if g is not None else e[0].values[e[1]] for e, g in zip(node.inputs, call.given)]
    leaves, vjp, apply = call.run(call.consts, vals)
    node.kind, node.vjp, node.apply, node.call = Kind.FORCED, vjp, apply, None
    deliver(node, leaves)


# ---------------------------------------------------------------- pending gradients
def _make_pending(arr, av):
    """Turn ``arr`` (or a new array when ``None``) into a Pending one of ``av``."""
    if arr is None:
        arr = NDArray.__new__(Pending)
    elif type(arr) is not Pending:
        arr.__dict__["_cls"] = type(arr)
        arr.__class__ = Pending
    arr.__dict__["_aval"] = av
    return arr


def defer_grads(call):
    """Make the gradient buffers of ``call``'s leaves Pending on ``call``."""
    grads = []
    for j, leaf in enumerate(call.leaves):
        leaf.__dict__["_fresh"] = True  # written by this backward (see NDArray._fresh_grad)
        req, g = leaf._grad_req, leaf._grad
        if g is None:  # a new buffer: the variable's value stands for the aval
            g = leaf._grad = _make_pending(None, aval_of(leaf))
        else:
            if req == "add" and type(g) is Pending:
                g._data  # noqa: B018 - an earlier pending gradient is produced first
            if type(g) is not Pending:
                _make_pending(g, aval(_get(g)))
        g.__dict__["_gsrc"] = (call, j)
        grads.append((req, g))
    call.grads = grads


def is_pending(arr):
    """Whether ``arr`` waits on a deferred call or a backward that has not run yet."""
    return type(arr) is Pending


def aval_of(arr):
    """The shape and dtype of ``arr`` (pending or not) as a jax abstract value."""
    return arr.__dict__["_aval"] if type(arr) is Pending else aval(_get(arr))


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
    """``(call, leaf positions)`` if all ``grads`` wait on one backward that has not run,
    written (not added) as they are; else ``(None, None)``."""
    call, pos = None, []
    for g in grads:
        src = g.__dict__.get("_gsrc") if type(g) is Pending else None
        if src is None or (call is not None and src[0] is not call):
            return None, None
        call = src[0]
        if call.grads[src[1]][0] != "write":
            return None, None
        pos.append(src[1])
    if call is None or call.done:
        return None, None
    return call, pos
