"""File helpers of ``gluon.utils``: ``download``, ``check_sha1``, ``replace_file``.

``download`` fetches with :mod:`requests` (as MXNet does, so code and tests that
patch ``requests.get`` keep working), retries failed attempts, checks an optional
SHA-1 and writes the file atomically: the bytes go to a temporary file in the
destination folder that is renamed over the destination, so a failed or
concurrent download never leaves a half-written file under the final name.
"""

from __future__ import annotations

import hashlib
import os
import warnings

from ..base import MXNetError
from .atomic import atomic_write

__all__ = ["download", "check_sha1", "replace_file", "DownloadError", "ChecksumError"]


class DownloadError(MXNetError):
    """A download that failed (bad status, network error, no file name)."""


class ChecksumError(DownloadError, UserWarning):
    """A downloaded file whose SHA-1 is not the expected one (MXNet raises UserWarning)."""


def check_sha1(filename, sha1_hash):
    """Whether the SHA-1 of the file's content is ``sha1_hash``.

    Parameters
    ----------
    filename : str
        Path to the file.
    sha1_hash : str
        Expected SHA-1 in hexadecimal digits.

    Returns
    -------
    bool

    Examples
    --------
    >>> import os, tempfile
    >>> from gluonjax.gluon.utils import check_sha1
    >>> p = os.path.join(tempfile.mkdtemp(), "f")
    >>> _ = open(p, "wb").write(b"abc")
    >>> check_sha1(p, "a9993e364706816aba3e25717850c26c9cd0d89d")
    True
    """
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha1.update(block)
    return sha1.hexdigest() == sha1_hash


def replace_file(src, dst):
    """Move ``src`` over ``dst`` in one atomic step (same file system).

    Parameters
    ----------
    src, dst : str
        Source and destination paths. On failure ``src`` is removed and
        :class:`OSError` is raised.
    """
    try:
        os.replace(src, dst)
    except OSError as err:
        try:
            os.remove(src)
        except OSError:
            pass
        raise OSError(
            f"Moving downloaded temp file - {src}, to {dst} failed ({err}). Please retry the "
            f"download."
        ) from None


def _target(url, path):
    name = url.split("/")[-1]
    if path is None:
        if not name:
            raise DownloadError(
                f"Can't construct file-name from this URL ({url!r}). Please set the `path` "
                f"option manually."
            )
        return name
    path = os.path.expanduser(path)
    return os.path.join(path, name) if os.path.isdir(path) else path


def _needs_download(fname, overwrite, sha1_hash):
    return (
        overwrite
        or not os.path.exists(fname)
        or bool(sha1_hash and not check_sha1(fname, sha1_hash))
    )


def _fetch(url, fname, sha1_hash, verify_ssl, existed):
    import requests

    print(f"Downloading {fname} from {url}...")
    r = requests.get(url, stream=True, verify=verify_ssl)
    if r.status_code != 200:
        raise DownloadError(f"Failed downloading url {url} (HTTP status {r.status_code})")
    chunks = (c for c in r.iter_content(chunk_size=1 << 16) if c)
    if (
        not existed
        and os.path.exists(fname)
        and not (sha1_hash and not check_sha1(fname, sha1_hash))
    ):
        # another process finished the same download meanwhile (MXNet keeps that file; it
        # also keeps a file that existed before, which would make ``overwrite`` a no-op)
        warnings.warn(
            f"File {fname} exists in file system so the downloaded file is deleted",
            stacklevel=3,
        )
    else:
        atomic_write(fname, chunks)
    if sha1_hash and not check_sha1(fname, sha1_hash):
        raise ChecksumError(
            f"File {fname} is downloaded but the content hash does not match. The repo may "
            f"be outdated or download may be incomplete. If the 'repo_url' is overridden, "
            f"consider switching to the default repo."
        )


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """Download ``url`` to a file.

    Parameters
    ----------
    url : str
    path : str, optional
        Destination file or folder (default: the URL's file name in the current folder).
    overwrite : bool, default False
        Download and replace the file even if it exists. (MXNet 1.9.1 downloads but then
        keeps the existing file; gluonjax replaces it, as the name says.)
    sha1_hash : str, optional
        Expected SHA-1; an existing file that does not match is downloaded again, and a
        download that does not match is an error (retried).
    retries : int, default 5
        Attempts before the last error is raised.
    verify_ssl : bool, default True
        Verify SSL certificates (a warning is issued when off).

    Returns
    -------
    str
        The path of the file.
    """
    fname = _target(url, path)
    if not isinstance(retries, int) or retries < 0:
        raise DownloadError(f"Number of retries should be at least 0, currently it's {retries}")
    if not verify_ssl:
        warnings.warn(
            "Unverified HTTPS request is being made (verify_ssl=False). Adding certificate "
            "verification is strongly advised.",
            stacklevel=2,
        )
    if not _needs_download(fname, overwrite, sha1_hash):
        return fname
    folder = os.path.dirname(os.path.abspath(fname))
    os.makedirs(folder, exist_ok=True)
    existed = os.path.exists(fname)
    while True:
        try:
            _fetch(url, fname, sha1_hash, verify_ssl, existed)
            return fname
        except Exception as err:
            retries -= 1
            if retries <= 0:
                raise
            plural = "s" if retries > 1 else ""
            print(f"download failed due to {err!r}, retrying, {retries} attempt{plural} left")
