"""``AttrScope``: attributes attached to every symbol created inside the scope.

Examples
--------
>>> import gluonjax as mx
>>> with mx.attribute.AttrScope(group='4', data='great'):
...     v = mx.sym.var('v')
>>> v.attr('group')
'4'
"""

from __future__ import annotations

import collections
import threading
import warnings

from .base import ArgumentTypeError, InvalidArgumentError, _ClassPropertyMeta, classproperty

__all__ = ["AttrScope", "current"]

_local = threading.local()  # .scope: this thread's active AttrScope


class AttrScope(metaclass=_ClassPropertyMeta):
    """Attach string attributes (``ctx_group``, ``lr_mult``...) to new symbols.

    The active scope is per thread: ``with AttrScope(...)`` (or assigning
    ``AttrScope.current``, deprecated in MXNet 1.x) in one thread leaves the others'
    alone.
    """

    # control-flow subgraph name -> how many were made (``foreach0``, ``foreach1``...)
    _subgraph_names = collections.defaultdict(int)

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise InvalidArgumentError(
                    f"AttrScope: attributes need to be strings, got {k}={v!r}; pass str({k})"
                )
        self._attr = kwargs
        self._old = None

    def get(self, attr):
        """Scope attributes merged with ``attr`` (``attr`` wins)."""
        out = dict(self._attr)
        if attr:
            out.update(attr)
        return out

    def __enter__(self):
        self._old = current()
        merged = AttrScope(**self._old._attr) if self._old else AttrScope()
        merged._attr.update(self._attr)
        _local.scope = merged
        return self

    def __exit__(self, *exc):
        _local.scope = self._old

    @classproperty
    def current(cls):
        """This thread's active scope (deprecated in MXNet 1.x: use ``with``)."""
        warnings.warn(
            "AttrScope.current has been deprecated. It is advised to use the `with` "
            "statement with AttrScope.",
            DeprecationWarning,
            stacklevel=2,
        )
        return current()

    @current.setter
    def current(cls, value):
        warnings.warn(
            "AttrScope.current has been deprecated. It is advised to use the `with` "
            "statement with AttrScope.",
            DeprecationWarning,
            stacklevel=2,
        )
        if not isinstance(value, AttrScope):
            raise ArgumentTypeError(
                f"AttrScope.current must be set to an AttrScope, got {type(value).__name__}"
            )
        _local.scope = value


def current():
    """The active AttrScope."""
    scope = getattr(_local, "scope", None)
    if scope is None:
        scope = _local.scope = AttrScope()
    return scope
