"""Reverse-mode differentiation (``mx.autograd``): the engine above ``nd`` and ``sym``.

Operations called under :func:`record` are put on the tape (``gluonjax._tape``):
each node keeps the VJP jax computed for its compiled kernel. :func:`backward` runs
the tape from the heads (as one compiled call when it can) and writes gradients into
arrays that called ``attach_grad`` (honouring ``grad_req`` 'write', 'add' and 'null').

The package has an inner order (each module imports only those above it in this list):

* ``_deferred``: pending values of deferred hybridized calls;
* ``_plan``: the fused backward (one ``jax.jit`` for a whole tape);
* ``_engine``: ``backward``, ``grad``, ``mark_variables``; it installs ``backward`` as
  ``PROCESS.backward``, the hook ``NDArray.backward`` calls;
* ``_higher``, ``_function``, ``_symbol``: ``create_graph``, ``Function``, ``get_symbol``;
* ``_update``: one step of an optimizer over recorded gradients (``Trainer``,
  ``compile_step`` and ``Module`` all call it).
"""

from __future__ import annotations

from .._tape.state import (
    is_deferral,
    is_recording,
    is_training,
    pause,
    predict_mode,
    record,
    set_deferral,
    set_recording,
    set_training,
    train_mode,
)

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
    "mark_variables",
    "backward",
    "grad",
    "get_symbol",
    "Function",
    "NDArray",
    "Symbol",
]

from ..ndarray.ndarray import NDArray
from ..symbol.symbol import Symbol
from ._engine import backward, grad, mark_variables
from ._function import Function
from ._symbol import get_symbol
