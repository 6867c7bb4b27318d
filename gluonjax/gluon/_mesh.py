"""Parameters on several real devices as one program over a ``jax.sharding.Mesh``.

A parameter initialized on contexts that are distinct jax devices keeps one array
per context (``_param_ctx``): what eager code and the per-shard loop use. A
compiled step over those devices (:meth:`Trainer.compile_step`) sees them as ONE
replicated ``jax.Array`` over a one-axis mesh (``'data'``) of those devices, built
without a copy from the per-device arrays, and a batch sharded along that axis;
XLA then inserts the gradient all-reduce, and batch statistics (BatchNorm,
SyncBatchNorm) cover the whole batch. Logical contexts (``cpu(i)`` beyond jax's
devices) and repeated devices form no mesh: they keep the per-context path.

Per call, the step avoids work the mesh does not need: ``split_and_load``'s sharded
batch is reused as is when the step gets exactly its pieces (:class:`ShardedBatch`),
the learning rates, weight decays and gradient scale travel as one input
(:meth:`MeshState.packed`), and the new replicated values are cut into the contexts'
arrays only when one of those is used (:class:`SplitPending`).
"""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from .._caches import PROCESS, memo
from ..base import MXNetError
from ._param_array import ParamArray, write_values
from ._param_array import _get_value as _slot_get
from ._param_array import _set_value as _slot_set

__all__ = [
    "AXIS",
    "mesh_devices",
    "mesh_of",
    "replicated",
    "batch_sharding",
    "ShardedBatch",
    "MeshState",
]

AXIS = "data"


def mesh_devices(ctxs):
    """The jax devices of ``ctxs`` in order when they form a mesh, else None.

    A mesh needs at least two contexts, each a real device (no logical context),
    and no device twice.
    """
    if ctxs is None or len(ctxs) < 2 or any(c.is_logical for c in ctxs):
        return None
    devs = tuple(c.jax_device for c in ctxs)
    return devs if len(set(devs)) == len(devs) else None


@memo(16, "device meshes")
def mesh_of(devices):
    """The one-axis (``'data'``) mesh of ``devices`` (a tuple of jax devices)."""
    return Mesh(np.array(devices, dtype=object), (AXIS,))


def replicated(mesh):
    """A sharding that puts the whole array on every device of ``mesh``."""
    return NamedSharding(mesh, P())


@memo(64, "batch shardings")
def batch_sharding(mesh, ndim, axis=0):
    """A sharding that splits axis ``axis`` of an ``ndim``-d array over ``mesh``."""
    spec = [None] * ndim
    spec[axis] = AXIS
    return NamedSharding(mesh, P(*spec))


def _arrays_are_shards(value, devices):
    """Whether ``value._arrays`` (jax's per-device arrays of a ``jax.Array``, which
    ``addressable_shards`` wraps into ``Shard`` objects at a few microseconds per array)
    holds exactly the shards' data on ``devices``, in order: checked once per
    :class:`MeshState` before :meth:`MeshState.write` reads it on every step."""
    try:
        arrays, shards = list(value._arrays), value.addressable_shards
    except (AttributeError, TypeError):
        return False
    return (
        len(arrays) == len(shards) == len(devices)
        and all(a is s.data for a, s in zip(arrays, shards))
        and all(s.device == d for s, d in zip(shards, devices))
    )


def _pieces(value, fast):
    """``value``'s per-device arrays in the mesh's device order."""
    return list(value._arrays) if fast else [s.data for s in value.addressable_shards]


class _Split:
    """One parameter's new replicated value, not yet cut into its contexts' arrays.

    Cutting a replicated array into per-device arrays costs microseconds per device
    and parameter on every step, and a compiled step over the mesh does not need the
    pieces (its next call takes the replicated values again). So
    :meth:`MeshState.write` marks the contexts' arrays :class:`SplitPending` instead,
    and the first read of any of them gives every context its piece (the pattern of
    ``autograd._deferred.Pending``).
    """

    __slots__ = ("value", "arrays", "fast")

    def __init__(self, value, arrays, fast):
        self.value, self.arrays, self.fast = value, arrays, fast

    def settle(self):
        """Give each context's array its device's piece; its class is ParamArray again.

        While pending, each array's slot holds the replicated value itself (the same
        shape and dtype; the old pieces are released at once); an array whose slot was
        written directly since (``write_values``) keeps that newer value."""
        arrays = self.arrays
        if not arrays:
            return
        self.arrays = ()
        pieces = _pieces(self.value, self.fast)
        value = self.value
        for a, piece in zip(arrays, pieces):
            d = a.__dict__
            if d.get("_split") is not self:
                continue  # superseded by a later write
            del d["_split"]
            if _slot_or_none(a) is value:
                _slot_set(a, piece)
            _set_class(a, ParamArray)


