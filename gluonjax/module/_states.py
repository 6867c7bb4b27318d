"""Optimizer states of a Module, seen through MXNet's updater interface.

The states live in ``module._opt_states`` keyed by the update index (the parameter's
position, or ``position * num_devices + device`` when devices update separately).
:class:`StatesView` shows them as MXNet's updater does: ``states`` (keyed by index,
or by parameter name for the kvstore's updater), and ``get_states``/``set_states``
in the ``Updater.get_states`` byte format. A file keyed by names (saved from a
multi-device module) loads into a single-device module too, and its states are used.
"""

from __future__ import annotations

import jax

from .._io.atomic import atomic_write, read_bytes
from ..base import MXNetError
from ..ndarray import NDArray
from ..optimizer import Updater
from ..optimizer.updater import _state_tuple

__all__ = ["StatesView", "ModuleKVStore", "save", "load"]


def _as_mxnet(state):
    """One state as MXNet shows it: an NDArray, a tuple of them, or None."""
    leaves = jax.tree_util.tree_leaves(state)
    if not leaves:
        return None
    if isinstance(state, (tuple, list)) and len(state) == 1:
        return NDArray(state[0])
    return jax.tree_util.tree_map(NDArray, state)


class StatesView:
    """``module._updater`` (or ``module._kvstore._updater``): see the module docstring.

    Parameters
    ----------
    module : Module
    by_name : bool
        Key the states by parameter name (MXNet's kvstore updater) instead of index.
    """

    def __init__(self, module, by_name=False):
        self._module = module
        self.by_name = by_name

    @property
    def optimizer(self):
        return self._module._optimizer

    def _key(self, i):
        names = self._module._param_names
        return names[i] if self.by_name and isinstance(i, int) and i < len(names) else i

    def _index(self, key):
        names = self._module._param_names
        if isinstance(key, str):
            if key not in names:
                raise MXNetError(
                    f"optimizer states for parameter {key!r}, which this module does not have "
                    f"(its parameters are {names})"
                )
            return names.index(key)
        return key

    @property
    def states(self):
        """{index or name: state} with NDArray leaves (a 1-tuple shows as its array)."""
        return {self._key(i): _as_mxnet(s) for i, s in self._module._opt_states.items()}

    def get_states(self, dump_optimizer=False):
        """The states as bytes (``Updater.get_states`` format)."""
        m = self._module
        u = Updater(m._optimizer)
        u.states = {
            self._key(i): jax.tree_util.tree_map(NDArray, s) for i, s in m._opt_states.items()
        }
        return u.get_states(dump_optimizer)

    def set_states(self, states):
        """Restore states from :meth:`get_states` bytes (keys by index or by name)."""
        m = self._module
        u = Updater(m._optimizer)
        u.set_states(states)
        if any(isinstance(k, str) for k in u.states):
            self.by_name = True
        weights = {i: block[0] for i, block in enumerate(m._exec_group.param_arrays)}
        ndev = m._state_devices()
        new = {}
        for key, state in u.states.items():
            flat = _state_tuple(state)  # MXNet's shape: None, one NDArray or a tuple
            i = self._index(key)
            if not isinstance(i, int) or not 0 <= i // ndev < len(weights):
                raise MXNetError(
                    f"optimizer states for parameter #{key}; the module has "
                    f"{len(weights)} parameters"
                )
            w = weights[i // ndev]._data
            leaves, tree = jax.tree_util.tree_flatten(m._optimizer.create_state(i, w))
            if len(leaves) != len(flat) or any(
                a.shape != b.shape for a, b in zip(leaves, flat, strict=False)
            ):
                raise MXNetError(
                    f"optimizer states of parameter {key!r} do not fit this optimizer and parameter"
                )
            new[i] = jax.tree_util.tree_unflatten(
                tree, [f._data.astype(t.dtype) for f, t in zip(flat, leaves, strict=False)]
            )
        if u.optimizer is not m._optimizer:
            m._optimizer = u.optimizer
            m._opt_fns = {}
        m._opt_states.clear()
        m._opt_states.update(new)


class ModuleKVStore:
    """``module._kvstore`` of a multi-device module: MXNet's local kvstore as the Module
    uses it (gradients summed over devices, one update, weights copied back), with
    its updater's states keyed by parameter name. A ``dist`` type sums the gradients
    over the workers of a ``jax.distributed`` job too (``docs/scaling.md``)."""

    def __init__(self, module, kind):
        self.type = kind
        self.rank = 0
        self.num_workers = 1
        self._group = None
        if "dist" in kind:  # across the processes of a jax.distributed job
            from .._collectives import process_group

            self._group = process_group()
            self.rank, self.num_workers = self._group.rank, self._group.size
        self._updater = StatesView(module, by_name=True)

    def allsum(self, arrays):
        """``arrays`` summed over the workers (the identity on one machine)."""
        return arrays if self._group is None else self._group.allsum(arrays)

    def broadcast(self, arrays):
        """Worker 0's ``arrays`` (the identity on one machine)."""
        return arrays if self._group is None else self._group.broadcast(arrays, 0)

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the states to ``fname``."""
        atomic_write(fname, self._updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname):
        """Read states written by :meth:`save_optimizer_states`."""
        self._updater.set_states(read_bytes(fname, "reading optimizer states"))


def save(module, fname):
    if module._update_on_kvstore:
        module._kvstore.save_optimizer_states(fname)
    else:
        atomic_write(fname, module._updater.get_states(dump_optimizer=False))


def load(module, fname):
    if module._update_on_kvstore:
        module._kvstore.load_optimizer_states(fname)
        return
    module._updater.set_states(read_bytes(fname, "reading optimizer states"))
