"""Global random state: ``mx.random.seed(n)`` makes every random op reproducible.

Random operators draw ``fold_in(seed_key, counter)`` inside their compiled kernel,
so taking a fresh key costs no extra dispatch. ``gluonjax.nd.random`` holds the
sampling functions (``normal``, ``uniform``, ``randint``, ``shuffle``...).
"""

from __future__ import annotations

import itertools
import threading

import jax
import numpy as np

__all__ = ["seed", "next_key", "key_and_counter"]

_lock = threading.Lock()
_local = threading.local()
_state = {"key": None, "seed": 0, "counter": 0}


def seed(seed_state, ctx="all"):
    """Reset the global generator: the same seed gives the same random numbers.

    Parameters
    ----------
    seed_state : int
        The seed.
    ctx : Context or 'all'
        Accepted for MXNet compatibility; one generator serves every device.

    Examples
    --------
    >>> import gluonjax as mx
    >>> mx.random.seed(7); a = mx.nd.random.uniform(shape=(2,)).asnumpy()
    >>> mx.random.seed(7); b = mx.nd.random.uniform(shape=(2,)).asnumpy()
    >>> bool((a == b).all())
    True
    """
    from ._data import rng as _host_rng  # the image ops' host draws (flips, jitter)

    _host_rng.seed(seed_state)
    with _lock:
        _state["seed"] = int(seed_state)
        _state["key"] = None
        _state["counter"] = 0


def key_and_counter():
    """``(seed_key, counter)``: the arguments a random kernel folds into one key."""
    traced = getattr(_local, "traced", None)
    if traced is not None:
        traced[2].used = True
        if traced[0] is None:
            raise NeedsKey()
        return traced[0], np.uint32(next(traced[1]))
    key, n = peek()
    _state["counter"] = n + 1
    return key, np.uint32(n & 0xFFFFFFFF)


def peek():
    """The ``(seed_key, counter)`` the next draw will use, without advancing."""
    key = _state["key"]
    if key is None:
        with _lock:
            key = _state["key"] = jax.random.PRNGKey(_state["seed"])
    return key, _state["counter"]


def advance():
    """Consume one draw (after a compiled call that turned out to use randomness)."""
    _state["counter"] += 1


def next_key():
    """A fresh jax PRNG key (one dispatch; kernels use :func:`key_and_counter`)."""
    key, counter = key_and_counter()
    return jax.random.fold_in(key, counter)


class NeedsKey(Exception):
    """Raised while tracing a function compiled without a random key that needs one."""


class traced_key:
    """Inside a hybridized trace, random ops draw from ``fold_in(key, counter)``.

    The key is an argument of the compiled function, so each call gets fresh
    randomness without retracing.
    """

    def __init__(self, seed_key, counter):
        self._key = None if seed_key is None else jax.random.fold_in(seed_key, counter)
        self._old = None
        self.used = False

    def __enter__(self):
        self._old = getattr(_local, "traced", None)
        _local.traced = (self._key, itertools.count(), self)
        return self

    def __exit__(self, *exc):
        _local.traced = self._old
