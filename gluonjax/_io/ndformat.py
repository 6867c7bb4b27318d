"""MXNet's NDArray-list binary format (``mx.nd.save`` / ``.params`` files), in NumPy.

Layout (little-endian), as written by MXNet 1.9.1::

    u64 0x112 (list magic) | u64 reserved | u64 count | count x array | names
    array (V2): u32 0xF993FAC9 | i32 stype (0 = dense) | u32 ndim | ndim x i64 dim
                | i32 dev_type | i32 dev_id | i32 type_flag | raw data
    array (V3, numpy shape semantics: 0-d and zero-size arrays): magic 0xF993FACA,
                ndim is i32, otherwise as V2
    array (V1): u32 0xF993FAC8 | shape | context | type_flag | data (no stype)
    sparse array (V2/V3, stype 1 = row_sparse, 2 = csr): magic | i32 stype
                | storage shape (of the stored values) | shape | context | type_flag
                | per aux array (row_sparse: indices; csr: indptr, indices):
                  i32 aux type_flag | aux shape
                | stored values | aux data
    names: u64 n (0 or count) | n x (u64 length | utf-8 bytes)

The reader never unpickles or evaluates anything and checks every field against
the bytes that remain, so a damaged or hostile file raises
:class:`~gluonjax.base.FileFormatError` (with the byte offset) instead of
allocating memory a length field asks for.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np

from ..base import DTypeError, FileFormatError

__all__ = ["read_arrays", "write_arrays", "SparseRecord", "LIST_MAGIC", "TYPE_FLAGS"]


class SparseRecord(NamedTuple):
    """A sparse array of the file: ``stype`` ('row_sparse' or 'csr'), the full ``shape``,
    the stored values ``data`` and ``aux`` (row_sparse: ``[indices]``; csr:
    ``[indptr, indices]``), as NumPy arrays."""

    stype: str
    shape: tuple
    data: np.ndarray
    aux: list


LIST_MAGIC = 0x112
V1_MAGIC, V2_MAGIC, V3_MAGIC = 0xF993FAC8, 0xF993FAC9, 0xF993FACA
MAX_NDIM = 32
TYPE_FLAGS = {  # MXNet (mshadow) type flag -> numpy dtype
    0: np.dtype(np.float32),
    1: np.dtype(np.float64),
    2: np.dtype(np.float16),
    3: np.dtype(np.uint8),
    4: np.dtype(np.int32),
    5: np.dtype(np.int8),
    6: np.dtype(np.int64),
    7: np.dtype(np.bool_),
}
_FLAG_OF = {dt: flag for flag, dt in TYPE_FLAGS.items()}
_STYPES = {1: "row_sparse", 2: "csr"}
_STYPE_IDS = {v: k for k, v in _STYPES.items()}
_DEV_TYPES = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
_MIN_ARRAY_BYTES = 4 + 4  # magic + ndim: the least an array record can take


class _Reader:
    """Bounds-checked little-endian reads over a bytes object."""

    def __init__(self, buf, source):
        self.buf = memoryview(buf)
        self.pos = 0
        self.source = source

    @property
    def left(self):
        return len(self.buf) - self.pos

    def fail(self, what, at=None):
        at = self.pos if at is None else at
        src = f"{self.source}: " if self.source else ""
        raise FileFormatError(f"{src}invalid MXNet NDArray file at byte {at}: {what}")

    def take(self, n, what):
        if n > self.left:
            self.fail(f"truncated while reading {what}: needs {n} bytes, {self.left} left")
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt, what):
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self.take(size, what))[0]


def _read_shape(r, version, idx):
    at = r.pos
    ndim = r.unpack("<i" if version == V3_MAGIC else "<I", f"ndim of array {idx}")
    if ndim < 0:
        r.fail(f"array {idx} has an unknown shape (ndim={ndim})", at)
    if ndim > MAX_NDIM or ndim * 8 > r.left:
        r.fail(
            f"array {idx} claims ndim={ndim} (at most {MAX_NDIM} and what the "
            f"{r.left} remaining bytes can hold; truncated or corrupt file)",
            at,
        )
    if ndim == 0 and version != V3_MAGIC:
        r.fail(f"array {idx} is an uninitialised (none) array, which cannot be loaded", at)
    dims = struct.unpack(f"<{ndim}q", r.take(8 * ndim, f"shape of array {idx}"))
    if any(d < 0 for d in dims):
        r.fail(f"array {idx} has a negative dimension in shape {dims}", at)
    return tuple(int(d) for d in dims)


def _read_array(r, idx):
    at = r.pos
    magic = r.unpack("<I", f"magic of array {idx}")
    if magic not in (V1_MAGIC, V2_MAGIC, V3_MAGIC):
        r.fail(
            f"array {idx} has magic 0x{magic:08X}, expected 0x{V2_MAGIC:08X} "
            f"(files from MXNet before 1.0 are not supported)",
            at,
        )
    stype, storage = 0, None
    if magic != V1_MAGIC:
        st_at = r.pos
        stype = r.unpack("<i", f"storage type of array {idx}")
        if stype not in (0, *_STYPES):
            r.fail(f"array {idx} has unknown storage type {stype}", st_at)
        if stype:
            storage = _read_shape(r, magic, idx)
    shape = _read_shape(r, magic, idx)
    ctx_at = r.pos
    dev_type = r.unpack("<i", f"device type of array {idx}")
    dev_id = r.unpack("<i", f"device id of array {idx}")
    if dev_type not in _DEV_TYPES or dev_id < 0:
        r.fail(f"array {idx} has an invalid context (dev_type={dev_type}, dev_id={dev_id})", ctx_at)
    dtype = _read_flag(r, f"array {idx}")
    if not stype:
        return _read_data(r, dtype, shape, f"data of array {idx}")
    aux_meta = []
    for i in range(1 if _STYPES[stype] == "row_sparse" else 2):
        aux_dtype = _read_flag(r, f"aux array {i} of array {idx}")
        if aux_dtype.kind not in "iu":
            r.fail(f"array {idx}: aux array {i} has non-integer dtype {aux_dtype.name}")
        aux_meta.append((aux_dtype, _read_shape(r, magic, idx)))
    # the values' shape follows the indices: MXNet may write the storage shape before
    # the values exist (as (0, ...)), and its own loader sizes them from the aux shapes
    n_stored = aux_meta[-1][1][0] if aux_meta[-1][1] else 0
    storage = (n_stored,) + (tuple(shape[1:]) if _STYPES[stype] == "row_sparse" else ())
    data = _read_data(r, dtype, storage, f"stored values of array {idx}")
    aux = [_read_data(r, d, s, f"aux {i} of array {idx}") for i, (d, s) in enumerate(aux_meta)]
    return SparseRecord(_STYPES[stype], shape, data, aux)


def _read_flag(r, owner):
    at = r.pos
    flag = r.unpack("<i", f"dtype flag of {owner}")
    dtype = TYPE_FLAGS.get(flag)
    if dtype is None:
        r.fail(
            f"{owner} has unknown dtype flag {flag} "
            f"(known: {sorted((k, v.name) for k, v in TYPE_FLAGS.items())})",
            at,
        )
    return dtype


def _read_data(r, dtype, shape, what):
    size = 1
    for d in shape:
        size *= d
    nbytes = size * dtype.itemsize
    if nbytes > r.left:
        r.fail(
            f"{what}: shape {shape} {dtype.name} needs {nbytes} bytes, "
            f"{r.left} left (truncated or corrupt file)"
        )
    raw = r.take(nbytes, what)
    if dtype == np.bool_:
        arr = np.frombuffer(raw, np.uint8).astype(np.bool_)
    else:
        arr = np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype)
    return arr.reshape(shape)


def read_arrays(data, source=None):
    """Parse MXNet NDArray-list bytes into ``(arrays, names)``.

    Parameters
    ----------
    data : bytes
        The file content.
    source : str, optional
        The file name, used in error messages.

    Returns
    -------
    (list of numpy.ndarray or SparseRecord, list of str)
        The arrays with their exact stored dtypes (sparse ones as
        :class:`SparseRecord`), and the names (empty for a list file, otherwise one
        per array).
    """
    r = _Reader(data, source)
    magic = r.unpack("<Q", "list magic")
    if magic != LIST_MAGIC:
        r.fail(
            f"list magic is 0x{magic:X}, expected 0x{LIST_MAGIC:X} (not an MXNet NDArray file)", 0
        )
    r.unpack("<Q", "reserved field")
    at = r.pos
    count = r.unpack("<Q", "array count")
    if count * _MIN_ARRAY_BYTES > r.left:
        r.fail(
            f"array count {count} is more than the {r.left} remaining bytes can hold "
            f"(truncated or corrupt file)",
            at,
        )
    arrays = [_read_array(r, i) for i in range(count)]
    at = r.pos
    n_names = r.unpack("<Q", "name count")
    if n_names not in (0, count):
        r.fail(f"{n_names} names for {count} arrays", at)
    names = []
    for i in range(n_names):
        at = r.pos
        length = r.unpack("<Q", f"length of name {i}")
        if length > r.left:
            r.fail(f"name {i} claims {length} bytes, {r.left} left (truncated or corrupt file)", at)
        raw = bytes(r.take(length, f"name {i}"))
        try:
            names.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            r.fail(f"name {i} is not valid UTF-8: {raw[:40]!r}", at + 8)
    if r.left:
        r.fail(f"{r.left} unexpected trailing bytes after the name list")
    return arrays, names


def _flag(dtype, what):
    flag = _FLAG_OF.get(dtype.newbyteorder("="))
    if flag is None:
        raise DTypeError(
            f"{what} has dtype {dtype}, which MXNet's format cannot store; cast to "
            f"one of {[d.name for d in TYPE_FLAGS.values()]}"
        )
    return flag


def write_arrays(arrays, names=()):
    """Serialise numpy arrays (and optional names) to MXNet NDArray-list bytes.

    Arrays keep their dtype (float32/64/16, uint8, int8, int32, int64, bool);
    :class:`SparseRecord` entries are written as MXNet's sparse records (int64 aux).
    The V2 records that MXNet loads by default are used unless some array is
    0-d or zero-size: then every record is V3, which MXNet loads only with
    numpy shape semantics on (``mx.npx.set_np()``); it refuses files mixing both.
    """
    names = list(names)
    arrays = [a if isinstance(a, SparseRecord) else np.asarray(a) for a in arrays]
    if names and len(names) != len(arrays):
        raise FileFormatError(f"{len(names)} names for {len(arrays)} arrays")
    v3 = any(
        len(a.shape) == 0 or 0 in a.shape
        if isinstance(a, SparseRecord)
        else a.ndim == 0 or a.size == 0
        for a in arrays
    )
    parts = [struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays))]

    def shape(dims):
        if len(dims) > MAX_NDIM:
            raise FileFormatError(f"array {i} has {len(dims)} dimensions (at most {MAX_NDIM})")
        return struct.pack("<i" if v3 else "<I", len(dims)) + struct.pack(f"<{len(dims)}q", *dims)

    for i, a in enumerate(arrays):
        sparse = isinstance(a, SparseRecord)
        values = np.asarray(a.data) if sparse else a
        flag = _flag(values.dtype, f"array {i}")
        if sparse:
            parts.append(struct.pack("<Ii", V3_MAGIC if v3 else V2_MAGIC, _STYPE_IDS[a.stype]))
            parts.append(shape(values.shape) + shape(tuple(a.shape)))
            aux = [np.asarray(x, np.int64) for x in a.aux]
            parts.append(struct.pack("<iii", 1, 0, flag))
            parts += [struct.pack("<i", _FLAG_OF[x.dtype]) + shape(x.shape) for x in aux]
            parts += [np.ascontiguousarray(x, x.dtype.newbyteorder("<")).tobytes()
                      for x in (values, *aux)]  # fmt: skip
            continue
        parts.append(struct.pack("<Ii", V3_MAGIC if v3 else V2_MAGIC, 0))
        parts.append(shape(a.shape))
        parts.append(struct.pack("<iii", 1, 0, flag))
        parts.append(np.ascontiguousarray(a, a.dtype.newbyteorder("<")).tobytes())
    parts.append(struct.pack("<Q", len(names)))
    for n in names:
        if not isinstance(n, str):
            raise FileFormatError(f"array names must be str, got {type(n).__name__} {n!r}")
        raw = n.encode("utf-8")
        parts.append(struct.pack("<Q", len(raw)) + raw)
    return b"".join(parts)
