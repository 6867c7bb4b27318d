"""``mx.optimizer.Updater`` / ``get_updater``: per-index optimizer states for NDArrays.

``get_states`` serialises without pickle: the bytes are an MXNet NDArray-list file
(``nd.save`` format) holding every state array plus one ``__meta__`` uint8 array
with a JSON description (indices, and with ``dump_optimizer`` the optimizer's
plain hyper-parameters, update counts and lr scheduler).
"""

from __future__ import annotations

import json

import jax
import numpy as np

from ..base import InvalidArgumentError, MXNetError
from .optimizer import Optimizer

__all__ = ["Updater", "get_updater"]

_PLAIN = (bool, int, float, str, type(None))


def _plain_items(obj, skip=()):
    out = {}
    for k, v in vars(obj).items():
        if k in skip:
            continue
        if isinstance(v, _PLAIN):
            out[k] = v
        elif isinstance(v, (list, tuple)) and all(isinstance(x, _PLAIN) for x in v):
            out[k] = list(v)
    return out


def _dump_optimizer(o):
    from .. import lr_scheduler as _lrs

    d = {
        "class": type(o).__name__.lower(),
        "attrs": _plain_items(o, skip=("_index_update_count",)),
        "clip_gradient": o._clip_gradient,
        "index_update_count": [[k, v] for k, v in o._index_update_count.items()],
        "lr_mult": [[k, v] for k, v in o.lr_mult.items()],
        "wd_mult": [[k, v] for k, v in o.wd_mult.items()],
        "idx2name": [[k, v] for k, v in o.idx2name.items()],
        "lr_scheduler": None,
    }
    s = o.lr_scheduler
    if s is not None:
        if not isinstance(s, _lrs.LRScheduler):
            raise MXNetError(f"cannot serialise lr_scheduler of type {type(s).__name__}")
        d["lr_scheduler"] = {"class": type(s).__name__, "attrs": _plain_items(s)}
    return d


def _load_optimizer(d):
    from .. import lr_scheduler as _lrs

    cls = Optimizer.opt_registry.get(d["class"])
    if cls is None:
        raise MXNetError(f"unknown optimizer {d['class']!r} in updater states")
    o = cls.__new__(cls)
    vars(o).update(d["attrs"])
    o.clip_gradient = d["clip_gradient"]
    o._index_update_count = {k: v for k, v in d["index_update_count"]}
    o.lr_mult = {k: v for k, v in d["lr_mult"]}
    o.wd_mult = {k: v for k, v in d["wd_mult"]}
    o.idx2name = {k: v for k, v in d["idx2name"]}
    o.param_dict, o.sym_info = {}, ()
    o.lr_scheduler = None
    if d["lr_scheduler"] is not None:
        scls = getattr(_lrs, d["lr_scheduler"]["class"], None)
        if not (isinstance(scls, type) and issubclass(scls, _lrs.LRScheduler)):
            raise MXNetError(f"unknown lr scheduler {d['lr_scheduler']['class']!r}")
        s = scls.__new__(scls)
        vars(s).update(d["lr_scheduler"]["attrs"])
        o.lr_scheduler = s
    return o


def _mx_state(leaves):
    """A state as MXNet's optimizers keep it: None, one NDArray, or a tuple of them."""
    leaves = tuple(leaves)
    if not leaves:
        return None
    return leaves[0] if len(leaves) == 1 else leaves


def _state_tuple(state):
    """The tuple form the optimizer rules take."""
    if state is None:
        return ()
    return tuple(state) if isinstance(state, (tuple, list)) else (state,)


class Updater:
    """Applies an optimizer to weights by index, creating each index's state once.

    ``updater(index, grad, weight)`` updates NDArray ``weight`` in place; ``index``,
    ``grad`` and ``weight`` may also be lists. ``states[index]`` is kept as MXNet
    keeps it: None (no state), one NDArray (SGD's momentum) or a tuple (Adam's).
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}

    def __call__(self, index, grad, weight):
        from ..ndarray import NDArray

        if isinstance(index, (list, tuple)):
            triples = list(zip(index, grad, weight, strict=True))
        else:
            triples = [(index, grad, weight)]
        for i, g, w in triples:
            if i not in self.states:
                state = self.optimizer.create_state_multi_precision(i, w._data)
                self.states[i] = _mx_state(jax.tree_util.tree_map(NDArray, tuple(state)))
                self.states_synced[i] = True
            self.optimizer.update_multi_precision(i, w, g, _state_tuple(self.states[i]))

    def sync_state_context(self, state, context):
        """States live on the one device; returned unchanged."""
        return state

    def get_states(self, dump_optimizer=False):
        """Serialise the states (and with ``dump_optimizer`` the optimizer) to bytes."""
        from .._io.ndformat import write_arrays

        arrays, names, entries = [], [], []
        for k, (idx, state) in enumerate(self.states.items()):
            leaves = jax.tree_util.tree_leaves(state, is_leaf=lambda s: hasattr(s, "_data"))
            entries.append([idx, len(leaves)])
            for j, leaf in enumerate(leaves):
                arrays.append(np.asarray(getattr(leaf, "_data", leaf)))
                names.append(f"state:{k}:{j}")
        meta = {
            "format": "gluonjax-updater-1",
            "states": entries,
            "optimizer": _dump_optimizer(self.optimizer) if dump_optimizer else None,
        }
        arrays.append(np.frombuffer(json.dumps(meta).encode(), np.uint8))
        names.append("__meta__")
        return write_arrays(arrays, names)

    def set_states(self, states):
        """Restore states (and the optimizer, if dumped) from :meth:`get_states` bytes."""
        from .._io.ndformat import read_arrays
        from ..ndarray import NDArray

        arrays, names = read_arrays(bytes(states))
        data = dict(zip(names, arrays, strict=True))
        try:
            meta = json.loads(bytes(np.asarray(data["__meta__"], np.uint8)))
            if meta.get("format") != "gluonjax-updater-1":
                raise InvalidArgumentError("unknown format tag")
            new = {}
            for k, (idx, n) in enumerate(meta["states"]):
                new[idx] = _mx_state(NDArray(data[f"state:{k}:{j}"]) for j in range(n))
        except (KeyError, ValueError, TypeError) as err:
            raise MXNetError(f"not updater states written by get_states ({err})") from None
        if meta["optimizer"] is not None:
            self.optimizer = _load_optimizer(meta["optimizer"])
        self.states = new
        self.states_synced = dict.fromkeys(new, False)


def get_updater(optimizer):
    """An :class:`Updater` for ``optimizer``."""
    return Updater(optimizer)
