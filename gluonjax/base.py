"""Exceptions shared by every part of gluonjax.

All errors gluonjax raises on purpose derive from :class:`MXNetError`, as in
MXNet 1.x, so ``except mx.base.MXNetError`` keeps working in old scripts.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = [
    "MXNetError",
    "NotImplementedForSymbol",
    "NotSupportedForSparseNDArray",
    "numeric_types",
    "integer_types",
    "string_types",
    "py_str",
    "mx_real_t",
    "_Null",
    "data_dir",
    "data_dir_default",
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

mx_real_t = np.float32
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
    """A function that exists for NDArray but not for Symbol.

    Parameters
    ----------
    function : callable
        The function that was called.
    alias : str or None
        The operator it stands for.
    *args
        The arguments (only their types are reported).
    """

    def __init__(self, function, alias=None, *args):
        super().__init__()
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self):
        msg = f"Function {self.function}"
        if self.alias:
            msg += f' (namely operator "{self.alias}")'
        if self.args:
            msg += f" with arguments ({', '.join(self.args)})"
        return msg + " is not implemented for Symbol and only available in NDArray."


class NotSupportedForSparseNDArray(MXNetError):
    """A function that exists for dense NDArrays but not for sparse ones."""

    def __init__(self, function, alias, *args):
        super().__init__()
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self):
        msg = f"Function {self.function}"
        if self.alias:
            msg += f' (namely operator "{self.alias}")'
        if self.args:
            msg += f" with arguments ({', '.join(self.args)})"
        return msg + " is not supported for SparseNDArray and only available in NDArray."


# ----------------------------------------------------------------------------- MXNet names
#: Python/NumPy types MXNet treats as numbers (``isinstance(x, numeric_types)``).
numeric_types = (float, int, np.generic)
#: Python/NumPy integer types.
integer_types = (int, np.int32, np.int64)
#: String types.
string_types = (str,)
#: MXNet's default real type.
mx_real_t = np.float32


def py_str(x):
    """Decode bytes from a C API as UTF-8 (MXNet's ``py_str``); str passes through."""
    return x.decode("utf-8") if isinstance(x, (bytes, bytearray)) else x


class _NullType:
    """Placeholder for "argument not given" (MXNet's ``_Null``)."""

    def __repr__(self):
        return "_Null"


_Null = _NullType()


def data_dir_default():
    """``~/.mxnet`` (``%APPDATA%/mxnet`` on Windows): where MXNet keeps downloaded data."""
    if os.name == "nt":
        return os.path.join(os.environ.get("APPDATA", os.path.expanduser("~")), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir():
    """``$MXNET_HOME`` if set, else :func:`data_dir_default`."""
    return os.getenv("MXNET_HOME", data_dir_default())
