"""``mx.kv`` / ``mx.kvstore``: MXNet's key-value store for data-parallel training.

``create('local')`` and ``create('device')`` give the single-machine store (see
:class:`KVStore`); ``create('dist_sync')`` the store across the processes of a
``jax.distributed`` job (:class:`DistKVStore`, started by ``python -m
gluonjax.launch``; see ``docs/scaling.md``). ``gluon.Trainer`` uses them for
``kvstore=`` and ``update_on_kvstore``. Stores registered with ``KVStoreBase.register`` are made by
name too. ``docs/sparse.md`` describes ``row_sparse_pull``.
"""

from __future__ import annotations

from ._select import create_kvstore, create_sparse_kvstore
from .base import KVStoreBase, KVStoreError, KVStoreUnavailableError, TestStore, create
from .dist import AsyncKVStoreError, DistKVStore, Horovod
from .kvstore import KVStore

__all__ = [
    "KVStoreBase",
    "KVStore",
    "DistKVStore",
    "Horovod",
    "AsyncKVStoreError",
    "TestStore",
    "create",
    "KVStoreError",
    "KVStoreUnavailableError",
    "create_kvstore",
    "create_sparse_kvstore",
]
