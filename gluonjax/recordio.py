"""``mx.recordio``: MXNet's RecordIO files (``.rec`` + ``.idx``), read and written in pure Python.

The format is dmlc's: every record starts with the magic word ``0xced7230a`` and a
32-bit word holding a 3-bit continuation flag and a 29-bit length; the payload is
padded with zeros to a multiple of 4 bytes. A payload that contains the magic
word at a 4-byte aligned offset is split there into several parts (flags 1, 2,
3), as dmlc's writer does, so files written here read in MXNet and the other way
round. An ``.idx`` file holds one ``key<TAB>byte offset`` line per record.

:func:`pack`/:func:`unpack` add and strip MXNet's image-record header
(:data:`IRHeader`: ``flag``, ``label``, ``id``, ``id2``, packed as ``'IfQQ'``);
:func:`pack_img`/:func:`unpack_img` encode and decode the image with OpenCV.

A malformed file raises :class:`~gluonjax.base.FileFormatError` (an ``MXNetError``)
naming the file, the record and the byte offset. This module imports no jax, so
data-loader worker processes can use it.

Examples
--------
>>> import os, tempfile
>>> from gluonjax import recordio
>>> d = tempfile.mkdtemp()
>>> w = recordio.MXIndexedRecordIO(os.path.join(d, "a.idx"), os.path.join(d, "a.rec"), "w")
>>> for i in range(3):
...     w.write_idx(i, recordio.pack(recordio.IRHeader(0, float(i), i, 0), b"payload"))
>>> w.close()
>>> r = recordio.MXIndexedRecordIO(os.path.join(d, "a.idx"), os.path.join(d, "a.rec"), "r")
>>> header, body = recordio.unpack(r.read_idx(2))
>>> header.label, body
(2.0, b'payload')
"""

from __future__ import annotations

import numbers
import os
import secrets
import struct
from collections import namedtuple

import numpy as np

from .base import FileFormatError, InvalidArgumentError, MXNetError

__all__ = [
    "MXRecordIO",
    "MXIndexedRecordIO",
    "IRHeader",
    "pack",
    "unpack",
    "pack_img",
    "unpack_img",
]

_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_LEN_MASK = (1 << 29) - 1


def _pad4(n):
    return (n + 3) & ~3


