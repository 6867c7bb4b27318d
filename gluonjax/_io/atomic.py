"""Atomic file writes: a crash or error never leaves a half-written file behind."""

from __future__ import annotations

import os
import secrets
import stat

from ..base import file_error

__all__ = ["atomic_write", "read_bytes"]


def _chunks(data):
    if isinstance(data, (bytes, bytearray, memoryview)):
        yield data
    elif callable(data):
        yield from _chunks(data())
    else:
        yield from data


def atomic_write(path, data):
    """Write ``data`` to ``path`` atomically.

    The bytes go to a temporary file in the same directory, which is flushed,
    fsync'ed and then renamed over ``path`` with :func:`os.replace`. If anything
    fails the temporary file is removed and an existing ``path`` is untouched.

    Parameters
    ----------
    path : str or os.PathLike
        Destination file.
    data : bytes, iterable of bytes, or callable returning either
        The content (an iterable is written chunk by chunk).

    Examples
    --------
    >>> import os, tempfile
    >>> from gluonjax._io.atomic import atomic_write
    >>> p = os.path.join(tempfile.mkdtemp(), "f.bin")
    >>> atomic_write(p, b"abc"); open(p, "rb").read()
    b'abc'
    """
    path = os.fspath(path)
    try:
        _write(path, data)
    except OSError as err:  # name the user's path, never the temporary file
        raise file_error(err, path, "writing") from None


def read_bytes(path, what="reading"):
    """The bytes of the file at ``path``; OS errors become a :class:`FileError` naming it.

    Parameters
    ----------
    path : str or os.PathLike
        The file to read.
    what : str
        What is being done, for the message (``"reading parameter file"``).

    Returns
    -------
    bytes

    Examples
    --------
    >>> from gluonjax._io.atomic import read_bytes
    >>> try:
    ...     read_bytes("no/such/file.params")
    ... except FileNotFoundError as e:
    ...     print(e.filename)
    no/such/file.params
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as err:
        raise file_error(err, path, what) from None


def _write(path, data):
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(21, "Is a directory", path)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in _chunks(data):
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        try:  # keep the permissions of the file being replaced
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        except FileNotFoundError:
            pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(folder)


def _fsync_dir(folder):
    """Make the rename durable (POSIX); silently skipped where unsupported."""
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
