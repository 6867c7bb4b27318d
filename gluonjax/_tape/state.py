"""Per-thread autograd state: recording and training flags, the trace scope, deferral.

The bottom of the autograd package: it imports nothing of gluonjax, so ``NDArray``
and the op invoker can read the flags without an import circle.

* ``recording`` / ``training``: what :func:`record`, :func:`pause`,
  :func:`train_mode` and :func:`predict_mode` set.
* ``scope``: the :class:`TraceScope` of the hybridized block being traced by
  ``jax.jit`` (parameter -> traced value), or None.
* ``call_mode``: one number a hybridized block's call reads (see :func:`sync_call_mode`).
* deferral (see ``autograd._deferred``): on by default; ``GLUONJAX_DEFER=0`` in
  the environment or :func:`set_deferral(False) <set_deferral>` turns it off.
"""

from __future__ import annotations

import threading

from .._caches import PROCESS

__all__ = [
    "record",
    "pause",
    "train_mode",
    "predict_mode",
    "is_recording",
    "is_training",
    "set_recording",
    "set_training",
    "set_deferral",
    "is_deferral",
    "TraceScope",
    "current",
    "lookup",
]


class _Local(threading.local):
    """Per-thread state of the running code, one object so hot paths read it once.

    Hot paths read the attributes directly; writers go through :func:`sync_call_mode`.
    """

    scope = None
    recording = False
    training = False
    # what a hybridized block's call may run: 0 / 1 its plain compiled call in
    # predict / training mode; 2 the general path (recording or tracing)
    call_mode = 0


_local = _Local()
_st = _local  # the name the rest of gluonjax reads the flags by


def sync_call_mode():
    """Recompute ``call_mode`` after ``scope``, ``recording`` or ``training`` changed."""
    st = _local
    st.call_mode = 2 if st.scope is not None or st.recording else int(st.training)


# ---------------------------------------------------------------- recording / training
def is_recording():
    """True inside ``autograd.record()`` (and not inside ``pause()``)."""
    return _local.recording


def is_training():
    """True when layers such as Dropout and BatchNorm run in training mode."""
    return _local.training


def set_recording(is_record):
    """Set recording on or off; returns the previous state."""
    prev = _local.recording
    _local.recording = bool(is_record)
    sync_call_mode()
    return prev


def set_training(train_mode):
    """Set training mode on or off; returns the previous state."""
    prev = _local.training
    _local.training = bool(train_mode)
    sync_call_mode()
    return prev


class _Scope:
    """Sets recording and/or training for a ``with`` block and restores them after."""

    def __init__(self, recording, training):
        self._rec, self._train = recording, training
        self._prev = None

    def __enter__(self):
        st = _local
        self._prev = (st.recording, st.training)
        if self._rec is not None:
            st.recording = bool(self._rec)
        if self._train is not None:
            st.training = bool(self._train)
        sync_call_mode()
        return self

    def __exit__(self, *exc):
        st = _local
        st.recording, st.training = self._prev
        sync_call_mode()


def record(train_mode=True):  # noqa: D401
    """Scope that records operations for ``backward`` (training mode by default).

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.array([1.0, 2.0]); x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = (x * x).sum()
    >>> y.backward(); x.grad.asnumpy().tolist()
    [2.0, 4.0]
    """
    return _Scope(True, train_mode)


def pause(train_mode=False):
    """Scope that stops recording (predict mode by default)."""
    return _Scope(False, train_mode)


def train_mode():
    """Scope in which layers run in training mode (recording unchanged)."""
    return _Scope(None, True)


def predict_mode():
    """Scope in which layers run in inference mode (recording unchanged)."""
    return _Scope(None, False)


# ---------------------------------------------------------------- deferral switch
def set_deferral(enabled):
    """Turn deferred execution under ``record()`` on or off; returns the previous setting.

    With deferral on (the default), a hybridized block (or built-in layer) called
    under :func:`record` with an input signature it has run before returns pending
    arrays; ``backward()`` and ``trainer.step()`` then run the forward, the
    backward and the update as one compiled call. Values are the same either
    way; only when the work runs changes. ``GLUONJAX_DEFER=0`` in the
    environment starts a process with it off.

    Examples
    --------
    >>> import gluonjax as mx
    >>> old = mx.autograd.set_deferral(False)
    >>> mx.autograd.is_deferral()
    False
    >>> _ = mx.autograd.set_deferral(old)
    """
    prev = PROCESS.defer
    PROCESS.defer = bool(enabled)
    return prev


def is_deferral():
    """Whether deferred execution under ``record()`` is on (see :func:`set_deferral`)."""
    return PROCESS.defer


# ---------------------------------------------------------------- the trace scope
class TraceScope:
    """Maps parameters (by id) to wrappers of the traced values of a hybridized call.

    While a hybridized block's pure function is traced by ``jax.jit``, every
    ``Parameter.data()`` returns the wrapper held here; after the trace,
    :meth:`updates` gives the wrappers whose value changed (BatchNorm's running
    statistics).

    Parameters
    ----------
    params : list of Parameter
    wrappers : list
        One array wrapper (an ``NDArray``) per parameter, holding the traced value.
    """

    def __init__(self, params, wrappers):
        self.params = params
        self.wrappers = wrappers
        self.inputs = tuple(w._data for w in wrappers)
        self.by_id = {id(p): w for p, w in zip(params, wrappers)}
        self._old = None

    def updates(self):
        """``{index: new value}`` for parameters written during the trace."""
        return {
            i: w._data
            for i, (w, v) in enumerate(zip(self.wrappers, self.inputs))
            if w._data is not v
        }

    def __enter__(self):
        self._old = _local.scope
        _local.scope = self
        sync_call_mode()
        return self

    def __exit__(self, *exc):
        _local.scope = self._old
        sync_call_mode()


def current():
    """The active TraceScope or None."""
    return _local.scope


def lookup(param):
    """The traced wrapper of ``param`` inside a trace, else None."""
    scope = _local.scope
    if scope is None:
        return None
    return scope.by_id.get(id(param))
