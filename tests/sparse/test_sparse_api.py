"""The sparse NDArray API: creation, copies, indexing, errors, autograd (MXNet 1.9.1's rules).

Values are checked against NumPy (and scipy where MXNet accepts scipy input);
the storage types and error classes are MXNet 1.9.1's (see the probes recorded in
``tests/fixtures/sparse`` for the op-by-op storage types).
"""

from __future__ import annotations

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, nd
from gluonjax.ndarray import sparse

M = np.array([[0, 1.5, 0], [2, 0, 0], [0, 0, 0], [0, 0, 3]], np.float32)


def _csr_parts(a):
    nz = a != 0
    return a[nz], np.nonzero(nz)[1], np.r_[0, np.cumsum(nz.sum(1))]


def test_csr_matrix_forms():
    data, indices, indptr = _csr_parts(M)
    a = sparse.csr_matrix((data, indices, indptr), shape=M.shape)
    assert isinstance(a, sparse.CSRNDArray) and a.stype == "csr" and a.shape == M.shape
    np.testing.assert_array_equal(a.asnumpy(), M)
    np.testing.assert_array_equal(a.indptr.asnumpy(), indptr)
    np.testing.assert_array_equal(a.indices.asnumpy(), indices)
    np.testing.assert_array_equal(a.data.asnumpy(), data)
    assert sparse.csr_matrix((data, indices, indptr)).shape == (4, 3)  # inferred
    np.testing.assert_array_equal(sparse.csr_matrix(M.tolist()).asnumpy(), M)
    empty = sparse.csr_matrix((2, 5))
    assert empty.shape == (2, 5) and empty.indptr.asnumpy().tolist() == [0, 0, 0]
    # coordinate form: duplicates are summed
    coo = sparse.csr_matrix(([1.0, 2.0, 4.0], ([0, 1, 0], [2, 0, 2])), shape=(2, 3))
    np.testing.assert_array_equal(coo.asnumpy(), [[0, 0, 5], [2, 0, 0]])
    assert coo.indices.asnumpy().tolist() == [2, 0]
    assert coo.dtype == np.float32


def test_csr_matrix_from_scipy():
    spsp = pytest.importorskip("scipy.sparse")
    s = spsp.csr_matrix(M)
    a = nd.array(s)
    assert a.stype == "csr"
    np.testing.assert_array_equal(a.asnumpy(), M)
    back = a.asscipy()
    assert back.format == "csr"
    np.testing.assert_array_equal(back.toarray(), M)
    np.testing.assert_array_equal(back.indptr, s.indptr)
    assert sparse.csr_matrix(spsp.coo_matrix(M)).stype == "csr"


def test_row_sparse_array_forms():
    a = sparse.row_sparse_array(([[1.0, 2.0], [3.0, 4.0]], [1, 4]), shape=(6, 2))
    want = np.zeros((6, 2), np.float32)
    want[[1, 4]] = [[1, 2], [3, 4]]
    np.testing.assert_array_equal(a.asnumpy(), want)
    assert a.indices.asnumpy().tolist() == [1, 4]
    assert sparse.row_sparse_array(([[1.0, 2.0]], [2])).shape == (3, 2)
    assert sparse.row_sparse_array((2, 3, 4)).shape == (2, 3, 4)
    assert sparse.row_sparse_array((5, 2)).indices.asnumpy().tolist() == []
    assert sparse.row_sparse_array(a).indices.asnumpy().tolist() == [1, 4]


