"""``KVStore``: MXNet's single-machine key-value store ('local', 'device').

Values pushed for one key are summed; without an updater the sum replaces the
stored value, with one (``set_optimizer`` / ``_set_updater``) the updater
applies it: ``updater(key, merged, stored)`` changes ``stored`` in place. ``pull``
copies the stored value into each output (on that output's device).

The store is written so that a multi-process store can extend it: the sum
across the values of this process is :meth:`KVStore._reduce`, the step across
processes is :meth:`KVStore._allreduce` (the identity here), and ``rank``,
``num_workers`` and ``barrier`` describe the single worker.
"""

from __future__ import annotations

import jax
import numpy as np

from .._io.atomic import atomic_write, read_bytes
from ..base import InvalidArgumentError
from ..ndarray.ndarray import NDArray
from . import _compression
from .base import KVStoreBase, KVStoreError

__all__ = ["KVStore"]

_KEY_TYPES = (int, np.integer, str)


def _flatten(keys, values, what):
    """``[(key, NDArray)]`` from MXNet's key/value forms, and whether keys are str."""
    if isinstance(keys, (list, tuple)):
        if not isinstance(values, (list, tuple)) or len(keys) != len(values):
            raise KVStoreError(
                f"kvstore.{what}: {len(keys)} keys need a list of {len(keys)} values, got "
                f"{type(values).__name__}"
                + (f" of length {len(values)}" if isinstance(values, (list, tuple)) else "")
            )
        pairs, kinds = [], set()
        for k, v in zip(keys, values):
            p, s = _flatten(k, v, what)
            pairs += p
            kinds.add(s)
        if len(kinds) > 1:
            raise KVStoreError(f"kvstore.{what}: inconsistent types of keys detected ({keys})")
        return pairs, kinds.pop() if kinds else False
    if not isinstance(keys, _KEY_TYPES) or isinstance(keys, bool):
        raise KVStoreError(
            f"kvstore.{what}: unexpected type for keys: {type(keys).__name__} (use int or str)"
        )
    key = keys if isinstance(keys, str) else int(keys)
    vals = [values] if isinstance(values, NDArray) else values
    if not isinstance(vals, (list, tuple)) or not all(isinstance(v, NDArray) for v in vals):
        raise KVStoreError(
            f"kvstore.{what}: the value of key {key!r} must be an NDArray or a list of "
            f"NDArrays, got {type(values).__name__}"
        )
    return [(key, v) for v in vals], isinstance(key, str)


def _group(pairs):
    """``{key: [values]}`` in order of first appearance."""
    out = {}
    for k, v in pairs:
        out.setdefault(k, []).append(v)
    return out


def _placed(value, like):
    """``value`` (a raw array) cast to ``like``'s dtype on ``like``'s device(s)."""
    target = like._data
    if value.dtype != target.dtype:
        value = value.astype(target.dtype)
    sharding = getattr(target, "sharding", None)
    if sharding is not None:
        have = getattr(value, "sharding", None)
        if have is not sharding and have != sharding:
            value = jax.device_put(value, sharding)
    return value


@jax.jit
def _sum(*values):
    """One compiled sum of the values of a key (one call however many were pushed)."""
    total = values[0]
    for v in values[1:]:
        total = total + v
    return total


