"""Test environment helpers: environment variables, stderr, devices, downloads."""

from __future__ import annotations

import contextlib
import os
import platform
import sys

from ..util import getenv, setenv

__all__ = [
    "environment",
    "discard_stderr",
    "list_gpus",
    "download",
    "DummyIter",
    "is_cd_run",
    "is_aarch64_run",
    "has_tvm_ops",
    "is_op_runnable",
]


@contextlib.contextmanager
def environment(*args):
    """Set environment variables inside a ``with`` block; the old values come back after.

    ``environment(name, value)`` or ``environment({name: value, ...})``; a value of
    None unsets the variable.

    Examples
    --------
    >>> import os
    >>> from gluonjax.test_utils import environment
    >>> with environment("GLUONJAX_DEMO_VAR", "1"):
    ...     os.environ["GLUONJAX_DEMO_VAR"]
    '1'
    >>> "GLUONJAX_DEMO_VAR" in os.environ
    False
    """
    if len(args) == 1 and isinstance(args[0], dict):
        wanted = dict(args[0])
    elif len(args) == 2:
        wanted = {args[0]: args[1]}
    else:
        raise TypeError("environment() takes (name, value) or one dict of name -> value")
    before = {k: os.environ.get(k) for k in wanted}
    for k, v in wanted.items():
        setenv(k, v)
    try:
        yield
    finally:
        from .. import nd

        nd.waitall()
        for k, v in before.items():
            setenv(k, v)
        for k, v in before.items():
            if getenv(k) != v:  # pragma: no cover  (os.environ is the process environment)
                raise RuntimeError(f"could not restore environment variable {k}")


@contextlib.contextmanager
def discard_stderr():
    """Silence the process's stderr (file descriptor 2, so C-level output too) in a block."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        yield  # stderr is not a real file (captured by a test runner)
        return
    sys.stderr.flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as sink:
            os.dup2(sink.fileno(), fd)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, fd)
    finally:
        os.close(saved)


def list_gpus():
    """``range`` over the GPUs jax can see (empty without GPUs)."""
    from ..context import num_gpus

    return range(num_gpus())


def download(url, fname=None, dirname=None, overwrite=False, retries=5):
    """Download ``url`` to ``dirname/fname`` (atomically) unless it exists; returns the path.

    Parameters
    ----------
    url : str
    fname : str, optional
        Default: the last part of the URL.
    dirname : str, optional
        Created if missing.
    overwrite : bool
        Download even if the file exists.
    retries : int
        Attempts before the last error is raised.
    """
    import urllib.request

    from .._io.atomic import atomic_write

    fname = fname or url.split("/")[-1]
    if dirname is not None:
        os.makedirs(dirname, exist_ok=True)
        fname = os.path.join(dirname, fname)
    if not overwrite and os.path.exists(fname):
        return fname
    if retries < 1:
        raise ValueError(f"retries must be >= 1, got {retries}")
    for attempt in range(retries):
        try:
            with urllib.request.urlopen(url) as resp:  # noqa: S310  (a user-given URL)
                atomic_write(fname, resp.read())
            return fname
        except OSError:
            if attempt == retries - 1:
                raise
    return fname


class DummyIter:
    """An iterator that yields the first batch of ``real_iter`` forever (for speed tests)."""

    def __init__(self, real_iter):
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(iter(real_iter))

    def __iter__(self):
        return self

    def next(self):
        return self.the_batch

    __next__ = next


def is_cd_run():
    """True inside MXNet's continuous-delivery pipeline (``CD_JOB=1``)."""
    return os.environ.get("CD_JOB") == "1"


def is_aarch64_run():
    """True on an ARM64 machine."""
    return platform.machine() in ("aarch64", "arm64")


def has_tvm_ops():
    """False: gluonjax has no TVM operators (XLA compiles every op)."""
    return False


def is_op_runnable():
    """True: every gluonjax op runs on every device jax supports."""
    return True
