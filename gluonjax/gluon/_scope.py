"""MXNet 1.x block naming: ``dense0_``, ``hybridsequential0_dense1_``."""

from __future__ import annotations

import threading

from .. import name as _name
from .parameter_dict import ParameterDict

_local = threading.local()  # .scope: this thread's innermost BlockScope


class BlockScope:
    """The naming scope a block opens with ``with self.name_scope():`` (MXNet's
    ``gluon.block._BlockScope``). The current scope is per thread: blocks created in
    one thread are named after that thread's scopes only."""

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old = None
        self._name_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """(prefix, ParameterDict) for a new block named after ``hint``."""
        current = getattr(_local, "scope", None)
        if current is None:
            if prefix is None:
                prefix = _name.current().get(None, hint) + "_"
            params = (
                ParameterDict(prefix) if params is None else ParameterDict(params.prefix, params)
            )
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old = getattr(_local, "scope", None)
        _local.scope = self
        self._name_scope = _name.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, *exc):
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(*exc)
        self._name_scope = None
        _local.scope = self._old
