"""Operator definitions, one module per family; importing registers them all."""

from . import elemwise, nn, reduce, shape, index, norm, conv, output, random_ops, getitem  # noqa: F401
