"""DGL's graph ops (``nd.contrib.edge_id``, ``dgl_adjacency``, ``dgl_subgraph``,
``dgl_csr_neighbor_uniform_sample``, ``dgl_csr_neighbor_non_uniform_sample``,
``dgl_graph_compact``): host algorithms on a CSR graph's stored pattern.

A graph is a ``CSRNDArray`` whose stored entries are its edges and whose stored
values are edge ids (an id may be 0). The registry entries (``_ops/defs/dgl.py``)
give the names and attributes; these functions are what ``nd`` runs. Integer
outputs are int32 (MXNet: int64; gluonjax runs jax with 64-bit types off).
"""

from __future__ import annotations

import numpy as np

from ... import _rng
from ..._ops import registry as _reg
from ...base import ArgumentTypeError
from ...base import InvalidArgumentError as GraphError
from .._creation import array as _array
from ..ndarray import NDArray
from ._array import CSRNDArray
from ._create import csr_matrix

__all__ = ["FUNCTIONS"]


def _graph(x, op):
    if not isinstance(x, CSRNDArray):
        raise ArgumentTypeError(
            f"contrib.{op} needs a CSRNDArray graph (mx.nd.sparse.csr_matrix(...) or "
            f".tostype('csr')), got {type(x).__name__}"
        )
    idx = x.indices.asnumpy().astype(np.int64)
    ptr = x.indptr.asnumpy().astype(np.int64)
    return x.data.asnumpy(), idx, ptr


def _ids(x):
    return (x.asnumpy() if isinstance(x, NDArray) else np.asarray(x)).astype(np.int64).ravel()


def _csr(data, indices, indptr, shape, dtype):
    return csr_matrix((np.asarray(data, dtype), indices, indptr), shape=shape, dtype=dtype)


def _attrs(name, kwargs):
    op = _reg.get(name)
    return op.attr_dict(op.parse_attrs(kwargs)[0])


def edge_id(data, u, v, out=None, name=None):
    """``data[u[i], v[i]]`` where the graph stores that edge, else -1 (data's dtype)."""
    vals, idx, ptr = _graph(data, "edge_id")
    uu, vv = _ids(u), _ids(v)
    if uu.shape != vv.shape:
        raise GraphError(f"contrib.edge_id: u {uu.shape} and v {vv.shape} must match")
    n = data.shape[0]
    if uu.size and (uu.min() < 0 or uu.max() >= n):
        raise GraphError(f"contrib.edge_id: a row in u is outside [0, {n}) for graph {data.shape}")
    res = np.full(uu.shape, -1, vals.dtype)
    for i, (a, b) in enumerate(zip(uu, vv)):
        row = idx[ptr[a] : ptr[a + 1]]
        hit = np.flatnonzero(row == b)
        if hit.size:
            res[i] = vals[ptr[a] + hit[0]]
    return _array(res, dtype=data.dtype)


def dgl_adjacency(data, out=None, name=None):
    """The graph's adjacency matrix: a float32 CSR with 1.0 at every stored edge."""
    vals, idx, ptr = _graph(data, "dgl_adjacency")
    return _csr(np.ones(len(idx)), idx, ptr, data.shape, np.float32)


def dgl_subgraph(graph, *varrays, return_mapping, num_args=None, out=None, name=None):
    """For each sorted vertex list, the sub-graph it induces, vertices renumbered by their
    position in the list; edges get new ids 0..E-1 in CSR order. With ``return_mapping``,
    one more CSR per list holds each edge's id in ``graph``."""
    vals, idx, ptr = _graph(graph, "dgl_subgraph")
    n = graph.shape[0]
    subs, maps = [], []
    for varr in varrays:
        vids = _ids(varr)
        if np.any(np.diff(vids) < 0):
            raise GraphError("contrib.dgl_subgraph: the input vertex list has to be sorted")
        if vids.size and (vids.min() < 0 or vids.max() >= n):
            raise GraphError(f"contrib.dgl_subgraph: a vertex id is outside the {n} vertices")
        new_id = {int(v): i for i, v in enumerate(vids)}
        cols, eids, rows = [], [], [0]
        for v in vids:
            for j in range(ptr[v], ptr[v + 1]):
                k = new_id.get(int(idx[j]))
                if k is not None:
                    cols.append(k)
                    eids.append(vals[j])
            rows.append(len(cols))
        shape = (len(vids), len(vids))
        subs.append(_csr(np.arange(len(cols)), cols, rows, shape, graph.dtype))
        maps.append(_csr(eids, cols, rows, shape, graph.dtype))
    if bool(return_mapping):
        return subs + maps
    return subs if len(subs) > 1 else subs[0]


