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
    "IndexOutOfRangeError",
    "DuplicateParameterError",
    "ControlFlowError",
    "ForwardOutputError",
    "InputWriteError",
    "BlockInputError",
    "InvalidArgumentError",
    "ArgumentTypeError",
    "EstimatorSetupError",
    "StaleGradientError",
    "FileError",
    "MissingFileError",
    "IsADirectoryFileError",
    "NotADirectoryFileError",
    "FilePermissionError",
    "file_error",
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


class HostOnlyError(HybridizationError):
    """A function that needs its input's values (its output's shape depends on them:
    ``np.unique``, ``np.nonzero``, boolean masks...) met a traced value. A hybridized
    block that calls one runs op by op instead (MXNet runs such ops in its graphs)."""


class FileFormatError(MXNetError, ValueError):
    """A file that is not a valid gluonjax/MXNet file (or is damaged)."""


class ParameterMismatchError(MXNetError, KeyError, ValueError, AssertionError):
    """Parameters in a file do not match the block they are loaded into (MXNet 1.9.1
    fails an ``assert`` for a missing one and raises ``ValueError`` for an extra one)."""

    def __str__(self):  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class IndexOutOfRangeError(MXNetError, IndexError):
    """An index past the end of an axis (``a[5]`` on 2 rows, ``take(..., mode='raise')``,
    an ``Embedding`` index ``>= input_dim``). MXNet raises ``IndexError``."""


class DuplicateParameterError(MXNetError, ValueError, AssertionError):
    """Two different Parameters with one name in one ``collect_params()`` scope
    (MXNet 1.9.1 fails an ``assert`` there, so ``AssertionError`` is a base too)."""


class ControlFlowError(MXNetError, ValueError, AssertionError):
    """A misused ``contrib.foreach`` / ``while_loop`` / ``cond``: no ``max_iterations``,
    loop states that change number or format, a data array or state the loop body does
    not use. MXNet 1.9.1 raises ``ValueError`` or fails an ``assert`` there."""


class ForwardOutputError(MXNetError, TypeError, ValueError):
    """``forward``/``hybrid_forward`` returned something that is not an NDArray/Symbol
    (None, a Python number, a numpy array). MXNet raises ``ValueError`` when hybridized."""


class BlockInputError(MXNetError, TypeError, ValueError):
    """A HybridBlock called with a numpy array (MXNet raises ``ValueError``)."""


class InputWriteError(MXNetError, ValueError):
    """A hybridized forward wrote in place into one of its inputs."""


class InvalidArgumentError(MXNetError, ValueError):
    """An argument with a value the function cannot take (``trainer.step(0)``, a
    malformed regular expression in ``collect_params``)."""


class StaleGradientError(MXNetError, UserWarning):
    """``Trainer.step`` found a gradient that no backward updated since the last step
    (MXNet raises ``UserWarning`` as an exception there)."""


class ArgumentTypeError(MXNetError, TypeError, ValueError):
    """An argument of a type the function cannot take (MXNet raises ``TypeError`` or
    ``ValueError`` there, depending on the function: both are bases)."""


class EstimatorSetupError(MXNetError, ValueError, AssertionError):
    """An Estimator or event-handler setting that cannot work: a context this machine
    does not have, a ``CheckpointHandler`` resuming with another period type than the
    fit's (MXNet 1.9.1 fails an ``assert`` there, so ``AssertionError`` is a base too)."""


class FileError(MXNetError, OSError):
    """A file could not be read or written; names the path the user gave.

    ``errno``, ``strerror`` and ``filename`` are set as on ``OSError``.
    """

    def __init__(self, message, errno=None, strerror=None, filename=None):
        RuntimeError.__init__(self, message)
        self.errno, self.strerror, self.filename = errno, strerror, filename

    def __str__(self):
        return str(self.args[0]) if self.args else ""


class MissingFileError(FileError, FileNotFoundError):
    """The file (or its folder) does not exist."""