class MXRecordIO:
    """Sequential reader (``flag='r'``) or writer (``flag='w'``) of a ``.rec`` file.

    A writer writes to a temporary file next to ``uri`` and renames it over ``uri``
    on :meth:`close` (atomic: a crash never leaves a half-written file). Pickling
    closes the file; unpickling reopens it (data-loader workers rely on this).

    Parameters
    ----------
    uri : str
        Path of the record file.
    flag : {'r', 'w'}
        Read or write.
    """

    def __init__(self, uri, flag):
        self.uri = os.fspath(uri)
        self.flag = flag
        self.is_open = False
        self._f = None
        self._tmp = None
        self._count = 0
        self.open()

    # ------------------------------------------------------------ open / close
    def open(self):
        """Open the file (a writer starts an empty file)."""
        if self.flag == "w":
            folder = os.path.dirname(os.path.abspath(self.uri))
            self._tmp = os.path.join(
                folder, f".{os.path.basename(self.uri)}.{secrets.token_hex(6)}.tmp"
            )
            self._f = open(self._tmp, "wb")
            self.writable = True
        elif self.flag == "r":
            try:
                self._f = open(self.uri, "rb")
            except OSError as err:
                raise MXNetError(f"RecordIO: cannot open '{self.uri}' for reading: {err}") from None
            self.writable = False
        else:
            raise InvalidArgumentError(f"Invalid flag {self.flag!r}: use 'r' or 'w'")
        self._count = 0
        self.is_open = True

    def close(self):
        """Close the file (a writer's file appears at ``uri`` now)."""
        if not self.is_open:
            return
        self.is_open = False
        f, self._f = self._f, None
        if self.writable:
            f.flush()
            os.fsync(f.fileno())
            f.close()
            os.replace(self._tmp, self.uri)
            self._tmp = None
        else:
            f.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to report to
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getstate__(self):
        was_open = self.is_open
        self.close()
        d = dict(self.__dict__)
        d["is_open"] = was_open
        d["_f"] = None
        d["_tmp"] = None
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)
        was_open = d["is_open"]
        self.is_open = False
        if was_open:
            self.open()

    def reset(self):
        """Go back to the first record (a writer starts its file again)."""
        if self.is_open and self.writable:
            self._f.close()
            os.unlink(self._tmp)
            self.is_open = False
        self.close()
        self.open()

    # ------------------------------------------------------------ records
    def write(self, buf):
        """Append ``buf`` (bytes) as one record."""
        if not self.writable:
            raise MXNetError(f"RecordIO: '{self.uri}' is open for reading, not writing")
        buf = bytes(buf)
        n = len(buf)
        if n >= 1 << 29:
            raise MXNetError(f"RecordIO: a record must be smaller than 2**29 bytes, got {n}")
        out = self._f
        start = 0
        # dmlc's writer splits the payload where the magic word appears at an aligned offset
        pos = buf.find(_MAGIC_BYTES)
        while pos != -1 and pos + 4 <= (n & ~3):
            if pos % 4 == 0:
                out.write(_MAGIC_BYTES)
                out.write(struct.pack("<I", ((1 if start == 0 else 2) << 29) | (pos - start)))
                out.write(buf[start:pos])
                start = pos + 4
                pos = buf.find(_MAGIC_BYTES, start)
            else:
                pos = buf.find(_MAGIC_BYTES, pos + 1)
        out.write(_MAGIC_BYTES)
        out.write(struct.pack("<I", ((3 if start else 0) << 29) | (n - start)))
        out.write(buf[start:])
        out.write(b"\0" * (_pad4(n) - n))
        self._count += 1

    def tell(self):
        """Byte offset where the next record will start."""
        return self._f.tell()

    def _fail(self, offset, what):
        raise FileFormatError(
            f"RecordIO: '{self.uri}' is malformed at record {self._count} (byte offset "
            f"{offset}): {what}. Is it a .rec file written by MXNet's RecordIO?"
        )

    def read(self):
        """The next record as bytes, or None at the end of the file."""
        if self.writable:
            raise MXNetError(f"RecordIO: '{self.uri}' is open for writing, not reading")
        f = self._f
        parts = []
        while True:
            offset = f.tell()
            head = f.read(8)
            if not head and not parts:
                return None
            if len(head) != 8:
                self._fail(offset, f"a record header needs 8 bytes, found {len(head)}")
            magic, lrec = struct.unpack("<II", head)
            if magic != _MAGIC:
                self._fail(offset, f"expected the magic word 0xced7230a, found {magic:#010x}")
            cflag, length = lrec >> 29, lrec & _LEN_MASK
            if cflag > 3 or (cflag in (0, 1)) != (not parts):
                self._fail(offset, f"unexpected continuation flag {cflag}")
            data = f.read(_pad4(length))
            if len(data) != _pad4(length):
                self._fail(offset, f"the record says {length} bytes but the file ends first")
            parts.append(data[:length])
            if cflag in (0, 3):
                break
        self._count += 1
        return _MAGIC_BYTES.join(parts)

    def _seek(self, pos, count):
        self._f.seek(pos)
        self._count = count


