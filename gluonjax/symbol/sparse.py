"""``mx.sym.sparse``: the operators of ``mx.nd.sparse`` as symbol constructors.

A symbol graph computes dense values (see ``docs/sparse.md``); storage types of
variables (``var(..., stype='row_sparse')``) are kept as the
``__storage_type__`` attribute MXNet writes in symbol JSON.

Examples
--------
>>> import gluonjax as mx
>>> x = mx.sym.var('x', stype='csr'); w = mx.sym.var('w', stype='row_sparse')
>>> mx.sym.sparse.dot(x, w).list_arguments()
['x', 'w']
"""

from __future__ import annotations

from .. import symbol as _parent
from ..ndarray.sparse import OP_NAMES

__all__: list = []  # filled by _install

_ALIASES = {"retain": "_sparse_retain"}


def _install():
    for name in (*OP_NAMES, "cast_storage", "dot", "retain"):
        fn = getattr(_parent, _ALIASES.get(name, name), None)
        if fn is not None:
            globals()[name] = fn
            if name not in __all__:
                __all__.append(name)


_install()
