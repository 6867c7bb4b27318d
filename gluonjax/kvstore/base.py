"""``KVStoreBase``, the store registry, ``TestStore`` and ``create`` (``mx.kv.create``)."""

from __future__ import annotations

import warnings

from ..base import ArgumentTypeError, InvalidArgumentError, MXNetError

__all__ = ["KVStoreBase", "TestStore", "create", "KVStoreError", "KVStoreUnavailableError"]


class KVStoreError(MXNetError, ValueError):
    """A key-value store call with keys or values it cannot take."""


class KVStoreUnavailableError(MXNetError):
    """A store type that gluonjax does not provide (yet)."""


class KVStoreBase:
    """The interface of a key-value store for data-parallel training.

    Subclasses registered with :meth:`register` are made by :func:`create` from
    their lower-cased class name. The built-in store is
    :class:`~gluonjax.kvstore.KVStore`.
    """

    #: the capability :meth:`is_capable` is asked about by the Trainer
    OPTIMIZER = "optimizer"
    kv_registry: dict = {}

    def broadcast(self, key, value, out, priority=0):
        """Initialise ``key`` with ``value`` and copy it into ``out``."""
        raise NotImplementedError()

    def pushpull(self, key, value, out=None, priority=0):
        """Sum ``value`` (a list: over its entries) into the store, then copy the result out."""
        raise NotImplementedError()

    def set_optimizer(self, optimizer):
        """Update stored values with ``optimizer`` on every push."""
        raise NotImplementedError()

    def is_capable(self, capability):
        """Whether this store supports ``capability`` (e.g. :attr:`OPTIMIZER`)."""
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the optimizer states (and with ``dump_optimizer`` the optimizer) to ``fname``."""
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        """Read optimizer states written by :meth:`save_optimizer_states`."""
        raise NotImplementedError()

    @property
    def type(self):
        """The store's type name."""
        raise NotImplementedError()

    @property
    def rank(self):
        """This worker's rank in ``[0, num_workers)``."""
        raise NotImplementedError()

    @property
    def num_workers(self):
        """The number of workers."""
        raise NotImplementedError()

    @staticmethod
    def register(klass):
        """Register a store class; ``create(name)`` then makes it from its lower-cased name.

        Examples
        --------
        >>> import gluonjax as mx
        >>> @mx.kvstore.KVStoreBase.register
        ... class MyStore(mx.kvstore.KVStoreBase):
        ...     pass
        >>> type(mx.kv.create('mystore')).__name__
        'MyStore'
        """
        if not isinstance(klass, type):
            raise ArgumentTypeError(f"KVStoreBase.register takes a class, got {klass!r}")
        name = klass.__name__.lower()
        old = KVStoreBase.kv_registry.get(name)
        if old is not None and old is not klass:
            warnings.warn(
                f"New kvstore {klass.__module__}.{klass.__name__} is overriding existing "
                f"kvstore {old.__module__}.{old.__name__}",
                stacklevel=2,
            )
        KVStoreBase.kv_registry[name] = klass
        return klass


@KVStoreBase.register
class TestStore(KVStoreBase):
    """A minimal store for tests: ``pushpull`` sums, no optimizer support."""

    __test__ = False  # not a pytest test class

    def broadcast(self, key, value, out, priority=0):
        for o in out if isinstance(out, list) else [out]:
            o[:] = value

    def pushpull(self, key, value, out=None, priority=0):
        from ..ndarray import NDArray

        if isinstance(value, NDArray):
            if out is not None:
                for o in out if isinstance(out, list) else [out]:
                    o[:] = value
            return
        ctx = value[0].context
        reduced = value[0].as_in_context(ctx)
        for v in value[1:]:
            reduced = reduced + v.as_in_context(ctx)
        for o in value if out is None else (out if isinstance(out, list) else [out]):
            o[:] = reduced

    @staticmethod
    def is_capable(capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise InvalidArgumentError(f"Unknown capability: {capability}")

    @property
    def type(self):
        return "teststore"

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1

    def set_optimizer(self, optimizer):
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        raise NotImplementedError()


def create(name="local"):
    """A new key-value store.

    Parameters
    ----------
    name : str
        ``'local'`` or ``'device'`` (one process: sums pushed values and keeps them on
        this machine; also MXNet's ``'local_allreduce_cpu'`` style names); ``'nccl'``
        (MXNet's one-process multi-GPU store: here the same as ``'device'``, XLA picks
        the transport); ``'dist_sync'``, ``'dist_device_sync'`` or
        ``'dist_sync_device'`` (synchronous across the processes of a
        ``jax.distributed`` job, see :class:`~gluonjax.kvstore.DistKVStore`);
        ``'horovod'`` (allreduce only, see :class:`~gluonjax.kvstore.Horovod`); or the
        lower-cased class name of a store registered with ``KVStoreBase.register``.
        ``'dist_async'`` raises :class:`~gluonjax.kvstore.AsyncKVStoreError`.

    Returns
    -------
    KVStoreBase

    Examples
    --------
    >>> import gluonjax as mx
    >>> kv = mx.kv.create('local')
    >>> kv.init(3, mx.nd.zeros((2, 2)))
    >>> kv.push(3, [mx.nd.ones((2, 2)), mx.nd.ones((2, 2))])
    >>> out = mx.nd.empty((2, 2)); kv.pull(3, out=out)
    >>> out.asnumpy().tolist()
    [[2.0, 2.0], [2.0, 2.0]]
    """
    if not isinstance(name, str):
        raise ArgumentTypeError(f"name must be a string, got {type(name).__name__}")
    name = name.lower()
    klass = KVStoreBase.kv_registry.get(name)
    if klass is not None:
        return klass()
    if "dist" in name:
        from .dist import DistKVStore, refuse_async

        if "async" in name:
            raise refuse_async(name)
        return DistKVStore(name)
    from .kvstore import KVStore

    return KVStore(name)
