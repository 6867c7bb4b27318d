"""Recording state and reverse-mode differentiation (``mx.autograd``).

Operations called under :func:`record` are put on a tape: each node keeps the
VJP jax computed for its compiled kernel. :func:`backward` runs the tape from
the heads (as one compiled call when it can) and writes gradients into arrays
that called ``attach_grad`` (honouring ``grad_req`` 'write', 'add' and 'null').

The package has an inner order (each module imports only those above it in
this list):

* ``_state``: per-thread flags, the trace scope, the deferral switch;
* ``_node``: tape nodes and their kinds (neither imports ``NDArray``);
* ``_deferred``: pending values of deferred hybridized calls;
* ``_plan``: the fused backward (one ``jax.jit`` for a whole tape);
* ``_engine``: ``backward``, ``grad``, ``mark_variables``;
* ``_higher``, ``_function``, ``_symbol``: ``create_graph``, ``Function``, ``get_symbol``.

``ndarray`` imports only ``_state`` and ``_node``; the names of the upper modules
are loaded on first use, so importing this package never imports ``NDArray``.
"""

from __future__ import annotations

import importlib

from ._state import (
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

_UPPER = {
    "backward": "gluonjax.autograd._engine",
    "grad": "gluonjax.autograd._engine",
    "mark_variables": "gluonjax.autograd._engine",
    "Function": "gluonjax.autograd._function",
    "get_symbol": "gluonjax.autograd._symbol",
    # MXNet's autograd module exposes these too (``from mxnet.autograd import *``)
    "NDArray": "gluonjax.ndarray.ndarray",
    "Symbol": "gluonjax.symbol.symbol",
}


def __getattr__(name):
    mod = _UPPER.get(name)
    if mod is None:
        raise AttributeError(f"module 'gluonjax.autograd' has no attribute {name!r}")
    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
