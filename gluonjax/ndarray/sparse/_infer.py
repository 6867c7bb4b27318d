"""Storage-type inference over a symbol graph, for bound executors.

MXNet 1.9.1 infers every node's output storage type from its inputs' (the op's
``FInferStorageType``); a bound executor's outputs have those types. gluonjax runs
the graph on dense values and gives each output the storage type this pass infers,
with the same rules as the eager ``nd`` functions (``_ops.RULES``). The rules see the
bound arrays for the variables and, for inner nodes, probes that carry a storage
type and the pattern the rule gave (or none). An output keeps the pattern its rule
gives when that is exact (the rule saw only bound arrays, or passed an input's
pattern on, as ``relu`` does); otherwise its pattern is its non-zeros.

Gradients: a variable whose every consumer makes a row_sparse gradient for it
(``Embedding`` with ``sparse_grad``, ``contrib.SparseEmbedding``, ``dot(csr, w)``)
gets a row_sparse gradient array from ``simple_bind``, as in MXNet.
"""

from __future__ import annotations

import jax.numpy as jnp

from ..._caches import PROCESS
from ..._ops.graph import topo
from ...base import MXNetError
from ..ndarray import NDArray
from ._array import BaseSparseNDArray, CSRNDArray, RowSparseNDArray, _Lazy

__all__ = ["infer", "grad_stypes", "restype"]

CLASSES = {"row_sparse": RowSparseNDArray, "csr": CSRNDArray}


def _unknown():
    raise AssertionError("an unknown pattern is never resolved")  # pragma: no cover


#: the pattern of a probe whose values only the running graph knows
UNKNOWN = _Lazy(_unknown)


class _Probe:
    """An inner node's result as a rule sees it: a storage type and a pattern."""

    __slots__ = ()

    def _pattern_ref(self):
        return self.__dict__["_p"]


class _CsrProbe(_Probe, CSRNDArray):
    __slots__ = ()


class _RspProbe(_Probe, RowSparseNDArray):
    __slots__ = ()


class _DenseProbe(_Probe, NDArray):
    __slots__ = ()


_PROBES = {"csr": _CsrProbe, "row_sparse": _RspProbe, "default": _DenseProbe}
_VALUE = []


def _probe(stype, pattern):
    if not _VALUE:
        _VALUE.append(jnp.zeros((1, 1), jnp.float32))
    p = _PROBES[stype](_VALUE[0])
    p.__dict__["_p"] = pattern
    return p


def _node(node, ins):
    """``[(stype, pattern)]`` of ``node``'s outputs for inputs ``ins`` (arrays or probes)."""
    from ._ops import _ALWAYS, RULES

    n_out, name = node.num_outputs, node.op.name
    dense = not any(isinstance(x, BaseSparseNDArray) for x in ins)
    if name not in RULES or (dense and name not in _ALWAYS):
        return [("default", None)] * n_out
    try:  # a refusal of sparse inputs is MXNet's error at bind time
        found = RULES[name](ins, node.attr_dict())
    except MXNetError:
        if not dense:
            raise
        found = None  # an op for sparse inputs only, on dense values: its dense result
    if n_out != 1 or found is None:
        return [("default", None)] * n_out
    cls, pattern = found
    if any(isinstance(x, _Probe) for x in ins):
        passed = [x._pattern_ref() for x in ins if isinstance(x, BaseSparseNDArray)]
        if not any(pattern is p for p in passed):
            pattern = UNKNOWN  # computed from a probe: only the values can tell
    return [(cls._stype, UNKNOWN if pattern is None else pattern)]


def infer(symbol, arrays):
    """The storage type and pattern of each output of ``symbol``.

    Parameters
    ----------
    symbol : Symbol
    arrays : dict of str to NDArray
        The arrays bound to the variables (absent ones count as dense).

    Returns
    -------
    list of (str, pattern)
        ``pattern`` is :data:`UNKNOWN` where the output's non-zeros give it.
    """
    known = {}
    for node in topo(symbol._outputs):
        if node.op is None:
            arr = arrays.get(node.name)
            known[id(node)] = [arr if arr is not None else _probe("default", None)]
            continue
        ins = [known[id(src)][i] for src, i in node.inputs]
        known[id(node)] = [_probe(st, p) for st, p in _node(node, ins)]
    out = []
    for n, i in symbol._outputs:
        x = known[id(n)][i]
        st = x._stype if isinstance(x, BaseSparseNDArray) else "default"
        out.append((st, x._pattern_ref() if st != "default" else None))
    return out


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
    known = {}
    for node in topo(symbol._outputs):
        if node.op is None:
            known[id(node)] = [_probe(var_stypes.get(node.name, "default"), UNKNOWN)]
        else:
            ins = [known[id(src)][i] for src, i in node.inputs]
            known[id(node)] = [_probe(st, p) for st, p in _node(node, ins)]
    uses = {}
    for node in topo(symbol._outputs):
        for k, (src, _) in enumerate(node.inputs if node.op is not None else ()):
            if src.op is None:
                sparse = _sparse_grad_use(node, k, lambda s, i: known[id(s)][i].stype)
                uses.setdefault(src.name, []).append(sparse)
    return {name: "row_sparse" for name, flags in uses.items() if flags and all(flags)}


def restype(arrays, found):
    """Give each NDArray of ``arrays`` the storage type and pattern of ``found`` (pairs
    from :func:`infer`; an UNKNOWN pattern is derived from the values when read)."""
    for arr, (st, pattern) in zip(arrays, found, strict=False):
        cls = CLASSES.get(st, NDArray)
        if type(arr) is not cls:
            arr.__dict__.pop("_sp", None)
            arr.__class__ = cls
        if cls is not NDArray:
            PROCESS.sparse_types = (BaseSparseNDArray,)
            if pattern is not UNKNOWN and pattern is not None:
                arr._keep(pattern)
            else:
                arr.__dict__.pop("_sp", None)
    return arrays
