"""Exceptions shared by every part of gluonjax.

All errors gluonjax raises on purpose derive from :class:`MXNetError`, as in
MXNet 1.x, so ``except mx.base.MXNetError`` keeps working in old scripts.
"""

from __future__ import annotations

import numpy as _np

__all__ = [
    "MXNetError",
    "OpError",
    "ShapeError",
    "AttrError",
    "DTypeError",
    "ContextError",
    "DeferredInitializationError",
    "HybridizationError",
    "FileFormatError",
    "ParameterMismatchError",
    "NotImplementedForSymbol",
    "mx_real_t",
]

mx_real_t = _np.float32
"""MXNet's default real type (``float32``)."""


class MXNetError(RuntimeError):
    """Base class of every error gluonjax raises (MXNet's ``MXNetError``)."""


class OpError(MXNetError, ValueError):
    """An operator was called with inputs or attributes it cannot take."""


class ShapeError(OpError):
    """Input shapes do not fit the operator or layer."""


class AttrError(OpError, TypeError):
    """An unknown, missing or malformed operator attribute."""


class DTypeError(OpError, TypeError):
    """A dtype the operator does not support, or an unknown dtype name."""


class ContextError(MXNetError):
    """A device context that does not exist on this machine."""


class DeferredInitializationError(MXNetError):
    """A parameter's data was used before its shape was known."""


class HybridizationError(MXNetError):
    """Python code inside a hybridized forward that a trace cannot follow."""


class FileFormatError(MXNetError, ValueError):
    """A file that is not a valid gluonjax/MXNet file (or is damaged)."""


class ParameterMismatchError(MXNetError, KeyError):
    """Parameters in a file do not match the block they are loaded into."""

    def __str__(self):  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class NotImplementedForSymbol(MXNetError):
    """An NDArray-only operation (``bool()``, ``asnumpy()``...) applied to a declarative
    Symbol, which has no value.

    Parameters
    ----------
    function : callable or str
        What was called.
    alias : str, optional
        The operator or Python name the user wrote (``'bool'``, ``'+'``).
    """

    def __init__(self, function, alias=None, *args):
        super().__init__(function, alias, *args)
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args = tuple(str(type(a)) for a in args)

    def __str__(self):
        msg = f"Function {self.function}"
        if self.alias:
            msg += f' (namely operator "{self.alias}")'
        if self.args:
            msg += " with arguments (" + ", ".join(self.args) + ")"
        return msg + " is not implemented for Symbol and only available in NDArray."
