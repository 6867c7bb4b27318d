"""Module optimizer states: saved in the ``Updater.get_states`` byte format."""

from __future__ import annotations

import jax

from .._io.atomic import atomic_write
from ..base import MXNetError
from ..ndarray import NDArray
from ..optimizer import Updater
from ..optimizer.updater import _state_tuple


class StatesView:
    """``module._updater``: MXNet's updater interface over the module's states."""

    def __init__(self, module):
        self._module = module

    @property
    def optimizer(self):
        return self._module._optimizer

    def get_states(self, dump_optimizer=False):
        m = self._module
        u = Updater(m._optimizer)
        u.states = {i: jax.tree_util.tree_map(NDArray, s) for i, s in m._opt_states.items()}
        return u.get_states(dump_optimizer)

    def set_states(self, states):
        m = self._module
        u = Updater(m._optimizer)
        u.set_states(states)
        args = m._exec.arg_dict
        new = {}
        for i, state in u.states.items():
            flat = _state_tuple(state)  # MXNet's shape: None, one NDArray or a tuple
            if not isinstance(i, int) or not 0 <= i < len(m._param_names):
                raise MXNetError(
                    f"optimizer states for parameter #{i}; the module has "
                    f"{len(m._param_names)} parameters"
                )
            w = args[m._param_names[i]]._data
            leaves, tree = jax.tree_util.tree_flatten(m._optimizer.create_state(i, w))
            if len(leaves) != len(flat) or any(
                a.shape != b.shape for a, b in zip(leaves, flat, strict=False)
            ):
                raise MXNetError(
                    f"optimizer states of parameter #{i} do not fit this optimizer and parameter"
                )
            new[i] = jax.tree_util.tree_unflatten(
                tree, [f._data.astype(t.dtype) for f, t in zip(flat, leaves, strict=False)]
            )
        if u.optimizer is not m._optimizer:
            m._optimizer = u.optimizer
            m._opt_fns = {}
        m._opt_states.clear()
        m._opt_states.update(new)


def save(module, fname):
    atomic_write(fname, module._updater.get_states(dump_optimizer=False))


def load(module, fname):
    with open(fname, "rb") as f:
        module._updater.set_states(f.read())