def _choose(count, k, probs, rng):
    """Sorted positions of ``k`` of ``count`` neighbours, without replacement (all when
    ``count <= k``), uniformly or in proportion to ``probs``."""
    if count <= k:
        return np.arange(count)
    if probs is None:
        return np.sort(rng.choice(count, size=k, replace=False))
    p = np.clip(np.asarray(probs, np.float64), 0.0, None)
    live = np.flatnonzero(p > 0)
    if len(live) <= k:  # every neighbour with weight, then some without
        dead = np.flatnonzero(p <= 0)
        return np.sort(np.concatenate([live, rng.choice(dead, k - len(live), replace=False)]))
    return np.sort(rng.choice(count, size=k, replace=False, p=p / p.sum()))


def _sample(graph, seeds, probability, attrs, rng):
    """One sub-graph by breadth-first sampling (MXNet's ``SampleSubgraph``)."""
    vals, idx, ptr = _graph(graph, "dgl_csr_neighbor_sample")
    hops, k, cap = attrs["num_hops"], attrs["num_neighbor"], attrs["max_num_vertices"]
    seeds = _ids(seeds)
    if len(seeds) > cap:
        raise GraphError(f"contrib.dgl sampling: {len(seeds)} seeds exceed max_num_vertices={cap}")
    layer, order = {}, []
    for s in seeds:
        if int(s) not in layer:
            layer[int(s)] = 0
            order.append(int(s))
    picked = {}  # vertex -> (neighbour ids, edge ids)
    at = 0
    while at < len(order) and len(layer) < cap:
        v = order[at]
        at += 1
        if layer[v] >= hops:
            continue
        lo, hi = ptr[v], ptr[v + 1]
        probs = None if probability is None else probability[idx[lo:hi]]
        pos = lo + _choose(hi - lo, k, probs, rng)
        picked[v] = (idx[pos], vals[pos])
        for u in idx[pos]:
            if len(layer) >= cap:
                break
            if int(u) not in layer:
                layer[int(u)] = layer[v] + 1
                order.append(int(u))
    verts = np.asarray(sorted(layer), np.int64)
    nv = len(verts)
    ids = np.zeros(cap + 1, np.int64)
    ids[:nv], ids[cap] = verts, nv
    layers = np.zeros(cap, np.int64)
    layers[:nv] = [layer[int(v)] for v in verts]
    cols, eids, rows = [], [], [0]
    for v in verts:
        c, e = picked.get(int(v), ((), ()))
        cols.extend(c)
        eids.extend(e)
        rows.append(len(cols))
    rows += [len(cols)] * (cap - nv)
    sub = _csr(eids, cols, rows, (cap, graph.shape[1]), graph.dtype)
    prob = None
    if probability is not None:
        prob = np.zeros(cap, np.float32)
        prob[:nv] = probability[verts]
    return _array(ids, dtype=np.int64), sub, prob, _array(layers, dtype=np.int64)


def _neighbor_sample(name, graph, probability, seeds, kwargs):
    n_fixed = 1 if probability is None else 2
    kwargs = dict(kwargs)
    kwargs.setdefault("num_args", n_fixed + len(seeds))
    kwargs.pop("out", None), kwargs.pop("name", None)
    attrs = _attrs(name, kwargs)
    if attrs["num_args"] != n_fixed + len(seeds):
        raise GraphError(
            f"contrib.{name[9:]}: num_args={attrs['num_args']} but {n_fixed + len(seeds)} inputs"
        )
    rng = _rng.host_rng()
    prob = None if probability is None else np.asarray(probability.asnumpy(), np.float32)
    parts = [_sample(graph, s, prob, attrs, rng) for s in seeds]
    ids, subs, probs, layers = (list(p) for p in zip(*parts))
    return ids + subs + ([] if probability is None else [_array(p) for p in probs]) + layers


