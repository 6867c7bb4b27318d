"""Attribute kinds of registry ops: parsing MXNet's python and string forms.

``Attr("shape", ())`` accepts ``(3, 3)``, ``[3, 3]``, ``3`` and ``'(3, 3)'`` (the
form symbol JSON stores); :func:`attr_to_str` writes MXNet's string form back.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base import AttrError, DTypeError

__all__ = ["Attr", "REQUIRED", "attr_to_str", "dtype_of"]

REQUIRED = object()


def _literal(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _to_int(v):
    if isinstance(v, str):
        v = _literal(v.strip())
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)) or (isinstance(v, float) and float(v).is_integer()):
        return int(v)
    raise ValueError(f"expected an integer, got {v!r}")


def _to_float(v):
    if isinstance(v, str):
        low = v.strip().lower()
        if low in ("inf", "+inf", "infinity"):
            return float("inf")
        if low in ("-inf", "-infinity"):
            return float("-inf")
        if low == "nan":
            return float("nan")
        v = _literal(v.strip())
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)):
        raise ValueError(f"expected a number, got {v!r}")
    return float(v)


def _to_number(v):
    """A scalar operand: integers stay integers (exact for integer arrays, as MXNet casts
    the scalar to the array's dtype), other numbers become floats."""
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)) and -(2**31) <= int(v) < 2**31:
        return int(v)
    if isinstance(v, str):
        lit = _literal(v.strip())
        if isinstance(lit, int) and not isinstance(lit, bool) and -(2**31) <= lit < 2**31:
            return lit
    return _to_float(v)


def _to_pairs(v):
    """A tuple of ``(name, string)`` pairs (free-form keyword arguments, e.g. ``Custom``'s)."""
    if isinstance(v, str):
        v = _literal(v.strip())
    if isinstance(v, dict):
        v = sorted(v.items())
    if isinstance(v, (tuple, list)) and all(
        isinstance(p, (tuple, list)) and len(p) == 2 for p in v
    ):
        return tuple((str(k), str(x)) for k, x in v)
    raise ValueError(f"expected ((name, value), ...) pairs, got {v!r}")


def _to_bool(v):
    if isinstance(v, str):
        low = v.strip().lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise ValueError(f"expected True/False, got {v!r}")
    if isinstance(v, (bool, np.bool_, int, np.integer)):
        return bool(v)
    raise ValueError(f"expected a bool, got {v!r}")


def _to_shape(v):
    if isinstance(v, str):
        text = v.strip()
        if text in ("", "()", "[]"):
            return ()
        v = _literal(text.replace("L", "") if text.endswith("L)") else text)
    if isinstance(v, (int, np.integer)):
        return (int(v),)
    if isinstance(v, np.ndarray) and v.ndim <= 1:
        v = v.reshape(-1).tolist()
    if isinstance(v, (tuple, list)):
        return tuple(_to_int(x) for x in v)
    raise ValueError(f"expected a shape like (3, 3), got {v!r}")


def _to_floats(v):
    """A tuple of floats (MXNet's ``Tuple<float>``: ``(0.5, 1)``, ``'[0.5, 1]'``, ``0.5``)."""
    if isinstance(v, str):
        text = v.strip()
        if text in ("", "()", "[]"):
            return ()
        v = _literal(text)
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return (float(v),)
    if isinstance(v, np.ndarray):
        v = v.reshape(-1).tolist()
    if isinstance(v, (tuple, list)):
        return tuple(_to_float(x) for x in v)
    raise ValueError(f"expected a tuple of numbers like (0.5, 1.0), got {v!r}")


def _to_str(v):
    return str(v)


def _to_dtype(v):
    return dtype_of(v).name


def _none_or(conv):
    def parse(v):
        if v is None or (isinstance(v, str) and v.strip() in ("None", "")):
            return None
        return conv(v)

    return parse