class IsADirectoryFileError(FileError, IsADirectoryError):
    """A folder was given where a file is needed."""


class NotADirectoryFileError(FileError, NotADirectoryError):
    """A part of the path that should be a folder is a file."""


class FilePermissionError(FileError, PermissionError):
    """The file or its folder may not be read or written."""


_FILE_ERRORS = (
    (FileNotFoundError, MissingFileError, "check the path, or create its folder first"),
    (IsADirectoryError, IsADirectoryFileError, "give a file name, not a folder"),
    (NotADirectoryError, NotADirectoryFileError, "a part of the path is a file, not a folder"),
    (PermissionError, FilePermissionError, "check the file's and its folder's permissions"),
)


def file_error(err, path, action):
    """The :class:`FileError` for an ``OSError`` ``err`` met while ``action`` ``path``.

    The message names ``path`` (the user's, never a temporary file) and the fix.

    Parameters
    ----------
    err : OSError
        The error the OS raised.
    path : str or os.PathLike
        The path the user gave.
    action : str
        What was being done, e.g. ``"reading"``, ``"writing"``.

    Examples
    --------
    >>> e = file_error(FileNotFoundError(2, "No such file or directory"), "a/b.params", "reading")
    >>> isinstance(e, FileNotFoundError), e.filename
    (True, 'a/b.params')
    """
    if isinstance(err, FileError):
        return err
    path = os.fspath(path)
    cls, fix = FileError, "check the path and the disk"
    for base, sub, hint in _FILE_ERRORS:
        if isinstance(err, base):
            cls, fix = sub, hint
            break
    why = err.strerror or str(err)
    return cls(f"{action} {path!r} failed: {why}; {fix}", err.errno, err.strerror, path)


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


def _as_list(obj):
    """``obj`` itself if it is a list or tuple, else ``[obj]`` (MXNet's ``_as_list``).

    Examples
    --------
    >>> _as_list(3), _as_list((1, 2))
    ([3], (1, 2))
    """
    return obj if isinstance(obj, (list, tuple)) else [obj]


class classproperty:  # noqa: N801 - MXNet's name
    """A property of a class (MXNet's ``classproperty``): ``Cls.name`` calls the getter
    with the class. On a class whose metaclass is :class:`_ClassPropertyMeta`,
    ``Cls.name = value`` calls the setter (MXNet's thread-local ``current`` scopes).

    Parameters
    ----------
    fget : callable
        ``fget(cls)``, the value.
    fset : callable, optional
        ``fset(cls, value)``; add it with ``@prop.setter``.

    Examples
    --------
    >>> class Counter(metaclass=_ClassPropertyMeta):
    ...     _n = [0]
    ...     @classproperty
    ...     def n(cls):
    ...         return cls._n[0]
    ...     @n.setter
    ...     def n(cls, value):
    ...         cls._n[0] = value
    >>> Counter.n = 3
    >>> Counter.n, Counter._n
    (3, [3])
    """

    def __init__(self, fget, fset=None):
        self.fget = fget
        self.fset = fset
        self.__doc__ = getattr(fget, "__doc__", None)

    def __get__(self, obj, owner=None):
        return self.fget(owner if owner is not None else type(obj))

    def setter(self, fset):
        """A copy of this property with ``fset`` as its setter."""
        return type(self)(self.fget, fset)


class _ClassPropertyMeta(type):
    """Metaclass that sends ``Cls.name = value`` to a :class:`classproperty`'s setter."""

    def __setattr__(cls, name, value):
        for klass in cls.__mro__:
            if name in klass.__dict__:
                prop = klass.__dict__[name]
                if isinstance(prop, classproperty):
                    if prop.fset is None:
                        raise AttributeError(f"{cls.__name__}.{name} is a read-only class property")
                    prop.fset(cls, value)
                    return
                break
        super().__setattr__(name, value)


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
