"""``mx.kv`` / ``mx.kvstore``: MXNet's key-value store for data-parallel training.

``create('local')`` and ``create('device')`` give the single-machine store (see
:class:`KVStore`); ``gluon.Trainer`` uses it for ``kvstore=`` and
``update_on_kvstore``. Stores registered with ``KVStoreBase.register`` are made by
name too. ``docs/sparse.md`` describes ``row_sparse_pull``.
"""

from __future__ import annotations

from ._select import create_kvstore, create_sparse_kvstore
from .base import KVStoreBase, KVStoreError, KVStoreUnavailableError, TestStore, create
from .kvstore import KVStore

__all__ = [
    "KVStoreBase",
    "KVStore",
    "TestStore",
    "create",
    "KVStoreError",
    "KVStoreUnavailableError",
    "create_kvstore",
    "create_sparse_kvstore",
]