class SplitPending(ParamArray):
    """A parameter array whose value is its device's piece of a replicated array not
    cut yet (see :class:`_Split`); reading or writing ``_data`` cuts it first."""

    __slots__ = ()

    def _cut(self):
        split = self.__dict__.get("_split")
        if split is not None:
            split.settle()
        if type(self) is SplitPending:  # a copy made while pending, without its split
            self.__dict__.pop("_split", None)
            _set_class(self, ParamArray)

    def _get_data(self):
        self._cut()
        return _slot_get(self)

    def _set_data(self, value):
        self._cut()
        self._data = value  # a ParamArray again: its own write (version, layout)

    _data = property(_get_data, _set_data)


def _set_class(a, cls):
    object.__setattr__(a, "__class__", cls)  # no version bump: the value is unchanged


def _slot_or_none(a):
    try:
        return _slot_get(a)
    except AttributeError:
        return None


class ShardedBatch:
    """What ``split_and_load`` remembers on each piece of an even split over a mesh.

    ``whole``: the batch as one ``jax.Array`` sharded along ``axis`` over ``devices``
    (one transfer); ``parts``: its per-device arrays, which the pieces hold. A
    compiled step over the same devices given exactly these pieces (the same
    immutable arrays, in order) takes ``whole`` instead of assembling the pieces
    again; anything else (a piece replaced, reordered, written in place) is assembled
    as before. The pieces keep ``whole`` alive, nothing else does.
    """

    __slots__ = ("whole", "parts", "devices", "axis")

    def __init__(self, whole, parts, devices, axis):
        self.whole, self.parts, self.devices, self.axis = whole, tuple(parts), devices, axis

    def matches(self, pieces, devices, axis):
        """Whether ``pieces`` (NDArrays) are exactly this batch's, over ``devices``."""
        parts = self.parts
        if axis != self.axis or devices != self.devices or len(pieces) != len(parts):
            return False
        for piece, part in zip(pieces, parts):
            if piece.__dict__.get("_sharded_batch") is not self or piece._data is not part:
                return False
        return True


