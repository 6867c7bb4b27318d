"""``mx.util``: NumPy-semantics switches and environment helpers of MXNet 1.x.

How NumPy semantics map onto gluonjax
-------------------------------------
Every gluonjax array is a ``jax.Array``, so storage always has NumPy's shape
semantics: ``()`` is a scalar and a ``0`` in a shape is a dimension of size zero.
MXNet 1.x keeps a switch (off by default) under which ``()`` means "unknown
shape" and ``0`` "unknown dimension". In gluonjax that switch (``np_shape``,
``set_np_shape``, ``is_np_shape``) is kept as a flag with MXNet's scoping rules
and is read where MXNet's behaviour depends on it:

* ``nd.save`` writes MXNet's V3 records (NumPy shapes) when it is on, V2 records
  otherwise (as MXNet; a 0-d array, which MXNet cannot save without the switch,
  still gets V3), and ``nd.load`` refuses V3 records with the switch off (unless the file
  holds a 0-d array) and V2 records with it on (scoped), as MXNet does;
* shape inference of symbols reads it to decide what ``0`` and ``()`` mean.

``np_array`` / ``is_np_array`` / ``use_np`` keep MXNet's scoping too; gluonjax has
no separate ``mx.np`` array type, so inside such a scope arrays are still
``NDArray``.

Examples
--------
>>> import gluonjax as mx
>>> mx.is_np_shape()
False
>>> with mx.np_shape(True):
...     mx.is_np_shape()
True
>>> mx.util.getenv("GLUONJAX_SURELY_UNSET") is None
True
"""

from __future__ import annotations

import functools
import inspect
import os
import threading

from .base import ArgumentTypeError, InvalidArgumentError, _ClassPropertyMeta, classproperty

__all__ = [
    "set_np_shape",
    "is_np_shape",
    "np_shape",
    "use_np_shape",
    "np_array",
    "is_np_array",
    "use_np_array",
    "use_np",
    "set_np",
    "reset_np",
    "getenv",
    "setenv",
    "get_gpu_count",
    "get_gpu_memory",
    "set_module",
]

_local = threading.local()
GLOBAL_ON = 2  # MXNet's "global on" state: set for every thread, skips the load checks
_global = {"np_shape": 0}


def _shape_state():
    v = getattr(_local, "np_shape", None)
    return _global["np_shape"] if v is None else v


def set_np_shape(active):
    """Turn NumPy shape semantics on or off for this thread; returns the previous state.

    Parameters
    ----------
    active : bool or int
        ``True``/``False``; ``2`` turns it on for every thread (MXNet's "global on").

    Returns
    -------
    bool
        Whether the semantics were on before.
    """
    if not active and is_np_array():
        raise InvalidArgumentError(
            "set_np_shape(False): NumPy array semantics are still active; leave the "
            "np_array scope (or call mx.util.reset_np()) first"
        )
    prev = bool(_shape_state())
    if active == GLOBAL_ON:
        _global["np_shape"] = GLOBAL_ON
        _local.np_shape = None
    else:
        _local.np_shape = 1 if active else 0
    return prev


class legacy_shapes:
    """A ``with`` scope where ``0`` in a shape means "unknown" again (Gluon's deferred
    parameter shapes are inferred this way in NumPy mode too)."""

    def __enter__(self):
        self._prev = (getattr(_local, "np_shape", None), getattr(_local, "np_array", False))
        _local.np_shape, _local.np_array = 0, False
        return self

    def __exit__(self, *exc):
        _local.np_shape, _local.np_array = self._prev


def is_np_shape():
    """Whether NumPy shape semantics are on (``()`` scalar, ``0`` a zero-size dimension)."""
    return bool(_shape_state())


def np_shape_state():
    """0 (off), 1 (on in this thread) or 2 (on globally, MXNet's "global on")."""
    return _shape_state()


class _ShapeScope:
    def __init__(self, active):
        self._active = active
        self._prev = None

    def __enter__(self):
        if self._active is not None:
            self._prev = set_np_shape(self._active)
        return self

    def __exit__(self, *exc):
        if self._active is not None and self._prev != bool(self._active):
            set_np_shape(self._prev)


def np_shape(active=True):
    """A ``with`` scope that turns NumPy shape semantics on (or off with ``active=False``).

    Examples
    --------
    >>> import gluonjax as mx
    >>> with mx.np_shape(True):
    ...     bool(mx.is_np_shape())
    True
    """
    return _ShapeScope(active)


