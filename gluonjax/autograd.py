"""Recording state and reverse-mode differentiation (``mx.autograd``).

Eager ops called under :func:`record` are put on a tape: each node keeps the
VJP that jax computed for the op's compiled kernel. :func:`backward` walks the
tape from the heads and writes gradients into arrays that called
``attach_grad`` (honouring ``grad_req`` 'write', 'add' and 'null').
"""

from __future__ import annotations

from . import _trace

__all__ = [
    "record",
    "pause",
    "train_mode",
    "predict_mode",
    "is_recording",
    "is_training",
    "set_recording",
    "set_training",
    "mark_variables",
    "backward",
    "grad",
    "Function",
]


# Per-thread recording/training flags (default: off), kept on the thread's trace state
# so a hybridized call reads one combined flag; hot paths read _st.recording / _st.training
_st = _trace._local


def is_recording():
    """True inside ``autograd.record()`` (and not inside ``pause()``)."""
    return _st.recording


def is_training():
    """True when layers such as Dropout and BatchNorm run in training mode."""
    return _st.training


def set_recording(is_record):
    """Set recording on or off; returns the previous state."""
    prev = is_recording()
    _st.recording = bool(is_record)
    _trace.sync_call_mode()
    return prev


def set_training(train_mode):
    """Set training mode on or off; returns the previous state."""
    prev = is_training()
    _st.training = bool(train_mode)
    _trace.sync_call_mode()
    return prev


class _Scope:
    def __init__(self, recording, training):
        self._rec, self._train = recording, training
        self._prev = None

    def __enter__(self):
        st = _st
        self._prev = (st.recording, st.training)
        if self._rec is not None:
            st.recording = bool(self._rec)
        if self._train is not None:
            st.training = bool(self._train)
        _trace.sync_call_mode()
        return self

    def __exit__(self, *exc):
        st = _st
        st.recording, st.training = self._prev
        _trace.sync_call_mode()


def record(train_mode=True):  # noqa: D401
    """Scope that records operations for :func:`backward` (training mode by default).

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


from ._custom import Function  # noqa: E402,F401
from ._tape import backward, grad, mark_variables  # noqa: E402,F401
