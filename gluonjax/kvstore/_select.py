"""Choosing the store for training: MXNet's ``model._create_kvstore`` rules.

``gluon.Trainer`` and the Module API ask these which store to use (if any) and
whether the store or the trainer applies the optimizer (``update_on_kvstore``).
"""

from __future__ import annotations

import os

import numpy as np

from ..base import ArgumentTypeError
from .base import KVStoreBase, KVStoreError, create

__all__ = ["create_kvstore", "create_sparse_kvstore", "update_on_kvstore_default"]


def update_on_kvstore_default():
    """``MXNET_UPDATE_ON_KVSTORE`` (default 1): whether stores apply the optimizer."""
    return bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))


def create_kvstore(kvstore, num_device, arg_params):
    """``(store or None, update_on_kvstore)`` for dense weights on ``num_device`` devices.

    A name makes a store only for several devices (or a multi-process type: 'dist_*',
    'horovod'); one device trains without one. A 'local' store of a parameter over
    16M elements lets the trainer update (as MXNet). ``update_on_kvstore`` is False
    without a store or when the store cannot run an optimizer.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax.kvstore import create_kvstore
    >>> create_kvstore('device', 1, {})
    (None, False)
    >>> kv, on_kv = create_kvstore('device', 2, {'w': mx.nd.zeros((2,))})
    >>> kv.type, on_kv
    ('device', True)
    """
    update_on_kvstore = update_on_kvstore_default()
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore and kvstore != "horovod":
            kv = None  # one device in one process needs no store
        else:
            kv = create(kvstore)
            if kvstore == "local":
                sizes = [int(np.prod(p.shape)) for p in arg_params.values()]
                if sizes and max(sizes) > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise ArgumentTypeError(
            f"kvstore must be KVStore, str or None, got {type(kvstore).__name__}"
        )
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= bool(kv.is_capable(KVStoreBase.OPTIMIZER))
    return kv, update_on_kvstore


def create_sparse_kvstore(kvstore):
    """``(store, True)`` for training row_sparse weights: the store applies the optimizer."""
    if isinstance(kvstore, KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        kv = create(kvstore)
    else:
        raise ArgumentTypeError(
            f"Cannot create '{kvstore}' KVStore with row_sparse parameters. The type must be "
            f"KVStore or str."
        )
    if not kv.is_capable(KVStoreBase.OPTIMIZER):
        raise KVStoreError(
            f"KVStore with sparse weight requires optimizer support. However, {type(kv).__name__} "
            f"does not support optimizer. Please consider other kvstore backends (e.g. "
            f"'device') instead."
        )
    return kv, True