@pytest.mark.parametrize(
    "make",
    [
        lambda: sparse.csr_matrix(M, shape=(2, 2)),  # shape mismatch
        lambda: sparse.csr_matrix(nd.ones((2, 2)).tostype("row_sparse")),
        lambda: sparse.row_sparse_array(nd.ones((2, 2)).tostype("csr")),
        lambda: sparse.array(nd.ones((2, 2))),
        lambda: sparse.zeros("coo", (2, 2)),
        lambda: nd.ones((2, 2, 2)).tostype("csr"),
        lambda: nd.ones((2, 2)).tostype("csr").tostype("row_sparse"),
        lambda: nd.ones((2, 2)).tostype("row_sparse").tostype("csr"),
    ],
)
def test_invalid_input_raises_value_error(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize(
    "make",
    [
        lambda: sparse.row_sparse_array(([[1.0]], [5]), shape=(4, 1)),  # out of range
        lambda: sparse.row_sparse_array(([[1.0], [2.0]], [1, 1]), shape=(4, 1)),  # duplicate
        lambda: sparse.csr_matrix(([1.0], [0], [0, 2]), shape=(1, 3)),  # indptr != nnz
        lambda: sparse.csr_matrix(([1.0, 2.0], [0, 0], [0, 2]), shape=(1, 3)),  # duplicate
    ],
)
def test_invalid_definition_builds_but_has_no_value(make):
    # MXNet builds these and only check_format() fails; gluonjax has no dense value for
    # them, so reading one raises instead of computing with a guess
    a = make()
    assert a.stype in ("csr", "row_sparse") and a.shape in ((4, 1), (1, 3))
    assert repr(a).startswith("\n<CSRNDArray") or repr(a).startswith("\n<RowSparseNDArray")
    with pytest.raises(mx.MXNetError):
        a.check_format()
    with pytest.raises(ValueError, match="invalid definition"):
        a.asnumpy()
    with pytest.raises(ValueError, match="invalid definition"):
        a + 1
    a[:] = np.ones(a.shape, np.float32)  # a whole new value makes it valid
    a.check_format()
    np.testing.assert_array_equal(a.asnumpy(), np.ones(a.shape))


def test_unsorted_definition_has_a_value():
    # MXNet's ops accept indices out of order (the value is defined); check_format()
    # refuses them until the array gets a new value
    r = sparse.row_sparse_array(([[1.0], [2.0]], [3, 1]), shape=(4, 1))
    np.testing.assert_array_equal(r.asnumpy().ravel(), [0, 2, 0, 1])
    c = sparse.csr_matrix(([1.0, 2.0], [2, 0], [0, 2]), shape=(1, 3))
    np.testing.assert_array_equal(c.asnumpy(), [[2, 0, 1]])
    for a in (r, c):
        a.check_format(full_check=False)
        with pytest.raises(mx.MXNetError):
            a.check_format()
    c[:] = nd.array([[2.0, 0, 1]])
    c.check_format()


def test_retain_rejects_unknown_arguments():
    x = nd.ones((2, 2)).tostype("row_sparse")
    with pytest.raises(mx.MXNetError, match="invalid_arg"):
        sparse.retain(x, nd.array([0]), invalid_arg=1)
    with pytest.raises(mx.MXNetError, match="indices"):
        sparse.retain(x)


def test_logical_context_is_kept():
    for a in (
        sparse.zeros("csr", (2, 3), ctx=mx.cpu(1)),
        sparse.row_sparse_array((2, 3), ctx=mx.cpu(1)),
        sparse.csr_matrix(nd.ones((2, 3)).tostype("csr"), ctx=mx.cpu(1)),
    ):
        assert a.context == mx.cpu(1) and a.copy().context == mx.cpu(1)


def test_zeros_and_empty_with_stype():
    for make in (nd.zeros, nd.empty):
        r = make((3, 2), stype="row_sparse")
        c = make((3, 2), stype="csr", dtype="float16")
        assert r.stype == "row_sparse" and c.stype == "csr" and c.dtype == np.float16
        assert r.data.shape == (0, 2) and c.data.shape == (0,)
        assert (r.asnumpy() == 0).all() and (c.asnumpy() == 0).all()
    assert nd.zeros((2,), stype="default").stype == "default"
    assert sparse.empty("csr", (1, 2)).stype == "csr"


def test_copies_keep_storage_and_pattern():
    # row 0 is stored although zero: copies keep the pattern, not just the values
    a = sparse.row_sparse_array(([[0.0, 0.0], [1.0, 2.0]], [0, 2]), shape=(3, 2))
    for b in (a.copy(), a.detach(), a.astype("float16"), a.copyto(mx.cpu()), nd.array(a)):
        assert b.stype == "row_sparse" and b.indices.asnumpy().tolist() == [0, 2]
        np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())
    assert a.astype("float16").dtype == np.float16
    assert a.astype("float32", copy=False) is a
    assert a.as_in_context(mx.cpu()) is a
    dense = nd.zeros((3, 2))
    assert a.copyto(dense) is dense and dense.stype == "default"
    np.testing.assert_array_equal(dense.asnumpy(), a.asnumpy())
    target = sparse.zeros("row_sparse", (3, 2))
    a.copyto(target)
    assert target.indices.asnumpy().tolist() == [0, 2]
    with pytest.raises(TypeError):
        a.copyto(sparse.zeros("csr", (3, 2)))


def test_pickle_and_deepcopy_keep_the_pattern():
    import copy
    import pickle

    a = sparse.row_sparse_array(([[0.0, 0.0], [1.0, 2.0]], [0, 2]), shape=(3, 2))
    for b in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        assert b.stype == "row_sparse"
        np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())
        assert b.indices.asnumpy().tolist() == [0, 2]


