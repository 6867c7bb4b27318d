"""Bounded caches of compiled programs, :func:`clear_caches`, and the process state.

Module-level caches in gluonjax hold compiled programs keyed by structure
(op attributes, shapes, ids of signatures), never user objects: a dropped model
is freed. Each cache is bounded (least recently used entries go first) and
registered here so :func:`clear_caches` empties them all, with jax's own.
"""

from __future__ import annotations

import functools
import weakref
from collections import OrderedDict

__all__ = ["LRU", "memo", "clear_caches", "PROCESS"]

_ALL = weakref.WeakSet()  # every live LRU (a model's own caches die with it)


class LRU:
    """A dict-like cache that keeps the ``maxsize`` most recently used entries.

    Parameters
    ----------
    maxsize : int
    name : str
        For :func:`cache_info`.
    """

    __slots__ = ("maxsize", "name", "_d", "__weakref__")

    def __init__(self, maxsize, name):
        self.maxsize, self.name = maxsize, name
        self._d = OrderedDict()
        _ALL.add(self)

    def get(self, key):
        d = self._d
        hit = d.get(key)
        if hit is not None:
            d.move_to_end(key)
        return hit

    def put(self, key, value):
        d = self._d
        d[key] = value
        d.move_to_end(key)
        if len(d) > self.maxsize:
            d.popitem(last=False)
        return value

    def discard(self, key):
        self._d.pop(key, None)

    def clear(self):
        self._d.clear()

    def __len__(self):
        return len(self._d)


class _Process:
    """Process-wide flags, version counters and hooks: one object, not module-level lists.

    Attributes
    ----------
    defer : bool
        Deferred execution under ``record()`` (``autograd.set_deferral``).
    backward : callable or None
        ``autograd.backward``, installed by the autograd engine at import, so that
        ``NDArray.backward`` (a lower layer) reaches it without importing it.
    structure_epoch : int
        Bumped when a block's children or parameters are re-registered.
    param_version : int
        Bumped after any parameter array's value (or class) is written.
    layout_version : int
        Bumped when a parameter array changes shape, dtype or context.
    mult_version : int
        Bumped when a parameter's ``lr_mult`` or ``wd_mult`` is set (optimizers' caches).
    auto_jit : bool
        Leaf layers compile themselves (``summary()`` turns it off to see every layer).
    sparse_types : tuple
        ``(BaseSparseNDArray,)`` once a sparse array exists: until then no op call
        looks for one.
    several_devices : bool or None
        Whether this process has several devices (None until first asked).
    backwards : int
        The number of ``backward`` calls so far (a ``grad_req='null'`` variable's
        ``.grad`` is None after one, as in MXNet).
    compile_setup : bool
        Whether ``_compile.setup`` ran; ``compile_cache`` is the persistent cache
        directory it chose (or None).
    """

    __slots__ = (
        "defer", "backward", "structure_epoch", "param_version", "layout_version",
        "mult_version", "auto_jit", "sparse_types", "several_devices", "compile_setup",
        "compile_cache", "backwards",
    )  # fmt: skip

    def __init__(self):
        import os

        self.defer = os.environ.get("GLUONJAX_DEFER", "1").strip().lower() not in (
            "0", "false", "off", "no",
        )  # fmt: skip
        self.backward = None
        self.structure_epoch = self.param_version = self.layout_version = 0
        self.mult_version = 0
        self.auto_jit = True
        self.sparse_types = ()
        self.several_devices = None
        self.compile_setup = False
        self.compile_cache = None
        self.backwards = 0


PROCESS = _Process()


def memo(maxsize, name):
    """Decorator: ``functools.lru_cache`` on a registered :class:`LRU` (hashable arguments;
    results must not be None), so :func:`clear_caches` empties it too."""

    def deco(fn):
        cache = LRU(maxsize, name)

        @functools.wraps(fn)
        def cached(*args):
            hit = cache.get(args)
            return cache.put(args, fn(*args)) if hit is None else hit

        cached.cache = cache
        return cached

    return deco


def cache_info():
    """``{name: entries}`` of every registered cache (for tests and debugging)."""
    info = {}
    for c in list(_ALL):
        info[c.name] = info.get(c.name, 0) + len(c)
    return info


def clear_caches():
    """Empty gluonjax's caches of compiled programs, and jax's own.

    Models keep their own compiled forwards (dropped with the model); this frees
    the shared ones: op kernels, fused backward plans, optimizer updates.

    Examples
    --------
    >>> import gluonjax as mx
    >>> mx.clear_caches()
    """
    for c in list(_ALL):
        c.clear()
    import jax

    jax.clear_caches()
