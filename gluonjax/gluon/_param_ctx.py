"""Parameters on several contexts: one array per context, as MXNet keeps them.

``p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])`` gives ``p`` one array per context:
``p.data(ctx)`` is that context's array, ``list_data()``/``list_grad()`` all of
them, each with its own gradient buffer (a forward on an input of context ``c``
uses ``data(c)``, so its backward writes ``grad(c)``). A Trainer sums the
gradients of the contexts (through its key-value store, as in MXNet) and writes
the same new value into every copy. The copies of a logical context (``cpu(i)``
beyond jax's devices, see ``gluonjax.context``) share their device's memory.
"""

from __future__ import annotations

import jax
import numpy as np

from ..base import MXNetError
from ..context import Context, current_context
from ._mesh import mesh_devices, mesh_of, replicated

__all__ = ["ContextParameterMixin"]


def as_context_list(ctx):
    """``ctx`` (None, a Context, or a list of them) as a non-empty list of Contexts."""
    if ctx is None:
        return [current_context()]
    if isinstance(ctx, (list, tuple)):
        if not ctx:
            raise MXNetError("a Parameter's context list cannot be empty")
        return [c if isinstance(c, Context) else Context(c) for c in ctx]
    return [ctx if isinstance(ctx, Context) else Context(ctx)]


def place(value, ctx):
    """``value`` (a jax array) on ``ctx``'s device."""
    dev = ctx.jax_device
    devs = getattr(value, "devices", None)
    if devs is not None and devs() == {dev}:
        return value
    return jax.device_put(value, dev)


class ContextParameterMixin:
    """The context half of :class:`~gluonjax.gluon.Parameter`.

    ``_ctx_list`` lists the contexts; ``_data`` is the first one's array and
    ``_copies`` the others', in order (empty on one context).
    """

    _ctx_list = None
    _copies = ()

    def _arrays(self):
        """Every context's array, in ``list_ctx()`` order."""
        return [self._data, *self._copies]

    def _tag(self, arr, ctx):
        arr._ctx = ctx if ctx.is_logical else None
        return arr

    def _sync_copies(self):
        """Make one array per context after the first one's value was set.

        On distinct real devices the arrays are the parts of ONE replicated array over
        their mesh (one transfer to every device; see ``_mesh``).
        """
        ctxs = self._ctx_list or [current_context()]
        self._tag(self._data, ctxs[0])
        value = self._data._data
        devices = mesh_devices(ctxs) if len(ctxs) > 1 else None
        if devices is not None and isinstance(value, jax.Array):
            whole = jax.device_put(value, replicated(mesh_of(devices)))
            parts = [s.data for s in whole.addressable_shards]
            self._data._data = parts[0]
        else:
            parts = None
        copies = list(self._copies)
        for k, ctx in enumerate(ctxs[1:]):
            new = parts[k + 1] if parts is not None else place(value, ctx)
            if k < len(copies):
                copies[k]._data = new
            else:
                copies.append(self._tag(type(self._data)(new), ctx))
        self._copies = tuple(copies[: len(ctxs) - 1])

    def _place_grads(self):
        """On several contexts, every zero gradient buffer on its context's device (as
        ``grad(ctx).context`` says); one context keeps its lazy host zeros."""
        ctxs = self._ctx_list
        for d, ctx in zip(self._arrays(), ctxs):
            g = d._grad
            if g is None or ctx.is_logical or not isinstance(g._data, np.ndarray):
                continue
            old = g._data
            g._data = place(old, ctx)
            if self._grad_token is old:
                self._grad_token = g._data

    def _index_of(self, ctx, what):
        ctxs = self._ctx_list or [current_context()]
        if ctx is None:
            if len(ctxs) == 1:
                return 0
            ctx = current_context()
        ctx = ctx if isinstance(ctx, Context) else Context(ctx)
        for k, c in enumerate(ctxs):
            if c == ctx:
                return k
        if len(ctxs) == 1 and not ctx.is_logical and not ctxs[0].is_logical:
            return 0  # one context: a plain device name of it (MXNet allows cpu vs cpu(0))
        raise MXNetError(
            f"Parameter '{self.name}' was not initialized on context {ctx} ({what}). It was "
            f"only initialized on {ctxs}."
        )

    def _array_for(self, ctx, what="data"):
        k = self._index_of(ctx, what)
        return self._data if k == 0 else self._copies[k - 1]

    def _array_for_input(self, ctx):
        """The array a forward on an input of context ``ctx`` uses (one context: the only
        one, whatever the input's)."""
        if not self._copies:
            return self._data
        return self._array_for(ctx, "the context of the block's input")