def test_csr_indexing():
    c = nd.array(M).tostype("csr")
    for key, rows in ((1, [1]), (-1, [3]), (slice(1, 3), [1, 2]), (slice(None, 2), [0, 1])):
        got = c[key]
        assert got.stype == "csr"
        np.testing.assert_array_equal(got.asnumpy(), M[rows])
    assert c[:] is c
    np.testing.assert_array_equal(c[1:3, :].asnumpy(), M[1:3])
    assert c[1:3].indptr.asnumpy().tolist() == [0, 1, 1]
    with pytest.raises(ValueError):
        c[::2]
    with pytest.raises(ValueError):
        c[1, 2]
    with pytest.raises(IndexError):
        c[4]


def test_row_sparse_indexing():
    r = nd.array(M).tostype("row_sparse")
    assert r[:] is r
    with pytest.raises(mx.MXNetError):
        r[1]


def test_setitem():
    c = sparse.zeros("csr", (4, 3))
    c[:] = nd.array(M)
    assert c.stype == "csr" and c.indices.asnumpy().tolist() == [1, 0, 2]
    c[:] = np.ones((4, 3), np.float32)
    assert (c.asnumpy() == 1).all()
    with pytest.raises(ValueError):
        c[:] = 3.0
    with pytest.raises(ValueError):
        c[1:2] = nd.ones((1, 3))
    r = sparse.zeros("row_sparse", (2, 3))
    r[:] = 5
    assert (r.asnumpy() == 5).all() and r.indices.asnumpy().tolist() == [0, 1]


def test_unsupported_methods():
    r = nd.array(M).tostype("row_sparse")
    with pytest.raises(sparse.NotSupportedForSparseNDArray):
        r.reshape((3, 4))
    with pytest.raises(NotImplementedError):
        r.size
    with pytest.raises(NotImplementedError):
        r.indices = nd.array([0])
    assert repr(r) == "\n<RowSparseNDArray 4x3 @cpu(0)>"
    assert str(nd.array(M).tostype("csr")) == "\n<CSRNDArray 4x3 @cpu(0)>"


def test_check_format():
    nd.array(M).tostype("csr").check_format()
    nd.array(M).tostype("row_sparse").check_format()


def test_in_place_ops_keep_the_class():
    r = nd.array(M).tostype("row_sparse")
    r *= 2
    r += nd.array(M).tostype("row_sparse")
    assert r.stype == "row_sparse"
    np.testing.assert_array_equal(r.asnumpy(), 3 * M)
    assert r.indices.asnumpy().tolist() == [0, 1, 3]
    r[:] = nd.zeros((4, 3))  # the pattern follows the new value
    assert r.indices.asnumpy().tolist() == []


def test_operators_follow_mxnet_storage_rules():
    r, d = nd.array(M).tostype("row_sparse"), nd.array(M + 1)
    assert (r * 2).stype == "row_sparse" and (2 * r).stype == "row_sparse"
    assert (r / 2).stype == "row_sparse" and (-r).stype == "row_sparse"
    assert (r + 1).stype == "default" and (1 - r).stype == "default"
    assert (r * d).stype == "row_sparse" and (d * r).stype == "default"  # as MXNet
    assert (r + r).stype == "row_sparse" and (r + d).stype == "default"
    np.testing.assert_allclose((d * r).asnumpy(), (M + 1) * M)
    assert abs(r).stype == "row_sparse" and r.sqrt().stype == "row_sparse"
    assert nd.sqrt(r).stype == "row_sparse" and nd.exp(r).stype == "default"
    assert nd.sparse.multiply(r, d).stype == "row_sparse"
    np.testing.assert_allclose(nd.sparse.divide(r, 2).asnumpy(), M / 2)
    np.testing.assert_allclose(nd.sparse.subtract(d, r).asnumpy(), 1 + 0 * M)


def test_retain_keeps_requested_rows():
    x = nd.array([[1, 1], [0, 0], [2, 2]]).tostype("row_sparse")
    y = x.retain(nd.array([2, 1, 1]))
    assert y.indices.asnumpy().tolist() == [1, 2]  # sorted, unique (MXNet keeps the input)
    np.testing.assert_array_equal(y.asnumpy(), [[0, 0], [0, 0], [2, 2]])
    with pytest.raises(ValueError):
        sparse.retain(nd.ones((2, 2)), nd.array([0]))


def test_dot_transpose_gives_row_sparse():
    c = nd.array(M).tostype("csr")
    w = np.arange(8, dtype=np.float32).reshape(4, 2)
    y = sparse.dot(c, nd.array(w), transpose_a=True)
    assert y.stype == "row_sparse" and y.indices.asnumpy().tolist() == [0, 1, 2]
    np.testing.assert_allclose(y.asnumpy(), M.T @ w)
    z = nd.dot(nd.array(w.T), c)
    assert z.stype == "csr"
    np.testing.assert_allclose(z.asnumpy(), w.T @ M)


