"""Serve an exported block without gluonjax: ``f = deploy.load('net'); y = f(x)``.

``HybridBlock.export('net')`` writes ``net-0000.stablehlo`` (a :mod:`jax.export`
module of ``f(*params, *inputs)``), ``net-0000.manifest.json`` and
``net-0000.params``. This file imports only the standard library and NumPy at
module level (and jax inside :func:`load`), so it can be copied next to the
artifact and used where gluonjax is not installed. :func:`load_iree` runs the
IREE module (``export(..., iree=True)``) with ``iree.runtime`` and no jax.

Example (next to ``tony_mlp-0000.*``)::

    import deploy
    f = deploy.load("tony_mlp")
    y = f(np.zeros((3, 512), np.float32))  # any batch size: (3, 2)
"""

from __future__ import annotations

import json
import os
import struct

import numpy as np

__all__ = ["load", "load_iree", "read_params", "read_manifest", "DeployError"]

FORMAT = "gluonjax.stablehlo"


class DeployError(ValueError):
    """A missing, damaged or mismatching artifact file, or wrong inputs."""


# ----------------------------------------------------------------------------- params reader
# MXNet's NDArray-list format, read with NumPy + struct only. This duplicates the
# reader in gluonjax/_io/ndformat.py on purpose: deploy.py must not import
# gluonjax (tests/export check that both readers agree on the same files).
_LIST_MAGIC = 0x112
_V1, _V2, _V3 = 0xF993FAC8, 0xF993FAC9, 0xF993FACA
_FLAGS = {
    0: "float32",
    1: "float64",
    2: "float16",
    3: "uint8",
    4: "int32",
    5: "int8",
    6: "int64",
    7: "bool",
}
_DEV_TYPES = (1, 2, 3, 5)


class _Bytes:
    def __init__(self, data, source):
        self.buf, self.pos, self.source = memoryview(data), 0, source

    def take(self, n, what):
        if n < 0 or n > len(self.buf) - self.pos:
            raise DeployError(
                f"{self.source}: truncated at byte {self.pos} reading {what} "
                f"({n} bytes needed, {len(self.buf) - self.pos} left)"
            )
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def read(self, fmt, what):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))


def _array(r, i):
    (magic,) = r.read("<I", f"magic of array {i}")
    if magic not in (_V1, _V2, _V3):
        raise DeployError(f"{r.source}: array {i} has bad magic 0x{magic:08X}")
    if magic != _V1:
        (stype,) = r.read("<i", f"storage type of array {i}")
        if stype != 0:
            raise DeployError(f"{r.source}: array {i} is not dense (storage type {stype})")
    (ndim,) = r.read("<i" if magic == _V3 else "<I", f"ndim of array {i}")
    if ndim < 0 or ndim > 32 or (ndim == 0 and magic != _V3):
        raise DeployError(f"{r.source}: array {i} has invalid ndim {ndim}")
    shape = r.read(f"<{ndim}q", f"shape of array {i}")
    if any(d < 0 for d in shape):
        raise DeployError(f"{r.source}: array {i} has a negative dimension {shape}")
    dev_type, dev_id, flag = r.read("<iii", f"context/dtype of array {i}")
    if dev_type not in _DEV_TYPES or dev_id < 0 or flag not in _FLAGS:
        raise DeployError(f"{r.source}: array {i} has an invalid context or dtype flag {flag}")
    dtype = np.dtype(_FLAGS[flag])
    size = int(np.prod(shape, dtype=np.int64)) if shape else 1
    raw = r.take(size * dtype.itemsize, f"data of array {i}")
    if dtype == np.bool_:
        return np.frombuffer(raw, np.uint8).astype(np.bool_).reshape(shape)
    return np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype).reshape(shape)


def read_params(path):
    """``{name: numpy array}`` from an MXNet ``.params`` file (names as stored)."""
    with open(path, "rb") as f:
        r = _Bytes(f.read(), os.fspath(path))
    magic, _reserved, count = r.read("<QQQ", "header")
    if magic != _LIST_MAGIC:
        raise DeployError(f"{r.source}: not an MXNet params file (magic 0x{magic:X})")
    if count * 8 > len(r.buf) - r.pos:
        raise DeployError(f"{r.source}: claims {count} arrays, too many for its size")
    arrays = [_array(r, i) for i in range(count)]
    (n_names,) = r.read("<Q", "name count")
    if n_names != count:
        raise DeployError(f"{r.source}: {n_names} names for {count} arrays")
    names = []
    for i in range(n_names):
        (length,) = r.read("<Q", f"length of name {i}")
        try:
            names.append(bytes(r.take(length, f"name {i}")).decode("utf-8"))
        except UnicodeDecodeError:
            raise DeployError(f"{r.source}: name {i} is not UTF-8") from None
    if r.pos != len(r.buf):
        raise DeployError(f"{r.source}: {len(r.buf) - r.pos} trailing bytes")
    if len(set(names)) != len(names):
        raise DeployError(f"{r.source}: duplicate array names")
    return dict(zip(names, arrays, strict=True))