class MXIndexedRecordIO(MXRecordIO):
    """A ``.rec`` file with its ``.idx`` index, for random access by key.

    Parameters
    ----------
    idx_path : str
        Path of the index file (``key<TAB>offset`` per line).
    uri : str
        Path of the record file.
    flag : {'r', 'w'}
    key_type : type, default int
        Type of the keys in the index.
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = os.fspath(idx_path)
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self._idx_lines = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        if self.writable:
            self._idx_lines = []
            return
        try:
            with open(self.idx_path, encoding="utf-8") as f:
                text = f.read()
        except OSError as err:
            raise MXNetError(f"RecordIO: cannot open index '{self.idx_path}': {err}") from None
        size = os.path.getsize(self.uri)
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            fields = line.strip().split("\t")
            try:
                key = self.key_type(fields[0])
                pos = int(fields[1])
            except (ValueError, IndexError):
                raise FileFormatError(
                    f"RecordIO: index '{self.idx_path}' line {lineno} is malformed: {line!r} "
                    f"(expected 'key<TAB>byte offset')"
                ) from None
            if not 0 <= pos < size:
                raise FileFormatError(
                    f"RecordIO: index '{self.idx_path}' line {lineno}: record {key!r} at byte "
                    f"offset {pos} is outside '{self.uri}' ({size} bytes)"
                )
            self.idx[key] = pos
            self.keys.append(key)

    def close(self):
        if not self.is_open:
            return
        writable = self.writable
        super().close()
        if writable:
            from ._io.atomic import atomic_write

            atomic_write(self.idx_path, "".join(self._idx_lines).encode("utf-8"))
            self._idx_lines = None

    def __getstate__(self):
        d = super().__getstate__()
        d["_idx_lines"] = None
        return d

    def seek(self, idx):
        """Move the reader to the record with key ``idx``."""
        if self.writable:
            raise MXNetError(f"RecordIO: '{self.uri}' is open for writing, not reading")
        try:
            pos = self.idx[idx]
        except KeyError:
            raise KeyError(
                f"RecordIO: key {idx!r} is not in index '{self.idx_path}' "
                f"({len(self.keys)} records)"
            ) from None
        self._seek(pos, idx)

    def tell(self):
        if not self.writable:
            raise MXNetError("tell() is for writers")
        return super().tell()

    def read_idx(self, idx):
        """The record with key ``idx`` (bytes)."""
        self.seek(idx)
        rec = self.read()
        if rec is None:
            self._fail(self.idx[idx], f"index '{self.idx_path}' points past the last record")
        return rec

    def write_idx(self, idx, buf):
        """Append ``buf`` as the record with key ``idx``."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self._idx_lines.append(f"{key}\t{pos}\n")
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = """Header of an image record: ``flag`` (number of float labels, 0 for one
``label``), ``label`` (float, or an array when ``flag > 0``), ``id`` and ``id2`` (uint64)."""

_IR_FORMAT = "IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """Prefix the bytes ``s`` with an image-record header.

    Parameters
    ----------
    header : IRHeader or tuple (flag, label, id, id2)
        ``label`` may be a number or an array of floats (stored before ``s``).
    s : bytes

    Returns
    -------
    bytes
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + bytes(s)
    return struct.pack(_IR_FORMAT, *header) + bytes(s)


def unpack(s):
    """Split a record into ``(IRHeader, payload bytes)``.

    Raises ``FileFormatError`` if ``s`` is too short for its header.
    """
    if len(s) < _IR_SIZE:
        raise FileFormatError(
            f"recordio.unpack: a record needs at least {_IR_SIZE} header bytes, got {len(s)}"
        )
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        if len(s) < 4 * header.flag:
            raise FileFormatError(
                f"recordio.unpack: the header announces {header.flag} float labels but only "
                f"{len(s)} bytes follow"
            )
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4 :]
    return header, s


def unpack_img(s, iscolor=-1):
    """Split a record into ``(IRHeader, image)``; the image is OpenCV's decode (BGR, numpy).

    ``iscolor`` is OpenCV's imread flag (-1 unchanged, 0 gray, 1 color).
    """
    import cv2

    header, s = unpack(s)
    img = cv2.imdecode(np.frombuffer(s, dtype=np.uint8), iscolor)
    if img is None:
        raise FileFormatError(
            f"recordio.unpack_img: record id {header.id} is not a decodable image"
        )
    return header, img


def pack_img(header, img, quality=95, img_fmt=".jpg"):
    """Encode ``img`` (numpy, BGR as OpenCV) with OpenCV and :func:`pack` it.

    ``quality``: JPEG quality 1-100, or PNG compression 0-9.
    """
    import cv2

    params = None
    if img_fmt.upper() in (".JPG", ".JPEG"):
        params = [cv2.IMWRITE_JPEG_QUALITY, quality]
    elif img_fmt.upper() == ".PNG":
        params = [cv2.IMWRITE_PNG_COMPRESSION, quality]
    ok, buf = cv2.imencode(img_fmt, img, params)
    if not ok:
        raise MXNetError(f"pack_img: OpenCV could not encode the image as {img_fmt}")
    return pack(header, buf.tobytes())
