"""Operator registry and definitions (private; use ``gluonjax.nd`` / ``gluonjax.sym``)."""

from . import defs  # noqa: F401  (registers every op)
from .registry import Attr, Op, get, list_ops, register  # noqa: F401
