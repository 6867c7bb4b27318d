"""The random key state behind ``mx.random`` (the facade re-exports :func:`seed`).

Random operators draw ``fold_in(seed_key, counter)`` inside their compiled kernel,
so taking a fresh key costs no extra dispatch. Each device context has its own
generator: ``seed(n)`` (``ctx='all'``) resets every one of them to ``n``;
``seed(n, ctx=c)`` resets only the generator of ``c``. A random op draws from the
generator of the context it runs on. The streams are jax's (threefry), not
bit-identical to MXNet's.

This module sits in the core layer: ops, ``nd``, ``sym``, hybridized calls and
initializers read keys from it; it imports nothing above ``context``.
"""

from __future__ import annotations

import itertools
import threading

import jax
import numpy as np

__all__ = ["seed", "next_key", "key_and_counter", "host_rng"]

_lock = threading.Lock()
_local = threading.local()
_state = {"key": None, "seed": 0, "counter": 0}
# Context -> its own state after ``seed(n, ctx=c)``; contexts not listed share ``_state``
_ctx_states: dict = {}


def _seed_int(seed_state):
    try:
        return int(seed_state)
    except (TypeError, ValueError):
        from .base import MXNetError

        raise MXNetError(
            f"random.seed: seed must be an integer, got {type(seed_state).__name__} {seed_state!r}"
        ) from None


def seed(seed_state, ctx="all"):
    """Reset the generators: the same seed gives the same random numbers.

    Parameters
    ----------
    seed_state : int
        The seed (any Python int; negative and 64-bit values are fine).
    ctx : Context or 'all'
        ``'all'`` (default) seeds every context's generator; a Context seeds only
        the generator random ops running on that context draw from.

    Examples
    --------
    >>> import gluonjax as mx
    >>> mx.random.seed(7); a = mx.nd.random.uniform(shape=(2,)).asnumpy()
    >>> mx.random.seed(7); b = mx.nd.random.uniform(shape=(2,)).asnumpy()
    >>> bool((a == b).all())
    True
    """
    from ._data import rng as _host_rng  # the image ops' host draws (flips, jitter)

    value = _seed_int(seed_state)
    _host_rng.seed(value)
    with _lock:
        if isinstance(ctx, str):
            if ctx != "all":
                from .base import MXNetError

                raise MXNetError(f"random.seed: ctx must be a Context or 'all', got {ctx!r}")
            _ctx_states.clear()
            target = _state
        else:
            from .context import Context

            target = _ctx_states.setdefault(Context(ctx), {})
        target["seed"] = value
        target["key"] = None
        target["counter"] = 0


def _stream():
    """The state random ops on the current context draw from."""
    if _ctx_states:
        ctx = getattr(_local, "ctx", None)
        if ctx is None:
            from .context import current_context

            ctx = current_context()
        st = _ctx_states.get(ctx)
        if st is not None:
            return st
    return _state


class drawing_on:
    """``with drawing_on(ctx):`` random ops inside draw from ``ctx``'s generator."""

    def __init__(self, ctx):
        self._ctx = ctx
        self._old = None

    def __enter__(self):
        self._old = getattr(_local, "ctx", None)
        if self._ctx is not None:
            from .context import Context

            _local.ctx = Context(self._ctx)
        return self

    def __exit__(self, *exc):
        _local.ctx = self._old


def _make_key(value):
    if 0 <= value < 2**32:
        return _seed_key(value)
    if -(2**31) <= value < 0:
        return jax.random.PRNGKey(value)
    v = value % 2**64
    return jax.device_put(np.array([v >> 32, v & 0xFFFFFFFF], dtype=np.uint32))


def key_and_counter():
    """``(seed_key, counter)``: the arguments a random kernel folds into one key."""
    traced = getattr(_local, "traced", None)
    if traced is not None:
        traced[2].used = True
        if traced[0] is None:
            raise NeedsKey()
        return traced[0], np.uint32(next(traced[1]))
    st = _stream()
    key, n = _peek(st)
    st["counter"] = n + 1
    return key, np.uint32(n & 0xFFFFFFFF)


def _peek(st):
    key = st["key"]
    if key is None:
        with _lock:
            key = st["key"] = _make_key(st["seed"])
    return key, st["counter"]


def peek():
    """The ``(seed_key, counter)`` the next draw will use, without advancing."""
    return _peek(_stream())


def _seed_key(seed):
    """``jax.random.PRNGKey(seed)`` (threefry's raw key ``[0, seed]`` for a 32-bit seed),
    built on the host: compiling jax's seeding kernel for it costs more than the rest of
    a small model's first step."""
    seed = int(seed)
    if not 0 <= seed < 2**32:  # jax's own conversion of other seeds: let it decide
        return jax.random.PRNGKey(seed)
    return jax.device_put(np.array([0, seed], np.uint32))  # compiles nothing


def advance():
    """Consume one draw (after a compiled call that turned out to use randomness)."""
    _stream()["counter"] += 1


def host_rng():
    """A numpy generator for one draw on the host, seeded by ``mx.random.seed`` and the
    draw's number (initializers use it: filling a parameter compiles nothing)."""
    st = _stream()
    _, n = key_and_counter()
    return np.random.default_rng([st["seed"] & 0xFFFFFFFF, int(n)])


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
