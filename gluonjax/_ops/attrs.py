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
    if isinstance(v, (tuple, list)):
        return tuple(_to_int(x) for x in v)
    raise ValueError(f"expected a shape like (3, 3), got {v!r}")


def _to_str(v):
    return str(v)


def _to_floats(v):
    """A tuple of floats from a number, a sequence or MXNet's string form '(0.5, 0.2)'."""
    if isinstance(v, str):
        v = _literal(v.strip())
    if isinstance(v, (int, float, np.number)):
        return (float(v),)
    return tuple(_to_float(x) for x in v)


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
    "bool": _to_bool,
    "shape": _to_shape,
    "str": _to_str,
    "floats": _to_floats,
    "dtype": _to_dtype,
    "int?": _none_or(_to_int),
    "float?": _none_or(_to_float),
    "shape?": _none_or(_to_shape),
    "bool?": _none_or(_to_bool),
    "dtype?": _none_or(_to_dtype),
    "str?": _none_or(_to_str),
    "axis": _axis,
    "raw": lambda v: v,
}


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
        ``int``, ``float``, ``bool``, ``shape``, ``str``, ``dtype``, ``axis``, ``floats``; a
        trailing ``?`` also allows ``None``.
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
