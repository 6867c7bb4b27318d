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

__all__ = ["AttrScope", "current"]

_local = threading.local()


class AttrScope:
    """Attach string attributes (``ctx_group``, ``lr_mult``...) to new symbols."""

    # control-flow subgraph name -> how many were made (``foreach0``, ``foreach1``...)
    _subgraph_names = collections.defaultdict(int)

    def __init__(self, **kwargs):
        for v in kwargs.values():
            if not isinstance(v, str):
                from .base import MXNetError

                raise MXNetError("AttrScope values must be strings")
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


def current():
    """The active AttrScope."""
    scope = getattr(_local, "scope", None)
    if scope is None:
        scope = _local.scope = AttrScope()
    return scope
