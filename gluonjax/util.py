"""``mx.util``: global switches of MXNet's Python API.

NumPy shape semantics (``np_shape``): off by default, as in MXNet 1.x. When off, a
``0`` in a shape given to shape inference means an unknown dimension and ``()`` an
unknown shape; when on, ``-1`` is an unknown dimension, ``None`` an unknown shape,
``0`` a zero-size dimension and ``()`` a scalar. The switch is per thread, like
MXNet's.

Examples
--------
>>> import gluonjax as mx
>>> mx.util.is_np_shape()
False
>>> with mx.util.np_shape(True):
...     mx.util.is_np_shape()
True
"""

from __future__ import annotations

import functools
import threading

__all__ = ["is_np_shape", "set_np_shape", "np_shape", "use_np_shape"]

_state = threading.local()


def is_np_shape():
    """Whether NumPy shape semantics are on in this thread.

    Returns
    -------
    bool
    """
    return bool(getattr(_state, "np_shape", False))


def set_np_shape(active):
    """Turn NumPy shape semantics on or off in this thread.

    Parameters
    ----------
    active : bool

    Returns
    -------
    bool
        The previous state.
    """
    prev = is_np_shape()
    _state.np_shape = bool(active)
    return prev


class _NumpyShapeScope:
    """``with np_shape(active):`` (see :func:`np_shape`)."""

    def __init__(self, active):
        self._active = active
        self._prev = None

    def __enter__(self):
        if self._active is not None:
            self._prev = set_np_shape(self._active)
        return self

    def __exit__(self, *exc):
        if self._active is not None:
            set_np_shape(self._prev)
        return False


def np_shape(active=True):
    """A scope with NumPy shape semantics on (or off with ``active=False``).

    Parameters
    ----------
    active : bool, default True

    Returns
    -------
    context manager
    """
    return _NumpyShapeScope(active)


def use_np_shape(func):
    """Decorator: run ``func`` (or every method of a class) with NumPy shape semantics on.

    Parameters
    ----------
    func : callable or class

    Returns
    -------
    The wrapped function or the class with wrapped methods.
    """
    if isinstance(func, type):
        for name, method in list(vars(func).items()):
            if callable(method) and not name.startswith("__"):
                setattr(func, name, use_np_shape(method))
        return func

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with np_shape(True):
            return func(*args, **kwargs)

    return wrapper