def _decorate(func, scope, name):
    if inspect.isclass(func):
        for attr, member in inspect.getmembers(
            func, lambda f: inspect.isfunction(f) or inspect.ismethod(f) or isinstance(f, property)
        ):
            if isinstance(member, property):
                setattr(
                    func,
                    attr,
                    property(
                        _decorate(member.__get__, scope, name),
                        member.__set__,
                        member.__delattr__,
                        member.__doc__,
                    ),
                )
            else:
                setattr(func, attr, _decorate(member, scope, name))
        return func
    if callable(func):

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with scope():
                return func(*args, **kwargs)

        return wrapper
    raise ArgumentTypeError(f"{name} decorates classes and callables, not {type(func).__name__}")


def use_np_shape(func):
    """Decorator: run ``func`` (or every method of a class) with NumPy shape semantics on."""
    return _decorate(func, lambda: np_shape(True), "use_np_shape")


class _NumpyArrayScope(metaclass=_ClassPropertyMeta):
    """The scope :func:`np_array` returns (MXNet's ``util._NumpyArrayScope``).

    The NumPy-array switch is per thread: entering a scope sets it for this thread
    only, and ``_NumpyArrayScope._current`` (what MXNet 1.9.1's tests read and assign)
    is this thread's scope.

    Parameters
    ----------
    is_np_array : bool
        Whether NumPy-array semantics are on inside the scope.
    """

    def __init__(self, is_np_array):
        self._is_np_array = bool(is_np_array)
        self._prev = None

    def __enter__(self):
        self._prev = (getattr(_local, "np_array", False), getattr(_local, "np_array_scope", None))
        _local.np_array = self._is_np_array
        _local.np_array_scope = self
        return self

    def __exit__(self, *exc):
        _local.np_array, _local.np_array_scope = self._prev

    @classproperty
    def _current(cls):
        """This thread's innermost scope, or the one last assigned here (a default one
        that says the switch's state when there is neither)."""
        scope = getattr(_local, "np_array_scope", None)
        return scope if scope is not None else _NumpyArrayScope(is_np_array())

    @_current.setter
    def _current(cls, value):
        # MXNet 1.9.1's is_np_array() does not consult an assigned scope, so assigning one
        # records it for this thread without switching the semantics (use np_array/set_np)
        if not isinstance(value, _NumpyArrayScope):
            raise ArgumentTypeError(
                f"_NumpyArrayScope._current must be a _NumpyArrayScope, got {type(value).__name__}"
            )
        _local.np_array_scope = value


_ArrayScope = _NumpyArrayScope


def np_array(active=True):
    """A ``with`` scope for MXNet's NumPy-array semantics (``mx.np.ndarray`` results from
    Gluon blocks; jax's 64-bit types on, so float64/int64 arrays keep their dtype)."""
    return _NumpyArrayScope(active)


def is_np_array():
    """Whether MXNet's NumPy-array semantics are on (``False`` unless inside ``np_array``)."""
    return bool(getattr(_local, "np_array", False))


def use_np_array(func):
    """Decorator: run ``func`` (or every method of a class) inside ``np_array(True)``."""
    return _decorate(func, lambda: np_array(True), "use_np_array")


class _BothScope:
    def __init__(self):
        self._scopes = (np_shape(True), np_array(True))

    def __enter__(self):
        for s in self._scopes:
            s.__enter__()
        return self

    def __exit__(self, *exc):
        for s in reversed(self._scopes):
            s.__exit__(*exc)


def use_np(func):
    """Decorator: NumPy shape and NumPy array semantics both on inside ``func``."""
    return _decorate(func, _BothScope, "use_np")


def set_np(shape=True, array=True):
    """Turn the NumPy semantics on for this thread (``array`` needs ``shape``)."""
    if array and not shape:
        raise InvalidArgumentError("NumPy array semantics need NumPy shape semantics (shape=True)")
    set_np_shape(shape)
    _local.np_array = bool(array)


def reset_np():
    """Turn both NumPy semantics off for this thread."""
    _local.np_array = False
    set_np_shape(False)


def getenv(name):
    """The value of environment variable ``name`` as the process sees it, or None."""
    return os.environ.get(name)


def setenv(name, value):
    """Set (or with ``value=None`` unset) environment variable ``name``."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def get_gpu_count():
    """How many GPUs jax can see."""
    from .context import num_gpus

    return num_gpus()


def get_gpu_memory(gpu_dev_id):
    """``(free, total)`` bytes of GPU ``gpu_dev_id`` as jax reports them."""
    from .context import gpu

    stats = gpu(gpu_dev_id).jax_device.memory_stats() or {}
    total = int(stats.get("bytes_limit", 0))
    return total - int(stats.get("bytes_in_use", 0)), total


def set_module(module):
    """Decorator that sets ``__module__`` of a function or class."""

    def deco(func):
        if module is not None:
            func.__module__ = module
        return func

    return deco