def test_dot_of_a_csr_with_a_known_pattern():
    # made from its parts, the csr's pattern is known: nd.dot runs a BCOO product
    rng = np.random.RandomState(3)
    a = rng.randn(6, 5).astype(np.float32) * (rng.rand(6, 5) < 0.4)
    c = sparse.csr_matrix(_csr_parts(a), shape=a.shape)
    w, wt = rng.randn(5, 3).astype(np.float32), rng.randn(6, 3).astype(np.float32)
    np.testing.assert_allclose(nd.dot(c, nd.array(w)).asnumpy(), a @ w, rtol=1e-5, atol=1e-6)
    y = sparse.dot(c, nd.array(wt), transpose_a=True)
    assert y.stype == "row_sparse"
    assert y.indices.asnumpy().tolist() == np.unique(np.nonzero(a)[1]).tolist()
    np.testing.assert_allclose(y.asnumpy(), a.T @ wt, rtol=1e-5, atol=1e-6)
    wn = nd.array(w)
    wn.attach_grad(stype="row_sparse")
    with autograd.record():
        z = nd.dot(c, wn) * 2
    z.backward()
    assert wn.grad.stype == "row_sparse"
    np.testing.assert_allclose(wn.grad.asnumpy(), 2 * a.T @ np.ones((6, 3)), rtol=1e-5)


def test_autograd_through_sparse_inputs():
    x_np = M + 0.5 * (M == 0)
    for stype in ("default", "row_sparse", "csr"):
        x = nd.array(x_np).tostype(stype)
        x.attach_grad()
        assert x.grad.stype == stype
        with autograd.record():
            y = x * x + x / 2
        y.backward()
        np.testing.assert_allclose(x.grad.asnumpy(), 2 * x_np + 0.5, rtol=1e-6)
        assert x.grad.stype == stype


def test_attach_grad_with_out_grad_of_the_same_stype():
    for stype in ("default", "row_sparse", "csr"):
        x = nd.zeros((3, 3)).tostype(stype)
        assert x.grad is None
        x.attach_grad()
        with autograd.record():
            y = x * 2
        y.backward(out_grad=nd.ones_like(y).tostype(stype))
        assert (x.grad.asnumpy() == 2).all()


def test_cast_storage_gradient_is_identity():
    x = nd.array(M)
    x.attach_grad()
    with autograd.record():
        y = x.tostype("csr") * 3
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full(M.shape, 3.0))


def test_unstored_negative_zero_reads_as_zero():
    x = nd.array([[-0.0, 1.0], [-0.0, -0.0]]).tostype("csr")
    assert not np.signbit(x.asnumpy()).any()


def test_split_and_load_keeps_csr():
    c = nd.array(np.eye(4, dtype=np.float32)).tostype("csr")
    parts = mx.gluon.utils.split_and_load(c, [mx.cpu(0), mx.cpu(0)])
    assert all(isinstance(p, sparse.CSRNDArray) for p in parts)
    np.testing.assert_array_equal(parts[1].asnumpy(), np.eye(4)[2:])


def test_clip_global_norm_scales_sparse_arrays():
    x1 = nd.ones((3, 3)).tostype("row_sparse")
    x2 = nd.ones((4, 4)).tostype("row_sparse")
    norm = mx.gluon.utils.clip_global_norm([x1, x2], 1.0)
    assert norm == 5.0 and x1.stype == "row_sparse"
    np.testing.assert_allclose(x1.asnumpy(), np.ones((3, 3)) / 5, rtol=1e-6)


def test_storage_ops_in_the_registry():
    """The registry ops behind the sparse API compute dense values, in nd and in sym."""
    x = np.array([[1.0, 0.0], [0.0, 0.0], [2.0, 3.0]], np.float32)
    assert nd.cast_storage(nd.array(x), stype="csr").stype == "csr"
    kept = nd._sparse_retain(nd.array(x).tostype("row_sparse"), nd.array([2, 0]))
    np.testing.assert_array_equal(kept.asnumpy(), [[1, 0], [0, 0], [2, 3]])
    data, (rows, cols) = x[x != 0], np.nonzero(x)
    idx = np.stack([rows, cols], 1).astype(np.int32)
    rhs = np.arange(4, dtype=np.float32).reshape(2, 2)
    y = nd._sparse_csr_dot(
        nd.array(data), nd.array(idx, dtype="int32"), nd.array(rhs), shape=(3, 2)
    )
    np.testing.assert_allclose(y.asnumpy(), x @ rhs)
    v = mx.sym.var("v")
    g = mx.sym.sparse.retain(mx.sym.cast_storage(v, stype="row_sparse"), mx.sym.var("i"))
    out = g.eval(v=nd.array(x), i=nd.array([0]))[0]
    np.testing.assert_array_equal(out.asnumpy(), [[1, 0], [0, 0], [0, 0]])
