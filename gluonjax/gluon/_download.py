"""``gluon.utils.download``, ``check_sha1`` and ``replace_file`` (standard library only)."""

from __future__ import annotations

import hashlib
import os
import secrets
import time
import urllib.request

from ..base import MXNetError

__all__ = ["download", "check_sha1", "replace_file"]


def check_sha1(filename, sha1_hash):
    """True if the sha1 of the file ``filename`` is ``sha1_hash`` (hex digest).

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "a.txt"); _ = open(p, "wb").write(b"abc")
    >>> check_sha1(p, "a9993e364706816aba3e25717850c26c9cd0d89d")
    True
    """
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha1.update(chunk)
    return sha1.hexdigest() == sha1_hash


def replace_file(src, dst):
    """Move ``src`` over ``dst`` atomically."""
    os.replace(src, dst)


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """Download ``url`` to ``path`` (a file, or a folder to keep the url's file name in).

    The file is written to a temporary name and renamed when complete. It is
    fetched again when ``overwrite`` or when its sha1 is not ``sha1_hash``.

    Returns
    -------
    str
        The path of the file.
    """
    fname = url.split("/")[-1]
    if path is not None:
        path = os.path.expanduser(path)
        fname = os.path.join(path, fname) if os.path.isdir(path) else path
    if not overwrite and os.path.exists(fname) and (not sha1_hash or check_sha1(fname, sha1_hash)):
        return fname
    folder = os.path.dirname(os.path.abspath(fname))
    os.makedirs(folder, exist_ok=True)
    if retries <= 0:
        raise ValueError(f"Number of retries should be at least 0, currently it's {retries}")
    ctx = None
    if not verify_ssl:
        import ssl

        ctx = ssl._create_unverified_context()
    last = None
    for attempt in range(retries):
        tmp = f"{fname}.{secrets.token_hex(6)}.part"
        try:
            with urllib.request.urlopen(url, timeout=30, context=ctx) as r, open(tmp, "wb") as f:
                for chunk in iter(lambda: r.read(1 << 20), b""):
                    f.write(chunk)
            if sha1_hash and not check_sha1(tmp, sha1_hash):
                raise MXNetError(
                    f"downloaded '{url}' but its sha1 is not {sha1_hash}: the file is corrupted "
                    f"or the repository changed"
                )
            replace_file(tmp, fname)
            return fname
        except Exception as err:
            last = err
            if os.path.exists(tmp):
                os.unlink(tmp)
            if attempt + 1 < retries:
                time.sleep(min(2**attempt * 0.1, 2.0))
    raise MXNetError(f"download of '{url}' failed: {type(last).__name__}: {last}") from last
