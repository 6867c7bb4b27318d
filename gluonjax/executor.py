"""``mx.executor``: :class:`Executor`, a symbol graph bound to arrays (see
:mod:`gluonjax.symbol.executor`, where it lives beside ``Symbol.bind``)."""

from .symbol.executor import BindError, Executor

__all__ = ["Executor", "BindError"]
