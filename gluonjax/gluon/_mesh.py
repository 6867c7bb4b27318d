"""Parameters on several real devices as one program over a ``jax.sharding.Mesh``.

A parameter initialized on contexts that are distinct jax devices keeps one array
per context (``_param_ctx``): what eager code and the per-shard loop use. A
compiled step over those devices (:meth:`Trainer.compile_step`) sees them as ONE
replicated ``jax.Array`` over a one-axis mesh (``'data'``) of those devices, built
without a copy from the per-device arrays, and a batch sharded along that axis;
XLA then inserts the gradient all-reduce, and batch statistics (BatchNorm,
SyncBatchNorm) cover the whole batch. Logical contexts (``cpu(i)`` beyond jax's
devices) and repeated devices form no mesh: they keep the per-context path.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from ..base import MXNetError
from ._param_array import VERSION, write_values

__all__ = ["AXIS", "mesh_devices", "mesh_of", "replicated", "batch_sharding", "MeshState"]

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


@functools.lru_cache(maxsize=16)
def mesh_of(devices):
    """The one-axis (``'data'``) mesh of ``devices`` (a tuple of jax devices)."""
    return Mesh(np.array(devices, dtype=object), (AXIS,))


def replicated(mesh):
    """A sharding that puts the whole array on every device of ``mesh``."""
    return NamedSharding(mesh, P())


@functools.lru_cache(maxsize=64)
def batch_sharding(mesh, ndim, axis=0):
    """A sharding that splits axis ``axis`` of an ``ndim``-d array over ``mesh``."""
    spec = [None] * ndim
    spec[axis] = AXIS
    return NamedSharding(mesh, P(*spec))


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
        self._version = -1  # _param_array.VERSION when _global was built or written
        self._inputs = None
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

        Reused while no parameter array was written since (``_param_array.VERSION``),
        else rebuilt without a copy from the arrays every context holds now.
        """
        if self._version == VERSION[0] and self._params == params:
            return self._global
        rep, n = self.rep, len(self.devices)
        out = []
        for p in params:
            arrays = [a._data for a in p._arrays()]
            if len(arrays) != n:
                raise MXNetError(
                    f"Parameter '{p.name}' is on {p.list_ctx()}; the compiled step runs over "
                    f"{n} devices {list(self.devices)}. Initialize every parameter on the same "
                    f"contexts (net.initialize(ctx=...) or net.collect_params().reset_ctx(...))."
                )
            if any(a.devices() != {d} for a, d in zip(arrays, self.devices)):
                arrays = [jax.device_put(a, d) for a, d in zip(arrays, self.devices)]
            out.append(jax.make_array_from_single_device_arrays(arrays[0].shape, rep, arrays))
        self._global, self._params, self._version = out, list(params), VERSION[0]
        return out

    def write(self, params, values):
        """Point each context's array of ``params`` at its device's copy of ``values``."""
        arrays, parts = [], []
        for p, v in zip(params, values):
            views = p._arrays()
            arrays.extend(views)
            parts.extend(s.data for s in v.addressable_shards)  # in the mesh's device order
        write_values(arrays, parts)
        self._global, self._params, self._version = list(values), list(params), VERSION[0]

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