class KVStore(KVStoreBase):
    """A key-value store on one machine (``mx.kv.create('local' | 'device')``).

    Parameters
    ----------
    name : str
        The type name ``type`` reports.

    Examples
    --------
    >>> import gluonjax as mx
    >>> kv = mx.kv.create('device')
    >>> kv.init('w', mx.nd.ones((2,)))
    >>> kv._set_updater(lambda key, grad, stored: stored.__isub__(grad * 0.5))
    >>> kv.push('w', mx.nd.ones((2,)))
    >>> out = mx.nd.zeros((2,)); kv.pull('w', out=out); out.asnumpy().tolist()
    [0.5, 0.5]
    """

    def __init__(self, name="local"):
        self._type = name
        self._store = {}
        self._str_keys = None  # None until the first call fixes int or str keys
        self._updater = None
        self._compression = None
        self._residuals = {}
        self._warned_sparse_pull = set()

    # ------------------------------------------------------------ description
    @property
    def type(self):
        return self._type

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1

    def is_capable(self, capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return True
        raise InvalidArgumentError(f"Unknown capability: {capability}")

    def barrier(self):
        """Wait for every worker (there is one: returns at once)."""

    _barrier = barrier

    def __repr__(self):
        return f"<KVStore {self._type!r}: {len(self._store)} keys>"

    # ------------------------------------------------------------ keys
    def _pairs(self, keys, values, what):
        pairs, str_keys = _flatten(keys, values, what)
        if self._str_keys is None:
            self._str_keys = str_keys
        elif self._str_keys != str_keys:
            raise KVStoreError(
                f"kvstore.{what}: Mixed key types are not allowed: this store uses "
                f"{'str' if self._str_keys else 'int'} keys, got {keys!r}"
            )
        return pairs

    def _stored(self, key, what):
        value = self._store.get(key)
        if value is None:
            raise KVStoreError(
                f"kvstore.{what}: key {key!r} has not been initialized; call kv.init({key!r}, "
                f"value) first"
            )
        return value

    # ------------------------------------------------------------ init / push / pull
    def init(self, key, value):
        """Store the first value of each key (a key can be initialized once)."""
        for k, v in self._pairs(key, value, "init"):
            if k in self._store:
                raise KVStoreError(
                    f"duplicate init of key {k!r}. Please double check if you called kv.init "
                    f"or kv.broadcast with this key multiple times"
                )
            self._store[k] = v.copy()

    def push(self, key, value, priority=0):
        """Sum the values of each key and store the sum (or hand it to the updater)."""
        groups = _group(self._pairs(key, value, "push"))
        for k, vals in groups.items():
            for v in vals:
                if v.stype not in ("default", "row_sparse"):
                    raise KVStoreError(
                        f"kvstore.push: unexpected storage type {v.stype!r} for key {k!r} "
                        f"(push takes dense or row_sparse values)"
                    )
            self._stored(k, "push")
        keys = list(groups)
        merged = self._allreduce(keys, [self._reduce(k, groups[k]) for k in keys])
        for k, m in zip(keys, merged):
            if self._updater is not None:
                self._updater(k, m, self._store[k])
            else:
                self._store[k] = m

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy each key's stored value into ``out`` (sparse outputs are skipped unless
        ``ignore_sparse=False``; use :meth:`row_sparse_pull` for them)."""
        if out is None:
            raise KVStoreError("kvstore.pull: out must be given")
        for k, outs in _group(self._pairs(key, out, "pull")).items():
            stored = self._stored(k, "pull")
            for o in outs:
                if o.stype != "default" and ignore_sparse:
                    self._warned_sparse_pull.add(k)
                    continue
                self._write(stored, o)

    def pushpull(self, key, value, out=None, priority=0):
        """:meth:`push` then :meth:`pull` into ``out`` (into ``value`` when ``out`` is None)."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key, value, out, priority=0):
        """:meth:`init` each key with ``value``, then :meth:`pull` it into ``out``."""
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Copy the rows ``row_ids`` of a row_sparse stored value into row_sparse ``out``.

        One ``row_ids`` array for a list of outputs serves them all; otherwise give
        one per output. Row ids need not be sorted or unique.
        """
        from ..ndarray.sparse import retain

        if out is None or row_ids is None:
            raise KVStoreError("kvstore.row_sparse_pull: out and row_ids must be given")
        single = isinstance(row_ids, NDArray) or (
            isinstance(row_ids, list) and len(row_ids) == 1 and isinstance(out, list)
        )
        if isinstance(row_ids, NDArray):
            row_ids = [row_ids]
        first = [out[0]] if single and isinstance(out, list) else out
        pairs = self._pairs(key, first, "row_sparse_pull")
        id_pairs, _ = _flatten(key, row_ids, "row_sparse_pull")
        if len(id_pairs) != len(pairs):
            raise KVStoreError(
                f"kvstore.row_sparse_pull: {len(id_pairs)} row_ids for {len(pairs)} outputs"
            )
        for (k, o), (_, rid) in zip(pairs, id_pairs):
            if o.stype != "row_sparse":
                raise KVStoreError(
                    f"kvstore.row_sparse_pull: expected row_sparse storage type for the "
                    f"output of key {k!r}, got {o.stype!r}"
                )
            stored = self._stored(k, "row_sparse_pull")
            if stored.stype != "row_sparse":
                raise KVStoreError(
                    f"kvstore.row_sparse_pull: key {k!r} holds a {stored.stype} value; "
                    f"row_sparse_pull expects a row_sparse one (use pull)"
                )
            self._write(retain(stored, rid), o)
        if single and isinstance(out, list):
            for o in out[1:]:
                out[0].copyto(o)

    @staticmethod
    def _write(value, out):
        """``out[:] = value``: the value on ``out``'s device, ``out``'s storage pattern."""
        pattern = value._pattern_ref() if value.stype == out.stype != "default" else None
        out._data = _placed(value._data, out)
        if pattern is not None:
            out._keep(pattern)

    # ------------------------------------------------------------ reduction
    def _reduce(self, key, values):
        """The sum of the values pushed for ``key`` by this process."""
        if self._compression is not None and values[0].stype == "default":
            values = self._compressed(key, values)
        first = values[0]
        if len(values) == 1:
            return first.copy()
        out = first.copy()  # a sparse sum's pattern is derived from its values
        out._data = _sum(first._data, *(_placed(v._data, first) for v in values[1:]))
        return out

    def _allreduce(self, keys, merged):
        """The sums across processes of ``merged`` (this process's sums of ``keys``), in
        one collective for all keys; one process: ``merged`` itself."""
        return merged

    # ------------------------------------------------------------ updater
    def set_optimizer(self, optimizer):
        """Apply ``optimizer`` to stored values on every push (``updater(key, grad, weight)``)."""
        from ..optimizer import get_updater

        self._set_updater(get_updater(optimizer))

    def _set_updater(self, updater):
        """Call ``updater(key, merged_value, stored_value)`` on each push; ``stored_value``
        is the store's NDArray, to be changed in place."""
        self._updater = updater

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the updater's states (no pickle; atomically) to ``fname``."""
        if self._updater is None or not hasattr(self._updater, "get_states"):
            raise KVStoreError(
                "kvstore.save_optimizer_states: this store has no optimizer; call "
                "set_optimizer first"
            )
        atomic_write(fname, self._updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname):
        """Read states written by :meth:`save_optimizer_states` into the updater."""
        if self._updater is None or not hasattr(self._updater, "set_states"):
            raise KVStoreError(
                "kvstore.load_optimizer_states: this store has no optimizer; call "
                "set_optimizer first"
            )
        self._updater.set_states(read_bytes(fname, "reading optimizer states"))

    # ------------------------------------------------------------ compression
    def set_gradient_compression(self, compression_params):
        """Quantize pushed gradients: ``{'type': '2bit', 'threshold': 0.5}``.

        As in MXNet, only 'device' and 'dist' stores compress: each dense value is
        quantized to ``{-threshold, 0, threshold}`` and the rest is carried over to
        the next push of that key (the residual).
        """
        if "device" not in self._type and "dist" not in self._type:
            raise KVStoreError(
                f"Gradient compression is not supported for kvstore type '{self._type}'; "
                f"use 'device'"
            )
        self._compression = _compression.parse(compression_params)
        self._residuals = {}

    def _compressed(self, key, values):
        threshold = self._compression["threshold"]
        out = []
        for i, v in enumerate(values):
            res = self._residuals.get((key, i))
            if res is None:
                res = jax.numpy.zeros(v.shape, v.dtype)
            q, self._residuals[(key, i)] = _compression.two_bit(v._data, res, threshold)
            out.append(NDArray(q))
        return out