# ----------------------------------------------------------------------------- manifest
def read_manifest(prefix, epoch=0):
    """The manifest dict of ``prefix-%04d.manifest.json``, checked."""
    path = f"{prefix}-{epoch:04d}.manifest.json"
    try:
        with open(path, encoding="utf-8") as f:
            man = json.load(f)
    except (OSError, ValueError) as err:
        raise DeployError(f"cannot read manifest {path}: {err}") from None
    if not isinstance(man, dict) or man.get("format") != FORMAT or man.get("version") != 1:
        raise DeployError(f"{path}: not a {FORMAT} version 1 manifest")
    for key in ("artifact", "params_file", "inputs", "params", "outputs"):
        if key not in man:
            raise DeployError(f"{path}: missing field {key!r}")
    man["_dir"] = os.path.dirname(os.path.abspath(path))
    return man


def _param_list(man):
    store = read_params(os.path.join(man["_dir"], os.path.basename(man["params_file"])))
    out = []
    for p in man["params"]:
        arr = store.get(p["key"])
        if arr is None:
            raise DeployError(f"parameter {p['key']!r} is missing from {man['params_file']}")
        if list(arr.shape) != p["shape"] or arr.dtype.name != p["dtype"]:
            raise DeployError(
                f"parameter {p['name']!r} is {arr.shape} {arr.dtype}, the "
                f"artifact expects {tuple(p['shape'])} {p['dtype']}"
            )
        out.append(arr)
    return out


def _check_inputs(man, inputs, fixed_batch=None):
    spec = man["inputs"]
    if len(inputs) != len(spec):
        raise DeployError(
            f"expected {len(spec)} input(s) {[s['name'] for s in spec]}, got {len(inputs)}"
        )
    for x, s in zip(inputs, spec, strict=True):
        shape = list(np.shape(x))
        want = [fixed_batch if isinstance(d, str) and fixed_batch else d for d in s["shape"]]
        ok = len(shape) == len(want) and all(
            isinstance(w, str) or w == d for w, d in zip(want, shape, strict=True)
        )
        if not ok or np.dtype(getattr(x, "dtype", None) or np.float64).name != s["dtype"]:
            raise DeployError(
                f"input {s['name']!r} must be {tuple(want)} {s['dtype']}, got "
                f"{tuple(shape)} {getattr(x, 'dtype', type(x).__name__)}"
            )


class _Deployed:
    """``f(*inputs)``: one output as an array, several as a tuple."""

    def __init__(self, man, call, params, exported=None):
        self.manifest, self._call, self.params, self.exported = man, call, params, exported
        self.input_names = [s["name"] for s in man["inputs"]]
        self._checked = set()  # input signatures already validated

    def __call__(self, *inputs):
        try:
            sig = tuple((x.shape, x.dtype) for x in inputs)
        except AttributeError:
            sig = None
        if sig is None or sig not in self._checked:
            _check_inputs(self.manifest, inputs, self.manifest.get("_fixed_batch"))
            if sig is not None:
                self._checked.add(sig)
        outs = self._call(self.params, inputs)
        return outs[0] if len(outs) == 1 else tuple(outs)


def load(prefix, epoch=0):
    """Load ``prefix-%04d.stablehlo`` and its parameters; returns ``f(*inputs)``.

    ``f.exported`` is the :class:`jax.export.Exported` (serialized with
    ``vjp_order=1``: ``jax.grad`` through ``f.exported.call`` works for
    fine-tuning); ``f.params`` the parameter arrays in calling order.
    """
    import jax

    man = read_manifest(prefix, epoch)
    path = os.path.join(man["_dir"], os.path.basename(man["artifact"]))
    try:
        with open(path, "rb") as f:
            exported = jax.export.deserialize(bytearray(f.read()))
    except OSError as err:
        raise DeployError(f"cannot read artifact {path}: {err}") from None
    n_p = len(man["params"])
    if len(exported.in_avals) != n_p + len(man["inputs"]):
        raise DeployError(
            f"{path} takes {len(exported.in_avals)} arrays, the manifest lists "
            f"{n_p} parameters and {len(man['inputs'])} inputs"
        )
    params = [jax.device_put(p) for p in _param_list(man)]
    run = jax.jit(lambda ps, xs: exported.call(*ps, *xs))
    return _Deployed(man, run, params, exported)


def load_iree(prefix, epoch=0, driver="local-task"):
    """Run ``prefix-%04d.vmfb`` (from ``export(..., iree=True)``) with IREE, without jax.

    The module has the fixed batch size recorded in ``manifest['iree']['batch']``.
    """
    import iree.runtime as ireert

    man = read_manifest(prefix, epoch)
    info = man.get("iree")
    if not info:
        raise DeployError(f"{prefix}: exported without iree=True (no IREE module)")
    with open(os.path.join(man["_dir"], info["vmfb"]), "rb") as f:
        blob = f.read()
    config = ireert.Config(driver)
    ctx = ireert.SystemContext(config=config)
    vm = ireert.VmModule.copy_buffer(ctx.instance, blob)
    ctx.add_vm_module(vm)
    main = ctx.modules[vm.name]["main"]
    params = [ireert.asdevicearray(config.device, p) for p in _param_list(man)]
    man["_fixed_batch"] = info.get("batch")

    def call(ps, xs):
        out = main(*ps, *xs)
        outs = out if isinstance(out, (tuple, list)) else [out]
        return [o.to_host() if hasattr(o, "to_host") else np.asarray(o) for o in outs]

    return _Deployed(man, call, params)
