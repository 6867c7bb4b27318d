"""Views: NDArrays that share memory with another NDArray, as MXNet's views do.

MXNet's basic indexing of a contiguous block (``a[1]``, ``a[2:4]``), ``reshape``
and ``flatten``/``squeeze``/``expand_dims(inplace=True)`` return arrays sharing
memory with the original: writing either one shows in the other. gluonjax arrays
are immutable jax arrays behind mutable handles, so a :class:`View` keeps its
base array and two functions instead: reading computes the view from the base's
current value (cached until the base changes), writing puts the new value into
the base. Under ``autograd.record()`` these functions return recorded copies
instead (MXNet records the slice/reshape there too).

Examples
--------
>>> import gluonjax as mx
>>> a = mx.nd.zeros((2, 3))
>>> row = a[1]
>>> row[:] = 7
>>> a.asnumpy().tolist()
[[0.0, 0.0, 0.0], [7.0, 7.0, 7.0]]
>>> a[1, 0] = -1
>>> row.asnumpy().tolist()
[-1.0, 7.0, 7.0]
"""

from __future__ import annotations

from .ndarray import NDArray

__all__ = ["View", "reshape_view", "alias_view", "memory_span"]

_SLOT = NDArray.__dict__["_data"]


class View(NDArray):
    """An NDArray whose value is a window on ``base`` (see the module docstring).

    Parameters
    ----------
    base : NDArray
        The array whose memory the view shares.
    get : callable
        ``get(base_value) -> view_value`` (jax arrays).
    put : callable
        ``put(base_value, view_value) -> new base_value``.
    window : (int, int), optional
        ``(offset, size)``: the elements of ``base`` (C order) the view covers; all of them
        by default. :func:`memory_span` reads it (``np.shares_memory``).
    """

    __slots__ = ()

    def __init__(self, base, get, put, window=None):
        d = self.__dict__
        d["_base"], d["_get"], d["_put"] = base, get, put
        d["_cache"] = None
        d["_window"] = window

    def _read(self):
        d = self.__dict__
        b = d["_base"]._data
        c = d["_cache"]
        if c is None or c[0] is not b:
            c = d["_cache"] = (b, d["_get"](b))
        return c[1]

    def _write(self, value):
        d = self.__dict__
        base = d["_base"]
        cur = base._data
        if value.shape != self.shape:
            value = value.reshape(self.shape)
        if value.dtype != cur.dtype:
            value = value.astype(cur.dtype)
        new = d["_put"](cur, value)
        base._data = new
        base._node = None
        d["_cache"] = (new, value)

    _data = property(_read, _write)

    @property
    def shape(self):
        return tuple(self._read().shape)

    @property
    def base(self):
        """The NDArray this view shares memory with."""
        return self.__dict__["_base"]


def memory_span(x):
    """``(root, start, stop)``: the array owning ``x``'s memory and the C-order element range
    of it that ``x`` covers. Two arrays share memory when their roots are the same array and
    their ranges overlap (views of contiguous blocks cover one range each)."""
    x = _state(x)
    if not isinstance(x, View):
        return x, 0, x.size
    root, start, _ = memory_span(x.base)
    window = x.__dict__.get("_window")
    offset, size = window if window is not None else (0, x.base.size)
    return root, start + offset, start + offset + size


def alias_view(base, cls=None):
    """A view of all of ``base`` (``as_np_ndarray``/``as_nd_ndarray``: a class change that
    shares memory, as MXNet's)."""
    view = (cls or View)(base, _same, _replace)
    _state(view).__dict__["_cache"] = (base._data, base._data)
    return view


def _state(view):
    """The ``View`` holding a view's window (the view itself, or what its slot holds)."""
    if isinstance(view, View):
        return view
    v = _SLOT.__get__(view)
    return v if isinstance(v, View) else view


def _same(b):
    return b


def _replace(b, v):
    return v


def reshape_view(base, shape):
    """A view of ``base`` with another shape (same number of elements)."""
    shape = tuple(int(s) for s in shape)
    old = base.shape
    return View(base, lambda b: b.reshape(shape), lambda b, v: v.reshape(old))
