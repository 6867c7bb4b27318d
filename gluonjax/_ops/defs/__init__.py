"""Operator definitions, one module per family; importing registers them all."""

from . import elemwise, nn, reduce, shape, index, norm, conv, pool, output, random_ops, getitem  # noqa: F401
from . import reduce_sort, shape_slice, shape_dot, shape_create, index_seq  # noqa: F401,E402