def _axis(v):
    """An axis: int, tuple of ints, or None (MXNet writes '()' for 'all axes')."""
    if v is None or (isinstance(v, str) and v.strip() in ("None", "()", "")):
        return None
    if isinstance(v, str):
        v = _literal(v.strip())
    if isinstance(v, (tuple, list)):
        return tuple(_to_int(x) for x in v) if len(v) else None
    return _to_int(v)


_KINDS: dict[str, Callable[[Any], Any]] = {
    "int": _to_int,
    "float": _to_float,
    "number": _to_number,
    "floats": _to_floats,
    "pairs": _to_pairs,
    "bool": _to_bool,
    "shape": _to_shape,
    "str": _to_str,
    "dtype": _to_dtype,
    "int?": _none_or(_to_int),
    "float?": _none_or(_to_float),
    "shape?": _none_or(_to_shape),
    "floats?": _none_or(_to_floats),
    "bool?": _none_or(_to_bool),
    "dtype?": _none_or(_to_dtype),
    "str?": _none_or(_to_str),
    "axis": _axis,
    "raw": lambda v: v,
    "literal": lambda v: _hashable(_literal_str(v) if isinstance(v, str) else v),
}
_KINDS["literal?"] = _KINDS["literal"]  # NumPy's keywords: an explicit None is a value


def _literal_str(v):
    """A string as written in symbol JSON: numbers, tuples, None, booleans are read back;
    other text (dtype names, einsum subscripts like ``'...,...'``) stays a string."""
    out = _literal(v.strip())
    return v if "..." in v or isinstance(out, (set, dict)) else out


def _hashable(v):
    """A NumPy-style argument as a hashable value: lists become tuples, dtypes their names,
    NumPy scalars Python numbers (``literal`` attributes of ``_np_*`` ops)."""
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, np.ndarray):
        return _hashable(v.tolist())
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (type, np.dtype)) and v is not bool and v is not int and v is not float:
        try:
            return np.dtype(v).name
        except TypeError:
            return v
    return v


def attr_to_str(value):
    """MXNet's string form of an attribute value, as written in symbol JSON."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, tuple):
        return "(" + ", ".join(str(x) for x in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, float):
        return repr(value) if not value.is_integer() else str(value)
    return str(value)


@dataclass(frozen=True)
class Attr:
    """One MXNet keyword argument of an op.

    Parameters
    ----------
    kind : str
        ``int``, ``float``, ``number`` (int or float, kept as given), ``bool``,
        ``shape`` (ints), ``floats`` (a tuple of floats), ``pairs``, ``str``, ``dtype``,
        ``axis``; a trailing ``?`` also allows ``None``.
    default : object
        MXNet's default, or ``REQUIRED``.
    choices : tuple, optional
        Allowed values for string attributes.
    static : bool
        Static attributes select the compiled kernel; non-static ones (scalars
        such as ``_plus_scalar``'s ``scalar``) are passed to it as traced values,
        so a new value does not recompile.
    """

    kind: str
    default: Any = REQUIRED
    choices: tuple | None = None
    static: bool = True

    def parse(self, op, name, value):
        try:
            out = _KINDS[self.kind](value)
        except (ValueError, TypeError) as err:
            raise AttrError(
                f"{op}: attribute {name}={value!r} is not a valid {self.kind} ({err})"
            ) from None
        if self.choices is not None and out not in self.choices and out is not None:
            raise AttrError(f"{op}: attribute {name}={value!r} must be one of {list(self.choices)}")
        return out


# ----------------------------------------------------------------------------- dtypes
_DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "int": "int32"}


def dtype_of(value):
    """A numpy dtype from a name, numpy type or jax dtype; raises DTypeError."""
    if isinstance(value, str):
        value = _DTYPE_ALIASES.get(value, value)
    try:
        dt = np.dtype(value)
    except TypeError:
        try:
            import jax.numpy as jnp

            dt = np.dtype(getattr(jnp, str(value)))
        except (TypeError, AttributeError):
            raise DTypeError(f"unknown dtype {value!r}") from None
    return dt
