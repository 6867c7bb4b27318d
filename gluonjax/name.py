"""Automatic names for symbols: ``NameManager`` and ``Prefix`` (``mx.name``).

Examples
--------
>>> import gluonjax as mx
>>> with mx.name.Prefix('mynet_'):
...     s = mx.sym.relu(mx.sym.var('x'))
>>> s.name
'mynet_relu0'
"""

from __future__ import annotations

import threading
import warnings

from .base import ArgumentTypeError, _ClassPropertyMeta, classproperty

__all__ = ["NameManager", "Prefix", "current"]

_local = threading.local()  # .manager: this thread's active NameManager


class NameManager(metaclass=_ClassPropertyMeta):
    """Gives ``hint%d`` names (``fullyconnected0``, ``fullyconnected1``...).

    The active manager is per thread: ``with NameManager()`` (or assigning
    ``NameManager.current``, deprecated in MXNet 1.x) in one thread leaves the
    others' names alone.
    """

    def __init__(self):
        self._counter = {}
        self._old = None

    def get(self, name, hint):
        """``name`` if given, else the next ``hint<N>``."""
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return f"{hint}{n}"

    def __enter__(self):
        self._old = current()
        _local.manager = self
        return self

    def __exit__(self, *exc):
        _local.manager = self._old

    @classproperty
    def current(cls):
        """This thread's active manager (deprecated in MXNet 1.x: use ``with``)."""
        warnings.warn(
            "NameManager.current has been deprecated. It is advised to use the `with` "
            "statement with NameManager.",
            DeprecationWarning,
            stacklevel=2,
        )
        return current()

    @current.setter
    def current(cls, value):
        warnings.warn(
            "NameManager.current has been deprecated. It is advised to use the `with` "
            "statement with NameManager.",
            DeprecationWarning,
            stacklevel=2,
        )
        if not isinstance(value, NameManager):
            raise ArgumentTypeError(
                f"NameManager.current must be set to a NameManager, got {type(value).__name__}"
            )
        _local.manager = value


class Prefix(NameManager):
    """A NameManager that puts ``prefix`` in front of every name."""

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


def current():
    """The active NameManager."""
    mgr = getattr(_local, "manager", None)
    if mgr is None:
        mgr = _local.manager = NameManager()
    return mgr
