"""Storage-type inference over a symbol graph, for bound executors.

MXNet 1.9.1 infers every node's output storage type from its inputs' (the op's
``FInferStorageType``); a bound executor's outputs have those types. gluonjax runs
the graph on dense values and gives each output the storage type this pass infers,
with the same rules as the eager ``nd`` functions (``_ops.RULES``): each rule is
asked with probe arrays that carry a storage type but no values. Gradients: a
variable whose every consumer makes a row_sparse gradient for it (``Embedding``
with ``sparse_grad``, ``contrib.SparseEmbedding``, ``dot(csr, w)``) gets a row_sparse
gradient array from ``simple_bind``, as in MXNet.
"""

from __future__ import annotations

import jax.numpy as jnp

from ..._caches import PROCESS
from ..._ops.graph import topo
from ...base import MXNetError
from ..ndarray import NDArray
from ._array import BaseSparseNDArray, CSRNDArray, RowSparseNDArray, _Lazy

__all__ = ["output_stypes", "grad_stypes", "restype"]

CLASSES = {"row_sparse": RowSparseNDArray, "csr": CSRNDArray}


def _nothing():
    return None


class _Probe:
    """A probe's pattern is never computed: rules only pass it on."""

    __slots__ = ()

    def _pattern_ref(self):
        return _Lazy(_nothing)


class _CsrProbe(_Probe, CSRNDArray):
    __slots__ = ()


class _RspProbe(_Probe, RowSparseNDArray):
    __slots__ = ()


_PROBE_VALUE = None


def _probe(stype):
    global _PROBE_VALUE
    if _PROBE_VALUE is None:
        _PROBE_VALUE = jnp.zeros((1, 1), jnp.float32)
    if stype == "csr":
        return _CsrProbe(_PROBE_VALUE)
    if stype == "row_sparse":
        return _RspProbe(_PROBE_VALUE)
    return NDArray(_PROBE_VALUE)


def _node_stypes(node, in_stypes):
    """The storage types of ``node``'s outputs for inputs of ``in_stypes``."""
    from ._ops import _ALWAYS, RULES

    n_out = node.num_outputs
    name = node.op.name
    dense = all(s == "default" for s in in_stypes)
    if name not in RULES or (dense and name not in _ALWAYS):
        return ["default"] * n_out
    try:  # a refusal of sparse inputs is MXNet's error at bind time
        found = RULES[name]([_probe(s) for s in in_stypes], node.attr_dict())
    except MXNetError:
        if not dense:
            raise
        found = None  # an op for sparse inputs only, on dense values: its dense result
    if n_out != 1 or found is None:
        return ["default"] * n_out
    return [found[0]._stype]


def output_stypes(symbol, var_stypes):
    """The storage type of each output of ``symbol``.

    Parameters
    ----------
    symbol : Symbol
    var_stypes : dict of str to str
        The storage type of each variable (absent: 'default').

    Returns
    -------
    list of str
    """
    heads = symbol._outputs
    known = {}
    for node in topo(heads):
        if node.op is None:
            known[id(node)] = [var_stypes.get(node.name, "default")]
            continue
        ins = [known[id(src)][i] for src, i in node.inputs]
        known[id(node)] = _node_stypes(node, ins)
    return [known[id(n)][i] for n, i in heads]


def _sparse_grad_use(node, index, stype_of):
    """True when ``node`` gives its input ``index`` a row_sparse gradient."""
    name, attrs = node.op.name, node.attr_dict()
    if name == "Embedding" and index == 1:
        return bool(attrs.get("sparse_grad"))
    if name == "_contrib_SparseEmbedding" and index == 1:
        return True
    if name == "dot" and index == 1 and not attrs.get("transpose_b"):
        src, i = node.inputs[0]
        return stype_of(src, i) == "csr"
    return False


def grad_stypes(symbol, var_stypes):
    """``{variable name: 'row_sparse'}`` for the variables whose gradient MXNet stores as
    row_sparse (every use of them makes a row_sparse gradient); others are absent."""
    heads = symbol._outputs
    stypes = {}
    for node in topo(heads):
        if node.op is None:
            stypes[id(node)] = [var_stypes.get(node.name, "default")]
        else:
            ins = [stypes[id(src)][i] for src, i in node.inputs]
            stypes[id(node)] = _node_stypes(node, ins)
    uses = {}
    for node in topo(heads):
        for k, (src, _) in enumerate(node.inputs if node.op is not None else ()):
            if src.op is None:
                sparse = _sparse_grad_use(node, k, lambda s, i: stypes[id(s)][i])
                uses.setdefault(src.name, []).append(sparse)
    return {name: "row_sparse" for name, flags in uses.items() if flags and all(flags)}


def restype(arrays, stypes):
    """Give each NDArray of ``arrays`` the class of its storage type in ``stypes`` (its
    pattern is derived from its values when first read)."""
    for arr, st in zip(arrays, stypes, strict=False):
        cls = CLASSES.get(st, NDArray)
        if type(arr) is not cls:
            arr.__dict__.pop("_sp", None)
            arr.__class__ = cls
            if cls is not NDArray:
                PROCESS.sparse_types = (BaseSparseNDArray,)
    return arrays