def dgl_csr_neighbor_uniform_sample(csr_matrix, *seed_arrays, **kwargs):
    """Sub-graphs sampled around each seed array: per seed array, the sampled vertex ids
    (``max_num_vertices + 1``, the last entry their count), the sampled edges (a CSR of
    ``max_num_vertices`` rows, original vertex ids and edge ids) and each vertex's hop."""
    return _neighbor_sample(
        "_contrib_dgl_csr_neighbor_uniform_sample", csr_matrix, None, seed_arrays, kwargs
    )


def dgl_csr_neighbor_non_uniform_sample(csr_matrix, probability, *seed_arrays, **kwargs):
    """As :func:`dgl_csr_neighbor_uniform_sample`, neighbours drawn without replacement in
    proportion to ``probability`` (one weight per vertex); adds each sampled vertex's
    probability as an output set (before the hops)."""
    return _neighbor_sample(
        "_contrib_dgl_csr_neighbor_non_uniform_sample", csr_matrix, probability, seed_arrays,
        kwargs,
    )  # fmt: skip


def dgl_graph_compact(*args, **kwargs):
    """Renumber sampled sub-graphs: inputs are the sampled CSRs then their vertex-id arrays
    (as the samplers return them); output ``i`` is ``graph_sizes[i]`` square, columns
    mapped to positions in the vertex list, edge ids 0..E-1."""
    kwargs.pop("out", None), kwargs.pop("name", None)
    kwargs.setdefault("num_args", len(args))
    gs = kwargs.get("graph_sizes")
    if isinstance(gs, (np.ndarray, NDArray)):
        kwargs["graph_sizes"] = tuple(int(x) for x in _ids(gs))
    elif isinstance(gs, (int, np.integer)):
        kwargs["graph_sizes"] = (int(gs),)
    attrs = _attrs("_contrib_dgl_graph_compact", kwargs)
    n = len(args) // 2
    sizes = attrs["graph_sizes"]
    if len(args) != 2 * n or len(sizes) != n:
        raise GraphError(
            f"contrib.dgl_graph_compact needs one vertex array and one graph size per graph, "
            f"got {len(args)} inputs and graph_sizes={sizes}"
        )
    outs, maps = [], []
    for csr, vids, size in zip(args[:n], args[n:], sizes):
        vals, idx, ptr = _graph(csr, "dgl_graph_compact")
        ids = _ids(vids)
        if ids[-1] != size:
            raise GraphError(
                f"contrib.dgl_graph_compact: the vertex array holds {ids[-1]} vertices, "
                f"graph_sizes says {size}"
            )
        where = {int(v): i for i, v in enumerate(ids[:size])}
        try:
            cols = np.asarray([where[int(c)] for c in idx], np.int64)
        except KeyError as err:
            raise GraphError(
                f"contrib.dgl_graph_compact: vertex {err.args[0]} is not in the vertex list"
            ) from None
        rows = ptr[: size + 1]
        outs.append(_csr(np.arange(len(cols)), cols, rows, (size, size), csr.dtype))
        maps.append(_csr(vals, cols, rows, (size, size), csr.dtype))
    if attrs["return_mapping"]:
        return outs + maps
    return outs if len(outs) > 1 else outs[0]


FUNCTIONS = {
    "_contrib_edge_id": edge_id,
    "_contrib_dgl_adjacency": dgl_adjacency,
    "_contrib_dgl_subgraph": dgl_subgraph,
    "_contrib_dgl_csr_neighbor_uniform_sample": dgl_csr_neighbor_uniform_sample,
    "_contrib_dgl_csr_neighbor_non_uniform_sample": dgl_csr_neighbor_non_uniform_sample,
    "_contrib_dgl_graph_compact": dgl_graph_compact,
}
