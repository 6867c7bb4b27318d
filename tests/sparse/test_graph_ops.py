"""DGL's graph ops on CSR graphs (``ndarray/sparse/_graph.py``) against NumPy/SciPy
references: edge ids (id 0 included), adjacency, induced sub-graphs, neighbour sampling
(the invariants MXNet documents, not its random stream) and compaction."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import gluonjax as mx
from gluonjax.base import ArgumentTypeError, HostOnlyError, InvalidArgumentError

nd = mx.nd


def _graph(n=12, density=0.3, seed=0):
    """A random directed graph whose edge ids are 0..E-1 in CSR order (id 0 is stored)."""
    g = sp.random(n, n, density=density, format="csr", random_state=seed)
    g.sort_indices()
    g.data = np.arange(g.nnz, dtype=np.float32)
    return g, nd.sparse.csr_matrix((g.data, g.indices, g.indptr), shape=g.shape)


def _parts(csr):
    return csr.data.asnumpy(), csr.indices.asnumpy(), csr.indptr.asnumpy()


def test_edge_id_finds_stored_ids_including_zero():
    g, a = _graph()
    dense = np.full(g.shape, -1.0, np.float32)
    rows = np.repeat(np.arange(g.shape[0]), np.diff(g.indptr))
    dense[rows, g.indices] = g.data
    rng = np.random.RandomState(1)
    u = np.concatenate([[rows[0]], rng.randint(0, 12, 20)])  # the first edge has id 0
    v = np.concatenate([[g.indices[0]], rng.randint(0, 12, 20)])
    got = nd.contrib.edge_id(a, nd.array(u), nd.array(v)).asnumpy()
    np.testing.assert_array_equal(got, dense[u, v])
    assert got[0] == 0.0


def test_adjacency_has_one_at_every_stored_edge():
    g, a = _graph()
    adj = nd.contrib.dgl_adjacency(a)
    assert adj.stype == "csr" and adj.dtype == np.float32 and adj.shape == g.shape
    data, indices, indptr = _parts(adj)
    np.testing.assert_array_equal(indices, g.indices)
    np.testing.assert_array_equal(indptr, g.indptr)
    np.testing.assert_array_equal(data, np.ones(g.nnz, np.float32))


def test_subgraph_matches_scipy_submatrix():
    g, a = _graph(20, 0.25, seed=3)
    verts = np.array([1, 4, 5, 9, 13, 17])
    sub, mapping = nd.contrib.dgl_subgraph(a, nd.array(verts, dtype="int64"), return_mapping=True)
    shifted = g.copy()
    shifted.data = shifted.data + 1  # ids + 1: no stored zero in the reference
    want = shifted[verts][:, verts].toarray()
    data, indices, indptr = _parts(mapping)
    got = np.zeros_like(want)
    rows = np.repeat(np.arange(len(verts)), np.diff(indptr))
    got[rows, indices] = data + 1
    np.testing.assert_array_equal(got, want)
    new_data, new_indices, new_indptr = _parts(sub)
    np.testing.assert_array_equal(new_data, np.arange(len(data)))
    np.testing.assert_array_equal(new_indices, indices)
    np.testing.assert_array_equal(new_indptr, indptr)
    one = nd.contrib.dgl_subgraph(a, nd.array(verts, dtype="int64"), return_mapping=False)
    assert one.shape == (6, 6) and one.stype == "csr"


@pytest.mark.parametrize("uniform", [True, False])
@pytest.mark.parametrize("hops,k,cap", [(1, 2, 12), (2, 1, 6), (2, 3, 12)])
def test_neighbor_sampling_invariants(uniform, hops, k, cap):
    g, a = _graph(12, 0.4, seed=4)
    seeds = nd.array([0, 5], dtype="int64")
    prob = np.random.RandomState(0).uniform(0.1, 1.0, 12).astype(np.float32)
    if uniform:
        ids, sub, layer = nd.contrib.dgl_csr_neighbor_uniform_sample(
            a, seeds, num_hops=hops, num_neighbor=k, max_num_vertices=cap
        )
    else:
        ids, sub, sprob, layer = nd.contrib.dgl_csr_neighbor_non_uniform_sample(
            a, nd.array(prob), seeds, num_hops=hops, num_neighbor=k, max_num_vertices=cap
        )
    ids, layer = ids.asnumpy(), layer.asnumpy()
    n = int(ids[-1])
    verts = ids[:n]
    assert ids.shape == (cap + 1,) and layer.shape == (cap,) and sub.shape == (cap, 12)
    assert 2 <= n <= cap and np.all(np.diff(verts) > 0) and {0, 5} <= set(verts.tolist())
    assert np.all(layer[:n] <= hops) and layer[verts.tolist().index(0)] == 0
    if not uniform:
        np.testing.assert_array_equal(sprob.asnumpy()[:n], prob[verts])
    sub.check_format(full_check=True)
    data, indices, indptr = _parts(sub)
    assert np.all(indptr[n:] == indptr[n])
    rows_of = np.repeat(np.arange(12), np.diff(g.indptr))
    dense_ids = {(int(r), int(c)): e for r, c, e in zip(rows_of, g.indices, g.data)}
    for row in range(n):
        cols = indices[indptr[row] : indptr[row + 1]]
        assert len(cols) <= k
        for c, e in zip(cols, data[indptr[row] : indptr[row + 1]]):
            assert dense_ids[(int(verts[row]), int(c))] == e  # a real edge, with its id
    if (indptr[n] > 0) and set(indices.tolist()) <= set(verts.tolist()):
        compact = nd.contrib.dgl_graph_compact(sub, nd.array(ids), graph_sizes=n,
                                               return_mapping=False)  # fmt: skip
        c_data, c_indices, c_indptr = _parts(compact)
        assert compact.shape == (n, n)
        np.testing.assert_array_equal(c_indptr, indptr[: n + 1])
        np.testing.assert_array_equal(verts[c_indices], indices)
        np.testing.assert_array_equal(c_data, np.arange(len(c_indices)))


def test_sampling_follows_mx_random_seed():
    _, a = _graph(12, 0.5, seed=5)
    runs = []
    for _ in range(2):
        mx.random.seed(7)
        out = nd.contrib.dgl_csr_neighbor_uniform_sample(
            a, nd.array([0, 3], dtype="int64"), num_hops=2, num_neighbor=2, max_num_vertices=8
        )
        runs.append([o.asnumpy() for o in out])
    for x, y in zip(*runs, strict=True):
        np.testing.assert_array_equal(x, y)


def test_graph_ops_refuse_dense_and_unsorted_input():
    _, a = _graph()
    with pytest.raises(ArgumentTypeError, match="dgl_adjacency needs a CSRNDArray"):
        nd.contrib.dgl_adjacency(nd.ones((3, 3)))
    with pytest.raises(InvalidArgumentError, match="sorted"):
        nd.contrib.dgl_subgraph(a, nd.array([3, 1], dtype="int64"), return_mapping=False)


def test_graph_op_in_compiled_graph_says_to_run_eagerly():
    y = mx.sym.contrib.dgl_adjacency(mx.sym.var("g"))
    ex = y.bind(mx.cpu(), {"g": nd.ones((3, 3))})
    with pytest.raises(HostOnlyError, match="dgl_adjacency.*eagerly"):
        ex.forward()
