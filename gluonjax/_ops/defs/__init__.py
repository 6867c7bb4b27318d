"""Operator definitions, one module per family; importing registers them all."""

from . import (  # noqa: F401  # noqa: F401,E402
    conv,
    elemwise,
    getitem,
    image,
    index,
    index_seq,
    nn,
    norm,
    output,
    pool,
    random_ops,
    reduce,
    reduce_sort,
    shape,
    shape_create,
    shape_dot,
    shape_slice,
)