class MeshState:
    """The mesh view of a set of parameters (all on the same device list).

    ``values(datas_of_each)`` gives their replicated global arrays (cached while the
    per-device arrays are the ones written last); ``write(params, values)`` points
    every context's array at its device's part of the new replicated values.
    """

    def __init__(self, devices):
        self.devices = devices
        self.mesh = mesh_of(devices)
        self.rep = replicated(self.mesh)
        self._global = self._params = None
        self._version = -1  # PROCESS.param_version when _global was built or written
        self._inputs = None
        self._packed = None
        self._fast_parts = None  # whether jax's Array._arrays lists the shards (see write)
        # XLA:CPU can deadlock when several collective programs over forced CPU devices
        # are in flight at once (a device's thread never joins the all-reduce's
        # rendezvous; seen with 4 devices on 2 cores, pure jax too): on CPU, each
        # mesh program is waited for before the next one is launched
        self.sync = len(devices) > 1 and all(d.platform == "cpu" for d in devices)

    def settle(self, out):
        """Wait for ``out`` where in-flight collective programs are unsafe (CPU meshes)."""
        if self.sync:
            jax.block_until_ready(out)
        return out

    def values(self, params):
        """Replicated global arrays of ``params`` (built from their per-device arrays).

        Reused while no parameter array was written since (``PROCESS.param_version``),
        else rebuilt without a copy from the arrays every context holds now.
        """
        if self._version == PROCESS.param_version and self._params == params:
            return self._global
        rep, n = self.rep, len(self.devices)
        out = []
        for p in params:
            views = p._arrays()
            split = views[0].__dict__.get("_split")
            if (
                split is not None
                and split.arrays
                and split.value.sharding == rep  # written over this mesh
                and all(
                    type(a) is SplitPending
                    and a.__dict__["_split"] is split
                    and _slot_or_none(a) is split.value
                    for a in views
                )
            ):
                out.append(split.value)  # written by write() and not cut yet: as it was
                continue
            arrays = [a._data for a in views]
            if len(arrays) != n:
                raise MXNetError(
                    f"Parameter '{p.name}' is on {p.list_ctx()}; the compiled step runs over "
                    f"{n} devices {list(self.devices)}. Initialize every parameter on the same "
                    f"contexts (net.initialize(ctx=...) or net.collect_params().reset_ctx(...))."
                )
            if any(a.devices() != {d} for a, d in zip(arrays, self.devices)):
                arrays = [jax.device_put(a, d) for a, d in zip(arrays, self.devices)]
            out.append(jax.make_array_from_single_device_arrays(arrays[0].shape, rep, arrays))
        self._global, self._params, self._version = out, list(params), PROCESS.param_version
        return out

    def write(self, params, values):
        """Point each context's array of ``params`` at its device's copy of ``values``.

        Dense parameter arrays take their pieces when first read (:class:`_Split`);
        others are cut now. Until then :meth:`values` gives ``values`` back as they are.
        """
        arrays, parts = [], []
        fast = self._fast_parts
        if fast is None and values:
            fast = self._fast_parts = _arrays_are_shards(values[0], self.devices)
        lazy = (ParamArray, SplitPending)
        for p, v in zip(params, values):
            views = p._arrays()
            for a in views:
                if type(a) not in lazy:  # e.g. a sparse parameter's array: cut now
                    arrays.extend(views)
                    parts.extend(_pieces(v, fast))  # in the mesh's device order
                    break
            else:
                split = _Split(v, views, fast)
                for a in views:
                    a.__dict__["_split"] = split
                    _slot_set(a, v)  # the old piece goes now; the new one on first use
                    if type(a) is ParamArray:
                        _set_class(a, SplitPending)
        write_values(arrays, parts)  # bumps PROCESS.param_version (once) for all of them
        self._global, self._params = list(values), list(params)
        self._version = PROCESS.param_version

    def inputs(self, vals):
        """``vals`` (arrays an optimizer caches between steps: learning rates, weight
        decays, the gradient scale) replicated over the mesh; the copies are reused
        while the same arrays come back, instead of being transferred on every step."""
        got = self._inputs
        if got is not None and all(a is b for a, b in zip(got[0], vals)):
            return got[1]
        out = tuple(None if v is None else jax.device_put(v, self.rep) for v in vals)
        self._inputs = (vals, out)
        return out

    def packed(self, lrs, wds, rescale):
        """``lrs``, ``wds`` and ``rescale`` (float32) as ONE array replicated over the
        mesh, ``[*lrs, *wds, rescale]``: one input of the compiled step instead of
        three (each input over n devices costs the call microseconds). Rebuilt only
        when other arrays come (the optimizer caches them while nothing changes);
        None when they are not all float32 (then pass them apart, :meth:`inputs`)."""
        got = self._packed
        if got is not None and got[0] is lrs and got[1] is wds and got[2] is rescale:
            return got[3]
        vals = [np.asarray(v) for v in (lrs, wds, rescale)]
        if any(v.dtype != np.float32 for v in vals):
            return None
        flat = np.concatenate([v.reshape(-1) for v in vals])
        out = jax.device_put(flat, self.rep)
        self._packed = (lrs, wds, rescale, out)
        return out

    def put(self, tree):
        """``tree`` (optimizer states) replicated over the mesh."""
        return jax.device_put(tree, self.rep)

    def batch(self, data, axis=0):
        """A batch as one array over the mesh: ``data`` is the whole batch (an NDArray)
        or its shards, one per device in order (``split_and_load``'s output).

        Shards of equal size that sit on their devices are joined without a copy; a
        batch that does not divide over the devices is replicated (every device then
        computes the whole batch: the same result, without the speed-up).
        """
        n = len(self.devices)
        if isinstance(data, (list, tuple)):
            info = data[0].__dict__.get("_sharded_batch") if data else None
            if info is not None and info.matches(data, self.devices, axis):
                return info.whole  # split_and_load's sharded batch, not assembled again
            raws = [d._data for d in data]
            if len(raws) != n:
                raise MXNetError(
                    f"compile_step over {n} devices got a list of {len(raws)} shards; pass "
                    f"one shard per context (gluon.utils.split_and_load(batch, ctx_list)) or "
                    f"the whole batch"
                )
            shapes = {r.shape for r in raws}
            if len(shapes) == 1 and all(r.devices() == {d} for r, d in zip(raws, self.devices)):
                shape = list(raws[0].shape)
                shape[axis] *= n
                sharding = batch_sharding(self.mesh, len(shape), axis)
                return jax.make_array_from_single_device_arrays(tuple(shape), sharding, raws)
            whole = np.concatenate([np.asarray(r) for r in raws], axis=axis)
        else:
            whole = data._data
        if whole.ndim > axis and whole.shape[axis] % n == 0:
            return jax.device_put(whole, batch_sharding(self.mesh, whole.ndim, axis))
        return jax.device_put(whole, self.rep)
