"""The trace scope of a hybridized call: parameter -> traced value.

While a hybridized block's pure function is traced by ``jax.jit``, every
``Parameter.data()`` returns the NDArray wrapper of the traced value held here;
after the trace, wrappers whose value changed (BatchNorm running statistics)
are returned as updates.
"""

from __future__ import annotations

import threading


class _Local(threading.local):
    """Per-thread state of the running code, one object so hot paths read it once.

    ``scope`` is the active TraceScope; ``autograd`` keeps its ``recording`` and
    ``training`` flags here as well (``autograd._st`` is this object). Hot paths
    read the attributes directly; writers go through :func:`sync_call_mode`.
    """

    scope = None
    recording = False
    training = False
    # what a hybridized block's call may run: 0 / 1 its plain compiled call in
    # predict / training mode; 2 the general path (recording or tracing)
    call_mode = 0


_local = _Local()


def sync_call_mode():
    """Recompute ``call_mode`` after ``scope``, ``recording`` or ``training`` changed."""
    st = _local
    st.call_mode = 2 if st.scope is not None or st.recording else int(st.training)


class TraceScope:
    """Maps parameters (by id) to NDArray wrappers of traced values."""

    def __init__(self, params, values):
        from .ndarray.ndarray import NDArray

        self.params = params
        self.inputs = tuple(values)
        self.wrappers = [NDArray(v) for v in values]
        self.by_id = {id(p): w for p, w in zip(params, self.wrappers)}
        self._old = None

    def updates(self):
        """{index: new value} for parameters written during the trace."""
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
